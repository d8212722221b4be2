"""Every runner family's host probe from evidence (jaxci.analysis.host_speed): carried within a CPU model, else
predicted through sourced single-thread scores; labelled, banded, and traceable to the published probes it used."""

from __future__ import annotations

import pytest

from jaxci.analysis import host_speed
from jaxci.analysis.evidence import HOST_PYTHON, HOST_RATIO, Evidence, without
from jaxci.analysis.primitives import Band
from jaxci.catalogue import Figure, Machine, load_catalogue, same_hardware
from jaxci.evidence.inputs import reference


def _machine(name, cpu, gpu="none", **scores):
    figs = {"cpu_model": Figure(cpu, "a source"), "gpu_model": Figure(gpu, "a source")}
    figs.update({k: Figure(v, "a source") for k, v in scores.items()})
    return Machine(name, "", "github", "x", "cpu", "never", False, figs)


def _probe(where, seconds, figure):
    return Evidence(where, "cpu", HOST_PYTHON, Band.of(seconds), "a table", n=10_000_000, figures=frozenset({figure}))


CAT = {
    "slow": _machine("slow", "Old CPU", cpu_single_thread_score=1000, cpu_geekbench6_single=500),
    "slow.big": _machine("slow.big", "Old CPU", cpu_single_thread_score=1100),
    "fast": _machine("fast", "New CPU", cpu_single_thread_score=2000, cpu_geekbench6_single=1000),
    "fast.big": _machine("fast.big", "New CPU", cpu_single_thread_score=1900),
    "mystery": _machine("mystery", None),
}


def test_same_cpu_model_carries_the_probe_and_another_model_is_predicted():
    got = {e.where: e for e in host_speed.derive([_probe("slow", 1.0, "p")], CAT)}
    assert set(got) == {"slow", "slow.big", "fast", "fast.big"}   # no CPU model: nothing derived, never a guess
    assert got["slow"] == _probe("slow", 1.0, "p")   # the only probe: no other source to spread it
    assert got["slow.big"].kind == "published" and got["slow.big"].value.mid == 1.0
    fast, big = got["fast"], got["fast.big"]
    assert fast.kind == "predicted" and fast.value == big.value   # one CPU model, one probe, whatever the size
    assert fast.value.low <= fast.value.mid <= fast.value.high < 1.0
    assert fast.value.mid == pytest.approx(0.5, rel=0.06)          # twice the single-thread score: half the time
    assert fast.figures == {"p"} and "cpu_single_thread_score" in fast.source
    assert without(host_speed.derive([_probe("slow", 1.0, "p")], CAT), "p") == []   # leave-one-out drops them


def test_a_family_with_its_own_probe_keeps_its_middle_with_a_band_over_every_source():
    own = [_probe("slow", 1.0, "p"), _probe("fast", 0.4, "q")]
    got = {e.where: e for e in host_speed.derive(own, CAT)}
    assert set(got) == {"slow", "fast", "slow.big", "fast.big"}
    slow, fast = got["slow"], got["fast"]
    assert slow.kind == fast.kind == "published" and (slow.value.mid, fast.value.mid) == (1.0, 0.4)
    # fast's 0.4 s x the slowest pair of scores (1900 over 1100): every pair of instances is in the band
    assert slow.value.low == pytest.approx(0.4 * 1900 / 1100) and slow.value.high == 1.0
    assert fast.value.low == 0.4 and fast.value.high == pytest.approx(1.0 * 1100 / 1900)
    assert got["slow.big"].value == slow.value and slow.figures == {"p"}   # carried with its band
    assert host_speed.derive([], CAT) == []   # transfer-only: no published probe, nothing predicted


def test_a_published_ratio_of_lecture_work_widens_both_runners_bands_either_way_round():
    ratio = Evidence("slow", "cpu", HOST_RATIO, Band(1.5, 1.2, 3.0), "a lecture series", key="fast",
                     figures=frozenset({"r"}))
    got = {e.where: e for e in host_speed.derive([_probe("slow", 1.0, "p"), _probe("fast", 0.4, "q"), ratio], CAT)}
    assert got["slow"].value.low == pytest.approx(0.4 * 1.2) and got["slow"].value.high == pytest.approx(1.2)
    assert got["fast"].value.low == pytest.approx(1.0 / 3.0) and got["fast"].value.high == pytest.approx(1.0 / 1.2)
    assert "published lecture ratio" in got["slow"].source and "a table" in got["slow"].source


def test_every_catalogue_runner_family_has_a_probe_and_same_hardware_the_same_one():
    cat = load_catalogue()
    probes = {e.where: e for e in reference() if e.term == HOST_PYTHON}
    assert set(cat) <= set(probes), set(cat) - set(probes)
    for a in cat:
        for b in cat:
            if host_speed.cpu_model(cat[a]) == host_speed.cpu_model(cat[b]):
                assert probes[a].value == probes[b].value, (a, b)
    assert same_hardware("g4dn.xlarge", "g4dn.2xlarge") and same_hardware("g6.xlarge", "g6.2xlarge")
    assert not same_hardware("g6.xlarge", "g6e.xlarge")   # same CPU, another GPU
    c7i, g4dn = probes["c7i.2xlarge"], probes["g4dn.2xlarge"]
    assert c7i.kind == "predicted" and c7i.value.mid < g4dn.value.mid   # Sapphire Rapids over Cascade Lake

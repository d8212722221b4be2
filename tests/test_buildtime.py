"""The build-time estimate on a synthetic repository with known shares and known per-family timings."""

import json
import math

import pytest

from jaxci.analysis import buildtime as bt
from jaxci.catalogue import Figure, Machine, catalogue_defaults, load_catalogue


def machine(name, *, runner="runs-on", price=None, vcpu=None, cpu=None, gpu="none"):
    figures = {"price_per_hour": Figure(price, "test") if price is not None else Figure(None, reason="no price"),
               "vcpu": Figure(vcpu, "test") if vcpu else Figure(None, reason="unknown"),
               "cpu_model": Figure(cpu, "test") if cpu else Figure(None, reason="unknown"),
               "gpu_model": Figure(gpu, "test")}
    return Machine(name=name, description="", runner=runner, image="x", backend="cpu", spot="never", bench=True,
                   figures=figures)


CATALOGUE = {m.name: m for m in [
    machine("cpuA", runner="github", price=0.0, vcpu=4, cpu="X"),       # the baseline
    machine("cpuB", price=0.36, vcpu=8, cpu="Y"),                       # measured
    machine("cpuB-big", price=0.714, vcpu=16, cpu="Y"),                 # predicted from cpuB (same CPU)
    machine("gpuT", price=0.752, vcpu=8, cpu="Z", gpu="T4"),            # measured, with a GPU
    machine("gpuT-small", price=0.526, vcpu=2, cpu="W", gpu="T4"),      # predicted: CPU from A, GPU from gpuT
    machine("gpuL", price=0.98, vcpu=8, cpu="V", gpu="L4"),             # GPU never measured
]}
DEFAULTS = {"job_overhead_minutes": Figure(6, "test"), "billing_minimum_seconds": Figure(60, "test"),
            "github_billing_increment_seconds": Figure(60, "test")}

PY = ("host.PurePython.time_run", {"kernel": "int_sum", "n": 100_000})
LINALG = "host.NumpyLinalg.time_run"
DENSE = "dense.Dense.time_warm"


def rec(machine, bench, params, value, status="ok"):
    return {"machine": machine, "benchmark": bench, "params": dict(params), "value": value, "status": status}


def linalg(machine, all_s, one_s):
    p = {"op": "matmul", "n": 1000, "dtype": "float64"}
    return [rec(machine, LINALG, dict(p, threads="all"), all_s), rec(machine, LINALG, dict(p, threads="1"), one_s)]


def dense(machine, device, value):
    return rec(machine, DENSE, {"op": "matmul", "n": 256, "dtype": "float32", "device": device}, value)


RECORDS = [
    rec("cpuA", *PY, 1.0), *linalg("cpuA", 1.0, 2.0), dense("cpuA", "cpu", 0.2),
    rec("cpuB", *PY, 0.5), *linalg("cpuB", 0.25, 1.0), dense("cpuB", "cpu", 0.1),
    rec("cpuB", "host.Threads.track_blas_threads", {"threads": "all"}, 8),
    rec("gpuT", *PY, 1.5), *linalg("gpuT", 0.5, 1.0), dense("gpuT", "cpu", 0.4), dense("gpuT", "gpu", 0.02),
    rec("cpuA", DENSE, {"op": "matmul", "n": 256, "dtype": "float32", "device": "gpu"}, None, status="skipped"),
    # noise that must be ignored: a failed record, a skipped one, a first-call track, a cold start
    rec("cpuB", "host.PurePython.time_run", {"kernel": "dict_count", "n": 100_000}, None, status="failed"),
    rec("cpuA", "host.PurePython.time_run", {"kernel": "dict_count", "n": 100_000}, None, status="skipped"),
    rec("cpuB", "host.NumbaFirstCall.track_first_call_s", {"kernel": "loop", "dtype": "float64"}, 9.0),
    rec("cpuB", "dense.DenseColdStart.timeraw_first_call", {"op": "matmul", "dtype": "float32", "device": "cpu"}, 9.0),
]

REPO = bt.repository_from_dict({"name": "synthetic", "lectures": 10, "baseline": "cpuA", "build_seconds": 1000,
                                "shares": {"python": 0.4, "numpy": 0.3, "jax_cpu": 0.1, "jax_gpu": 0.1},
                                "source": "test"})


@pytest.fixture(scope="module")
def rows():
    return {e.family: e for e in bt.estimate_build(REPO, RECORDS, CATALOGUE, DEFAULTS)}


def test_baseline_is_the_build_time(rows):
    a = rows["cpuA"]
    assert a.label == bt.BASELINE and a.build_s == 1000 and a.per_lecture_s == 100
    assert a.billed_s == 1380  # github: (360 + 1000) s rounded up to whole minutes
    assert a.dollars == 0.0


def test_measured_cpu_family(rows):
    b = rows["cpuB"]
    assert b.label == bt.MEASURED
    assert {c: f.value for c, f in b.factors.items()} == pytest.approx(
        {"python": 0.5, "numpy": 0.25, "jax_cpu": 0.5, "jax_gpu": 0.5})
    assert "no GPU" in b.factors["jax_gpu"].basis
    # 1000 x (0.4 x 0.5 + 0.3 x 0.25 + 0.1 x 0.5 + 0.1 x 0.5 + other 0.1 x python 0.5)
    assert b.build_s == pytest.approx(425.0)
    assert b.dollars == pytest.approx((360 + 425.0) / 3600 * 0.36)


def test_measured_gpu_family(rows):
    t = rows["gpuT"]
    assert t.label == bt.MEASURED
    assert t.factors["jax_gpu"].value == pytest.approx(0.1)  # 0.02 s on its GPU / 0.2 s on A's CPU
    assert t.factors["jax_cpu"].value == pytest.approx(2.0)
    assert t.build_s == pytest.approx(1000 * (0.4 * 1.5 + 0.3 * 0.5 + 0.1 * 2.0 + 0.1 * 0.1 + 0.1 * 1.5))


def test_same_cpu_model_predicted_with_amdahl(rows):
    big = rows["cpuB-big"]
    assert big.label == bt.PREDICTED
    assert all(f.label == bt.PREDICTED and "cpuB" in f.basis for f in big.factors.values())
    # cpuB: 1.0 s at 1 thread, 0.25 s at 8 threads -> serial 1/7; at 16 threads 1/7 + 6/7/16
    numpy = 1 / 7 + 6 / 7 / 16
    assert big.factors["numpy"].value == pytest.approx(numpy)
    assert big.factors["python"].value == pytest.approx(0.5)
    assert big.build_s == pytest.approx(1000 * (0.4 * 0.5 + 0.3 * numpy + 0.1 * 0.5 + 0.1 * 0.5 + 0.1 * 0.5))
    assert big.dollars == pytest.approx((360 + big.build_s) / 3600 * 0.714)


def test_unmeasured_cpu_predicted_from_baseline_with_same_gpu(rows):
    s = rows["gpuT-small"]
    assert s.label == bt.PREDICTED
    assert "assumed" in s.factors["python"].basis and s.factors["python"].value == 1.0
    # A: 2.0 s at 1 thread, 1.0 s at 4 (catalogue vcpu) -> serial 1/3; at 2 threads 2 x (1/3 + 2/3/2)
    assert s.factors["numpy"].value == pytest.approx(4 / 3)
    assert s.factors["jax_gpu"].value == pytest.approx(0.1) and "gpuT" in s.factors["jax_gpu"].basis
    assert s.build_s == pytest.approx(1000 * (0.4 + 0.3 * 4 / 3 + 0.1 + 0.1 * 0.1 + 0.1))


def test_unmeasured_gpu_is_not_measured(rows):
    g = rows["gpuL"]
    assert g.label == bt.NOT_MEASURED and g.build_s is None and g.dollars is None
    assert "L4" in g.note


def test_local_machine_row_has_no_price():
    records = RECORDS + [rec("mybox", *PY, 2.0), *linalg("mybox", 2.0, 2.0), dense("mybox", "cpu", 0.4)]
    rows = {e.family: e for e in bt.estimate_build(REPO, records, CATALOGUE, DEFAULTS)}
    assert rows["mybox"].label == bt.MEASURED and rows["mybox"].build_s == pytest.approx(2000)
    assert rows["mybox"].dollars is None and "no price" in rows["mybox"].note


def test_geometric_mean_over_kernels():
    p2 = {"kernel": "float_sum", "n": 100_000}
    records = RECORDS + [rec("cpuA", PY[0], p2, 1.0), rec("cpuB", PY[0], p2, 2.0)]
    rows = {e.family: e for e in bt.estimate_build(REPO, records, CATALOGUE, DEFAULTS)}
    assert rows["cpuB"].factors["python"].value == pytest.approx(math.sqrt(0.5 * 2.0))
    assert rows["cpuB"].factors["python"].kernels == 2


def test_works_on_results_records():
    from jaxci.results.records import Record

    def r(machine, value):
        return Record(machine=machine, benchmark=PY[0], params=PY[1], status="ok", value=value, unit="seconds",
                      commit="c", date="d", jax_version="v", jax_source="s", env_name="e")

    repo = bt.repository_from_dict({"lectures": 1, "baseline": "cpuA", "build_seconds": 10,
                                    "shares": {"python": 1.0}})
    rows = {e.family: e for e in bt.estimate_build(repo, [r("cpuA", 1.0), r("cpuB", 3.0)], CATALOGUE, DEFAULTS)}
    assert rows["cpuB"].build_s == pytest.approx(30.0)


def test_render_markdown_labels(rows):
    text = bt.render_markdown(list(rows.values()), REPO)
    assert "| cpuB | measured | 7.1 |" in text
    assert "| gpuL | not measured | not measured |" in text
    assert "predicted from cpuB (same CPU model: Y)" in text
    assert "0.50 m" in text and "p" in text


def test_seconds_form_and_files(tmp_path):
    repo = bt.repository_from_dict({"lectures": 2, "baseline": "cpuA", "seconds": {"python": 30, "numpy": 10}})
    assert repo.build_s == 40 and repo.shares == {"python": 0.75, "numpy": 0.25} and repo.other == 0
    (tmp_path / "r.json").write_text(json.dumps({"lectures": 3, "baseline": "cpuA", "build_seconds": 90,
                                                 "shares": {"jax_gpu": 0.5}}))
    (tmp_path / "r.toml").write_text('lectures = 3\nbaseline = "cpuA"\nbuild_seconds = 90\n[shares]\njax_gpu = 0.5\n')
    assert bt.load_repository(tmp_path / "r.json").shares == bt.load_repository(tmp_path / "r.toml").shares


@pytest.mark.parametrize("data, message", [
    ({"lectures": 1, "baseline": "a", "build_seconds": 1, "shares": {"fortran": 0.1}}, "shares.fortran: unknown"),
    ({"lectures": 1, "baseline": "a", "build_seconds": 1, "shares": {"python": 0.8, "numpy": 0.3}}, "more than"),
    ({"lectures": 1, "baseline": "a", "shares": {"python": 0.5}}, "missing key 'build_seconds'"),
    ({"lectures": 0, "baseline": "a", "build_seconds": 1, "shares": {}}, "lectures must be >= 1"),
    ({"lectures": 1, "baseline": "a", "build_seconds": 1, "shares": {"python": -1}}, "shares.python must be"),
    ({"lectures": 1, "baseline": "a", "build_seconds": 1}, "exactly one of"),
])
def test_bad_descriptions_are_named(data, message):
    with pytest.raises(bt.BuildInputError, match=message):
        bt.repository_from_dict(data, "repo.json")


def test_bad_file_names_the_path(tmp_path):
    bad = tmp_path / "audit.json"
    bad.write_text("{not json")
    with pytest.raises(bt.BuildInputError, match="audit.json: not valid JSON"):
        bt.load_repository(bad)
    with pytest.raises(bt.BuildInputError, match="missing.toml: cannot read"):
        bt.load_repository(tmp_path / "missing.toml")


def test_real_catalogue_without_results_is_not_measured():
    """With no results, only the baseline row has a number: nothing is guessed for a catalogue family."""
    repo = bt.repository_from_dict({"lectures": 100, "baseline": "ubuntu-latest", "build_seconds": 6000,
                                    "shares": {"python": 0.5, "numpy": 0.5}})
    rows = bt.estimate_build(repo, [], load_catalogue(), catalogue_defaults())
    assert {e.family for e in rows if e.build_s is not None} == {"ubuntu-latest"}
    assert all(e.label == bt.NOT_MEASURED for e in rows if e.family != "ubuntu-latest")


def test_thread_speedups():
    rows = bt.thread_speedups(RECORDS)
    b = [r for r in rows if r["machine"] == "cpuB"]
    assert len(b) == 1 and b[0]["speedup"] == pytest.approx(4.0) and b[0]["threads"] == 8
    assert b[0]["params"] == {"op": "matmul", "n": 1000, "dtype": "float64"}


def test_amdahl_is_anchored_and_clamped():
    assert bt._amdahl_time(1.0, 0.25, 8, 8)[0] == pytest.approx(0.25)
    assert bt._amdahl_time(1.0, 0.25, 8, 16)[0] == pytest.approx(1 / 7 + 6 / 7 / 16)
    # threads slowed it down (busy cores): no model for that, the all-threads time is kept
    assert bt._amdahl_time(1.0, 3.0, 2, 16) == (3.0, 1.0)
    # better than linear: serial 0, scaled as 1/p from the all-threads time
    assert bt._amdahl_time(1.0, 0.4, 2, 8) == (pytest.approx(0.1), 0.0)

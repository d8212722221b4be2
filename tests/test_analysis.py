"""Pure analysis functions on hand-made records whose answers are known by construction."""

import dataclasses
import json
import math

import pytest

from jaxci.analysis import coldstart, concurrency, finite_or_none, penalty, safe_ratio, slowest_cells, work
from jaxci.analysis import crossover as cx
from jaxci.catalogue import Figure
from jaxci.policy import cost
from jaxci.results.records import Record, ResultSet


def rec(benchmark, value, machine="m", status="ok", unit="seconds", q25=None, q75=None, scale="unknown", **params):
    return Record(machine=machine, benchmark=benchmark, params=params, status=status,
                  value=value if status == "ok" else None, unit=unit, commit="c" * 40, date="2026-01-01T00:00:00Z",
                  jax_version="0.10.2", jax_source="test", env_name="e", q25=q25, q75=q75, scale=scale)


def test_crossing_is_exact_for_power_laws():
    # cpu = 1e-6 n, gpu = 1e-4 n^0.5 meet at n = (1e-4 / 1e-6)^2 = 1e4, between the measured 5e3 and 2e4
    pts = [(n, 1e-6 * n, 1e-4 * n**0.5) for n in (1000, 5000, 20000, 100000)]
    kind, n, crossings = cx.find_crossover(pts)
    assert kind == cx.CROSSING
    assert n == pytest.approx(1e4, rel=1e-9)
    assert crossings == [(pytest.approx(1e4, rel=1e-9), "gpu becomes faster")]


def test_log_interpolation_between_two_points():
    # d = ln(gpu/cpu) goes from ln 2 at n=100 to ln 0.5 at n=10000: symmetric, so n* = 1000 (the log midpoint)
    kind, n, _ = cx.find_crossover([(100, 1.0, 2.0), (10000, 1.0, 0.5)])
    assert kind == cx.CROSSING and n == pytest.approx(1000)


@pytest.mark.parametrize("pts,kind", [
    ([(10, 1.0, 2.0), (100, 1.0, 3.0)], cx.NONE_IN_RANGE),
    ([(10, 2.0, 1.0), (100, 3.0, 1.0)], cx.GPU_ALWAYS),
    ([(10, 1.0, 2.0)], cx.NOT_MEASURED),
    ([], cx.NOT_MEASURED),
    ([(10, 1.0, 2.0), (100, 1.0, 0.5), (1000, 1.0, 2.0)], cx.GPU_BAND),  # faster only in between
    ([(10, 1.0, 1.0), (100, 2.0, 2.0)], cx.WITHIN_NOISE),
])
def test_crossover_kinds(pts, kind):
    assert cx.find_crossover(pts)[0] == kind


def test_break_even_is_the_last_crossing_into_gpu_faster():
    pts = [(10, 1.0, 0.5), (100, 1.0, 2.0), (1000, 1.0, 0.5)]
    kind, n, crossings = cx.find_crossover(pts)
    assert kind == cx.CROSSING and len(crossings) == 2 and n == pytest.approx(crossings[-1][0]) and 100 < n < 1000


def test_crossovers_same_machine_and_across_machines():
    records = []
    for n in (100, 1000, 10000):
        records += [rec("k.K.time_warm", 1e-6 * n, machine="gpu-box", n=n, dtype="float32", device="cpu"),
                    rec("k.K.time_warm", 1e-4 * n**0.5, machine="gpu-box", n=n, dtype="float32", device="gpu"),
                    rec("k.K.time_warm", 2e-6 * n, machine="cpu-box", n=n, dtype="float32", device="cpu"),
                    rec("k.K.time_warm", None, machine="cpu-box", status="skipped", n=n, dtype="float32", device="gpu")]
    out = {(c.cpu_machine, c.gpu_machine): c for c in cx.crossovers(records, cpu_only_machines=["cpu-box"])}
    same = out[("gpu-box", "gpu-box")]
    # 1e-6 n = 1e-4 sqrt(n) at n = 1e4: the largest measured size, where d = 0 (not yet faster): none in range
    assert same.kind == cx.NONE_IN_RANGE
    across = out[("cpu-box", "gpu-box")]
    # 2e-6 n = 1e-4 sqrt(n) at n = 2500, between 1000 and 10000
    assert across.kind == cx.CROSSING and across.n == pytest.approx(2500, rel=1e-9)
    assert [p[0] for p in across.points] == [100, 1000, 10000]
    assert out[("cpu-box", "cpu-box")].kind == cx.NOT_MEASURED  # no gpu line on the CPU-only box


def test_failed_cells_are_not_points():
    records = [rec("k.K.time_warm", 1.0, n=10, dtype="float32", device="cpu"),
               rec("k.K.time_warm", 2.0, n=100, dtype="float32", device="cpu"),
               rec("k.K.time_warm", 0.5, n=10, dtype="float32", device="gpu"),
               rec("k.K.time_warm", None, status="failed", n=100, dtype="float32", device="gpu")]
    (c,) = cx.crossovers(records)
    assert c.kind == cx.NOT_MEASURED and "gpu at 1" in c.note


def test_fp64_ratio_per_kernel_device_machine():
    records = [rec("k.K.time_warm", t, n=n, dtype=d, device="gpu", op="matmul")
               for n in (10, 100) for d, t in (("float32", 1.0 * n), ("float64", 32.0 * n))]
    records.append(rec("k.K.time_warm", 5.0, n=100, dtype="float64", device="cpu", op="matmul"))  # no float32 partner
    ratios = penalty.fp64_ratios(records)
    assert [r.ratio for r in ratios] == [pytest.approx(32.0)] * 2
    (s,) = penalty.summarize(ratios)
    assert (s.ratio == pytest.approx(32.0) and s.at["n"] == 100 and s.device == "gpu"
            and s.kernel == "k.K.time_warm op=matmul")


def test_fp64_ratio_of_a_suite_without_device_is_host():
    records = [rec("host.NumpySort.time_run", t, n=10, dtype=d) for d, t in (("float32", 1.0), ("float64", 3.0))]
    (r,) = penalty.fp64_ratios(records)
    assert r.device == "host" and r.ratio == pytest.approx(3.0)


def test_work_formulas_match_the_kernels():
    pytest.importorskip("jax")
    from benchmarks.kernels import dense, elementwise

    for op in ("matmul", "solve", "cholesky"):
        for n in (64, 1000):
            assert work.dense_flops(op, n) == pytest.approx(dense.flops(op, n))
    for dtype in ("float32", "float64"):
        assert work.elementwise_bytes(10_000, dtype) == elementwise.bytes_moved(10_000, dtype)


def test_concurrency_safe_n_stops_at_first_death():
    recs = []
    for n, died in ((1, 0), (2, 0), (4, 1), (8, 0)):
        recs.append(rec("concurrency.Concurrency.track_workers_died", float(died), unit="workers",
                        n_workers=n, policy="default", device="gpu"))
    recs.append(rec("concurrency.Concurrency.track_workers_died", None, status="failed", unit="workers",
                    n_workers=1, policy="fraction", device="gpu"))
    for n in (1, 2):   # a policy left out of the run (JAXCI_POLICIES): n/a everywhere, never "died at N = 1"
        recs.append(rec("concurrency.Concurrency.track_workers_died", None, status="skipped", unit="workers",
                        n_workers=n, policy="platform", device="gpu"))
    cells = concurrency.grid(recs)
    assert {c.n_workers: c.status for c in cells if c.policy == "default"} == {1: "ok", 2: "ok", 4: "1 died", 8: "ok"}
    safe = concurrency.safe_n(cells)
    assert safe[("m", "gpu", "default")] == 2 and safe[("m", "gpu", "fraction")] is None
    assert ("m", "gpu", "platform") not in safe


def test_family_cost_arithmetic():
    billing = {"billing_minimum_seconds": Figure(60, "t"), "github_billing_increment_seconds": Figure(60, "t")}
    row = cost.FamilyCost("f", False, 3.6, "measured", suites={"dense": 30.0, "loops": 10.0}, overhead_s=10.0,
                          defaults=billing)
    assert row.suite_dollars() == {"dense": pytest.approx(0.03), "loops": pytest.approx(0.01)}
    assert row.job_seconds == 60.0 and row.job_dollars == pytest.approx(0.06)  # 50 s billed as the 60 s minimum
    hosted = cost.FamilyCost("h", False, 3.6, "measured", suites={"dense": 70.0}, overhead_s=10.0,
                             runner="github", defaults=billing)
    assert hosted.job_seconds == 120.0  # GitHub rounds 80 s up to whole minutes
    row.predicted_job_dollars = 0.09
    assert row.error == pytest.approx(0.5)
    assert cost.FamilyCost("g", True, None, "not predicted").job_dollars is None


def test_cost_scale_is_the_recorded_one_not_inferred_from_skips():
    """A full-scale run skips cpu cases too (1-chain NUTS with a parallel method, memory policies
    on cpu): the label comes from the recorded scale, never from skips."""
    full = [rec("k.K.time_warm", 1.0, n=1, dtype="float32", device="cpu", scale="full"),
            rec("k.K.time_warm", None, status="skipped", n=9, dtype="float32", device="cpu", scale="full")]
    assert cost.recorded_scale(full, "m") == "full"
    ci = [dataclasses.replace(r, scale="ci") for r in full]
    assert cost.recorded_scale(ci, "m") == "ci"
    assert cost.recorded_scale([rec("k.K.time_warm", 1.0, n=1)], "m") == "unrecorded"
    assert cost.recorded_scale(full + [rec("k.K.time_warm", 1.0, n=2)], "m") == "mixed: full, unrecorded"


def test_latest_keeps_scales_apart():
    """A newer CI-scale run never replaces a full-scale result of the same params."""
    full = rec("nuts.Nuts.track_wall_s", 100.0, model="x", scale="full")
    newer_ci = dataclasses.replace(full, value=1.0, date="2026-06-01T00:00:00Z", scale="ci")
    rs = ResultSet(records=[full, newer_ci])
    assert [r.value for r in rs.latest()] == [100.0]
    assert [r.value for r in rs.latest(scale="ci")] == [1.0]
    newer_full = dataclasses.replace(full, value=90.0, date="2026-07-01T00:00:00Z")
    assert [r.value for r in ResultSet(records=[full, newer_ci, newer_full]).latest()] == [90.0]


def test_device_ratio_of_unsized_timings():
    records = [rec("notebooks.Notebook.time_notebook", t, notebook="intro", device=d)
               for d, t in (("cpu", 2.0), ("gpu", 20.0))]
    records.append(rec("notebooks.Notebook.time_notebook", 1.0, notebook="other", device="cpu"))  # no gpu partner
    records += [rec("dispatch.Transfer.time_transfer", t, direction="d2h", megabytes=100, device=d)  # a copy, not
                for d, t in (("cpu", 1e-4), ("gpu", 6e-2))]                                            # a device choice
    (d,) = cx.device_ratios(records)
    assert d.ratio == pytest.approx(10.0) and d.params == (("notebook", "intro"),)


def test_gpu_faster_only_in_the_middle_is_a_band_with_both_edges():
    # d = ln(gpu/cpu) = ln 2, ln 0.5, ln 2: symmetric on a log scale, so the GPU is faster between the
    # log midpoints: sqrt(10 * 100) and sqrt(100 * 1000)
    found = cx.find_crossover([(10, 1.0, 2.0), (100, 1.0, 0.5), (1000, 1.0, 2.0)])
    assert found.kind == cx.GPU_BAND and found.n is None
    assert [x for x, _ in found.crossings] == [pytest.approx(10 ** 1.5), pytest.approx(10 ** 2.5)]
    assert found.bands == [(pytest.approx(10 ** 1.5), pytest.approx(10 ** 2.5))]
    text = cx.describe(found.kind, found.n, found.crossings, found.bands, [(10, 1.0, 2.0)])
    assert text.startswith("GPU faster between n ≈ 32 and n ≈ 316")


def test_gpu_faster_at_small_sizes_only_is_a_band_from_the_smallest():
    found = cx.find_crossover([(10, 1.0, 0.5), (1000, 1.0, 2.0)])
    assert found.kind == cx.GPU_BAND and found.bands == [(None, pytest.approx(100))]
    assert "up to n ≈ 100" in cx.describe(found.kind, found.n, found.crossings, found.bands, [])


def test_every_crossing_is_listed_in_the_answer():
    found = cx.find_crossover([(10, 1.0, 0.5), (100, 1.0, 2.0), (1000, 1.0, 0.5)])
    assert found.kind == cx.CROSSING and len(found.crossings) == 2
    text = cx.describe(found.kind, found.n, found.crossings, found.bands, [])
    assert text.count("n ≈") == 3 and "cpu becomes faster" in text and "gpu becomes faster" in text


def test_a_one_percent_wobble_inside_the_quartiles_is_a_tie_not_three_crossings():
    # equal lines whose medians wobble by 1% while each quartile range is +-5%: no side anywhere
    wobble = [1.01, 0.99, 1.01, 0.99]
    pts = [cx.SizePoint(n, 1.0, w, (0.95, 1.05), (0.95 * w, 1.05 * w)) for n, w in zip((10, 100, 1000, 10000), wobble)]
    found = cx.find_crossover(pts)
    assert found.kind == cx.WITHIN_NOISE and found.crossings == [] and found.n is None
    # the same medians without quartiles are not ties: the medians alone decide (three crossings)
    assert len(cx.find_crossover([(p.n, p.cpu, p.gpu) for p in pts]).crossings) == 3


def test_ties_widen_a_crossing_but_do_not_move_it_to_the_tie():
    pts = [cx.SizePoint(10, 1.0, 2.0, (0.99, 1.01), (1.98, 2.02)),
           cx.SizePoint(100, 1.0, 1.02, (0.95, 1.05), (0.97, 1.07)),   # overlapping: a tie
           cx.SizePoint(1000, 1.0, 0.5, (0.99, 1.01), (0.49, 0.51))]
    found = cx.find_crossover(pts)
    assert found.kind == cx.CROSSING and found.n == pytest.approx(100)  # log midpoint of 10 and 1000
    assert [side for _, side in found.sides] == [cx.CPU_FASTER, cx.TIE, cx.GPU_FASTER]


def test_crossovers_read_the_recorded_quartiles():
    records = []
    for n, g in ((10, 1.01), (100, 0.99), (1000, 1.01)):
        records += [rec("k.K.time_warm", 1.0, q25=0.9, q75=1.1, n=n, dtype="float32", device="cpu"),
                    rec("k.K.time_warm", g, q25=g - 0.1, q75=g + 0.1, n=n, dtype="float32", device="gpu")]
    (c,) = cx.crossovers(records)
    assert c.kind == cx.WITHIN_NOISE and c.answer() == cx.WITHIN_NOISE


@pytest.mark.parametrize("cpu,gpu,cpu_iqr,gpu_iqr,want", [
    (1.0, 1.01, (0.9, 1.1), (0.95, 1.05), cx.TIE),
    (1.0, 2.0, (0.9, 1.1), (1.9, 2.1), cx.CPU_FASTER),
    (2.0, 1.0, None, None, cx.GPU_FASTER),
    (1.0, 1.0, None, None, cx.TIE),
])
def test_verdict_uses_the_quartile_margin(cpu, gpu, cpu_iqr, gpu_iqr, want):
    assert cx.verdict(cpu, gpu, cpu_iqr, gpu_iqr) == want


def test_device_ratio_verdict_within_noise():
    records = [rec("notebooks.Notebook.time_notebook", t, q25=t * 0.9, q75=t * 1.1, notebook="a", device=d)
               for d, t in (("cpu", 10.0), ("gpu", 10.2))]
    (d,) = cx.device_ratios(records)
    assert d.ratio == pytest.approx(1.02) and d.verdict == cx.TIE


def test_zero_and_inf_times_have_no_ratio_and_do_not_crash():
    records = [rec("k.K.time_warm", t, n=10, dtype=d, device="cpu") for d, t in (("float32", 0.0), ("float64", 1.0))]
    records += [rec("k.K.time_warm", t, n=20, dtype=d, device="cpu")
                for d, t in (("float32", math.inf), ("float64", math.inf))]
    records += [rec("k.K.time_warm", t, n=30, dtype=d, device="cpu") for d, t in (("float32", 1.0), ("float64", 4.0))]
    ratios = penalty.fp64_ratios(records)
    assert [r.ratio for r in sorted(ratios, key=lambda r: r.n)] == [None, None, 4.0]
    (s,) = penalty.summarize(ratios)
    assert s.ratio == 4.0 and s.count == 1
    assert safe_ratio(1.0, 0.0) is None and safe_ratio(math.inf, math.inf) is None and safe_ratio(3.0, 2.0) == 1.5
    d = cx.DeviceRatio("m", "b", (), 0.0, 1.0, "p")
    assert d.ratio is None


def test_finite_or_none_makes_strict_json():
    data = finite_or_none({"a": [math.nan, math.inf, -math.inf, 1.5], "b": {"c": (2, math.nan)}})
    assert data == {"a": [None, None, None, 1.5], "b": {"c": [2, None]}}
    json.loads(json.dumps(data, allow_nan=False))


def test_compile_share_is_none_where_the_stages_exceed_the_first_call():
    def records(first, trace, lower, backend):
        out = [rec("dense.DenseColdStart.timeraw_first_call", first, op="matmul", dtype="float32", device="cpu")]
        out += [rec(f"dense.DenseCompile.track_{s}_s", v, op="matmul", dtype="float32", device="cpu")
                for s, v in (("trace", trace), ("lower", lower), ("backend", backend))]
        return out

    (ok,) = coldstart.compile_shares(records(1.0, 0.1, 0.1, 0.3))
    assert ok.share == pytest.approx(0.5)
    (over,) = coldstart.compile_shares(records(1.0, 0.3, 0.3, 0.76))  # 1.36 s of stages: the 136% row
    assert over.share is None and "not comparable" in over.note and "1.36" in over.note


def _notebook_records(machine="m", nuts_whole=None, split_compile=4.9):
    nb = "notebooks.Notebook.time_notebook"
    out = [rec(nb, 2.0, machine=machine, notebook="grid_scan", device="cpu"),
           rec(nb, None, machine=machine, status="skipped", notebook="grid_scan", device="gpu"),
           rec("notebooks.NotebookSplit.track_compile_s", split_compile, machine=machine, notebook="nuts_f64",
               device="cpu")]
    if nuts_whole is None:
        out.append(rec(nb, None, machine=machine, status="skipped", notebook="nuts_f64", device="cpu"))
    else:
        out.append(rec(nb, nuts_whole, machine=machine, notebook="nuts_f64", device="cpu"))
    return out


def test_timeout_ignores_compile_only_tracks_and_names_the_unmeasured_notebook():
    basis = slowest_cells.timeout_basis(_notebook_records())
    # the compile-only 4.9 s is not a cell: the basis is the 2.0 s whole notebook, and nuts_f64 is named
    assert basis.seconds == 2.0 and basis.what == "whole notebook"
    assert not hasattr(basis, "timeout_s")  # fixture times are evidence: jaxci.policy.timeouts sizes timeouts
    assert basis.not_measured == ["notebooks.Notebook.time_notebook notebook=nuts_f64"]
    assert "not measured for notebooks.Notebook.time_notebook notebook=nuts_f64" in basis.answer()


def test_timeout_from_the_slowest_family():
    recs = _notebook_records("fast", nuts_whole=30.0) + _notebook_records("slow", nuts_whole=300.0)
    basis = slowest_cells.timeout_basis(recs)
    assert basis.machine == "slow" and basis.seconds == 300.0 and basis.not_measured == []


def test_timeout_not_measured_without_whole_times():
    recs = [rec("notebooks.NotebookSplit.track_compile_s", 4.9, notebook="nuts_f64", device="cpu")]
    basis = slowest_cells.timeout_basis(recs)
    assert basis.seconds is None and basis.answer().startswith("not measured")

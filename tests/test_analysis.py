"""Pure analysis functions on hand-made records whose answers are known by construction."""

import pytest

from jaxci.analysis import crossover as cx
from jaxci.analysis import concurrency, cost, penalty, work
from jaxci.results import Record


def rec(benchmark, value, machine="m", status="ok", unit="seconds", **params):
    return Record(machine=machine, benchmark=benchmark, params=params, status=status,
                  value=value if status == "ok" else None, unit=unit, commit="c" * 40, date="2026-01-01T00:00:00Z",
                  jax_version="0.10.2", jax_source="test", env_name="e")


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
    ([(10, 1.0, 2.0), (100, 1.0, 0.5), (1000, 1.0, 2.0)], cx.NONE_IN_RANGE),  # faster only in between
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
    assert s.ratio == pytest.approx(32.0) and s.at["n"] == 100 and s.device == "gpu" and s.kernel == "k.K.time_warm op=matmul"


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
    cells = concurrency.grid(recs)
    assert {c.n_workers: c.status for c in cells if c.policy == "default"} == {1: "ok", 2: "ok", 4: "1 died", 8: "ok"}
    safe = concurrency.safe_n(cells)
    assert safe[("m", "gpu", "default")] == 2 and safe[("m", "gpu", "fraction")] is None


def test_family_cost_arithmetic():
    from jaxci.catalogue import Figure

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


def test_scale_inferred_from_skipped_cpu_cases():
    full = [rec("k.K.time_warm", 1.0, n=1, dtype="float32", device="cpu"),
            rec("k.K.time_warm", None, status="skipped", n=1, dtype="float32", device="gpu")]
    assert cost.infer_scale(full, "m") == "full"
    assert cost.infer_scale(full + [rec("k.K.time_warm", None, status="skipped", n=9, dtype="float32", device="cpu")], "m") == "ci"


def test_device_ratio_of_unsized_timings():
    records = [rec("notebooks.Notebook.time_notebook", t, notebook="intro", device=d) for d, t in (("cpu", 2.0), ("gpu", 20.0))]
    records.append(rec("notebooks.Notebook.time_notebook", 1.0, notebook="other", device="cpu"))  # no gpu partner
    (d,) = cx.device_ratios(records)
    assert d.ratio == pytest.approx(10.0) and d.params == (("notebook", "intro"),)

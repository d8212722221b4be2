"""The runner model (jaxci.analysis.model): precision paths, throughput points, CPU scaling, loop slopes, bands,
the report's wiring, `jaxci predict` and the published-figure check. Never a timing asserted: every expected
number is computed from the inputs the test writes (synthetic results with known truth) or reads."""

import json
import math
import subprocess
import sys

import pytest

from jaxci.analysis import peak
from jaxci.analysis import primitives as P
from jaxci.catalogue import load_catalogue
from jaxci.report.build import build
from jaxci.report.published import check
from jaxci.results.records import load_results
from tests.asvutil import REPO
from tests.frozen import RESULTS as FROZEN
from tests.modelutil import runner_model
from tests.synth import SynthResults

DEV = ["cpu", "gpu"]
FLOOR = {"gpu": 5e-5, "cpu": 5e-6}
GPU_RATE = 2e14      # FLOP/s of the synthetic lab GPU's matmul (TF32 path on the H200 entry)
CPU_RATE = 1e12
STEP = {"gpu": 1e-5, "cpu": 5e-9}
COLD = {"gpu": 0.5, "cpu": 0.05}


def _lab(tmp_path, cores="16"):
    s = SynthResults(tmp_path).machine("lab-h200", gpu="1 x NVIDIA H200", backend="cuda13", kind="lab", cores=cores)
    s.add("lab-h200", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32", "float64"], DEV],
          lambda dtype, device: FLOOR[device])
    s.add("lab-h200", "dense.Dense.time_warm", ["op", "n", "dtype", "device"],
          [["matmul", "cholesky"], [64, 256, 1024, 4096], ["float32", "float64"], DEV],
          lambda op, n, dtype, device: (
              FLOOR[device] * 3 if op == "cholesky" and device == "gpu"          # latency-bound at every size
              else FLOOR[device] + 2 * n**3 / (GPU_RATE if device == "gpu" else CPU_RATE)))
    s.add("lab-h200", "elementwise.Elementwise.time_warm", ["n", "dtype", "device"],
          [[10_000, 10_000_000], ["float32"], DEV],
          lambda n, dtype, device: FLOOR[device] + n / 2e8 if device == "cpu" else FLOOR[device] * 1.5)
    s.add("lab-h200", "loops.Scan.time_warm", ["n", "unroll", "dtype", "device"],
          [[1000, 10_000, 100_000], [1], ["float32", "float64"], DEV],
          lambda n, unroll, dtype, device: FLOOR[device] + n * STEP[device])
    s.add("lab-h200", "compile.CompileColdStart.timeraw_first_call", ["kernel", "dtype", "device"],
          [["matmul"], ["float32"], DEV], lambda kernel, dtype, device: COLD[device])
    return s


@pytest.fixture(scope="module")
def lab_results(tmp_path_factory):
    return _lab(tmp_path_factory.mktemp("lab")).save()


@pytest.fixture(scope="module")
def model(lab_results):
    return runner_model(lab_results)


def test_precision_paths_of_the_catalogue():
    cat = load_catalogue(include_lab=True)
    assert peak.gemm_path(cat["g4dn.2xlarge"], "float32")[:2] == ("fp32", "gpu_fp32_tflops")    # Turing: no TF32
    assert peak.gemm_path(cat["g6.2xlarge"], "float32")[0] == "tf32"
    assert peak.gemm_path(cat["g6.2xlarge"], "float32", "highest")[0] == "fp32"
    assert peak.gemm_path(cat["lab-h200"], "float64")[0] == "fp64-tensor"
    assert peak.gemm_path(cat["g5.2xlarge"], "float64")[0] == "fp64"                            # no FP64 tensor
    path, _, value, why = peak.gemm_path(cat["g5.2xlarge"], "float32")
    assert path == "tf32" and value is None and "A10G" in why                                   # unsourced: null


def test_no_efficiency_above_one_on_the_h200_capture():
    rs = load_results(FROZEN)
    rows = [a for a in peak.achieved(rs.latest(), load_catalogue(include_lab=True)) if a.machine == "lab-h200"]
    gpu = [a for a in rows if a.params.get("device") == "gpu" and a.fraction is not None]
    assert gpu and max(a.fraction for a in gpu) <= 1.0


def test_gpu_matmul_moves_by_efficiency_of_the_path(model):
    cat = load_catalogue(include_lab=True)
    n, top = 3000, 4096
    t = FLOOR["gpu"] + 2 * top**3 / GPU_RATE
    eff = 2 * top**3 / (t - FLOOR["gpu"]) / (cat["lab-h200"].value("gpu_tf32_tflops") * 1e12)
    p = model.predict("g4dn.2xlarge", "matmul", n, "float32", "gpu")
    want = FLOOR["gpu"] + 2 * n**3 / (eff * cat["g4dn.2xlarge"].value("gpu_fp32_tflops") * 1e12)
    assert p.seconds == pytest.approx(want, rel=1e-6)
    assert p.low <= p.seconds <= p.high and "tf32 peak" in p.inputs and "fp32 peak" in p.inputs
    assert p.label == "predicted"


def test_latency_bound_points_never_calibrate_throughput(model):
    p = model.predict("g4dn.2xlarge", "cholesky", 1024, "float32", "gpu")
    assert not p and "latency-bound" in p.reason and p.needs == P.DENSE
    # the elementwise GPU line is launch-bound too: bandwidth efficiency is only bounded below, so a wide band
    e = model.predict("g4dn.2xlarge", "elementwise", 50_000_000, "float32", "gpu")
    assert e and e.low < e.seconds < e.high and "bounds the bandwidth from below" in e.inputs


def test_cpu_gemm_scales_by_physical_cores_and_op_mix_does_not(model):
    cat = load_catalogue(include_lab=True)
    n, vcpu = 3000, cat["lab-h200"].value("vcpu")   # lab host: 8..16 physical cores (SMT unknown)
    t = FLOOR["cpu"] + 2 * 4096**3 / CPU_RATE
    rate = 2 * 4096**3 / (t - FLOOR["cpu"])
    cores = cat["c7i.2xlarge"].value("cpu_physical_cores")
    p = model.predict("c7i.2xlarge", "matmul", n, "float32", "cpu")
    assert p.seconds == pytest.approx(FLOOR["cpu"] + 2 * n**3 / (rate * cores / math.sqrt(vcpu / 2 * vcpu)))
    assert p.low < p.seconds < p.high and "physical cores" in p.inputs
    e4 = model.predict("c7i.2xlarge", "elementwise", 10_000_000, "float32", "cpu")
    e8 = model.predict("c7i.4xlarge", "elementwise", 10_000_000, "float32", "cpu")
    assert e4.seconds == pytest.approx(e8.seconds) and "not scaled by cores" in e4.inputs


def test_loop_slope_is_fitted_over_the_series(model):
    for device in DEV:
        a = model.predict("g4dn.2xlarge", "scan", 1_000_000, "float32", device)
        b = model.predict("g4dn.2xlarge", "scan", 2_000_000, "float32", device)
        assert (b.seconds - a.seconds) / 1_000_000 == pytest.approx(STEP[device], rel=1e-6)
    w = model.predict("g4dn.2xlarge", "while", 182, "float32", "gpu")   # no WhileConverge in this capture
    assert not w and w.needs == P.WHILE


def test_first_call_is_compile_part_plus_warm(model):
    warm = model.predict("g4dn.2xlarge", "matmul", 3000, "float32", "gpu")
    first = model.predict("g4dn.2xlarge", "matmul", 3000, "float32", "gpu", first_call=True)
    ref_warm = FLOOR["gpu"] + 2 * 1000**3 / GPU_RATE     # the lab's own warm call at the cold kernel's n = 1000
    assert first.seconds == pytest.approx(COLD["gpu"] - ref_warm + warm.seconds, rel=1e-3)
    # the compile part in its parts: host-side (the lab host's CPU compile), the GPU share (the rest), start-up
    for part in ("part host-side compile", "part GPU autotuning + code generation", "part backend start-up",
                 "part per-size growth"):
        assert part in first.inputs
    # the T4 (7.5) is not the H200's architecture (9.0): the GPU share's band runs from 0, so the low end is
    # the host-side part and the warm call only
    comp = model.predict("g4dn.2xlarge", "matmul", 3000, "float32", "gpu", compile_only=True)
    assert comp.low < 0.5 * comp.seconds and "band runs from 0" in comp.inputs


def test_unpredictable_cases_say_why(model):
    unknown = model.predict("nope", "matmul", 10)
    assert "not in the catalogue" in unknown.reason and unknown.needs == ""   # no measurement lifts these
    no_gpu = model.predict("c7i.2xlarge", "matmul", 10, device="gpu")
    assert "has no GPU" in no_gpu.reason and no_gpu.needs == ""
    assert model.predict("g4dn.2xlarge", "nuts", 3200, "float64", "gpu").needs == P.NUTS_STEPS


def test_report_calibrates_incident_check_and_achieved_with_lab_peaks(lab_results):
    """The incident Predictor and the achieved table take the lab machines' catalogue: a T4 case is predicted and
    the H200's achieved rows have its peaks."""
    report = build(lab_results)
    t4 = [i for i in report.incidents if i["family"] == "g4dn.2xlarge" and i["n"] == 3000]
    assert t4 and t4[0]["predicted_s"] is not None and "lab-h200" in t4[0]["inputs"]
    h200 = [a for a in report.achieved if a.machine == "lab-h200" and a.params.get("device") == "gpu"
            and a.params.get("op") == "matmul"]
    assert h200 and all(a.peak is not None for a in h200)
    assert any(r["case"].startswith("3000x3000 matmul, compiled") and r["predicted_s"] for r in report.model_checks)


def test_report_takes_the_published_inputs_and_checks_against_a_model_given_none(lab_results, tmp_path):
    """The report's predictions take the nearest evidence (the incidents file given is an input: without it a T4
    case moves), but its check of every published figure asks a transfer-only model: no figure held against a
    model that was given it (that a transfer-only prediction holds no published figure, even as a copied constant,
    is tests/test_runner_model_published.py: every figure x3 unchanged, no figure among the model's literals)."""
    with_file = build(lab_results)
    without = build(lab_results, incidents=tmp_path / "absent.json")
    key = [(p.family, p.kernel, p.dtype, p.device, p.n, p.seconds) for p in with_file.runtimes]
    assert key != [(p.family, p.kernel, p.dtype, p.device, p.n, p.seconds) for p in without.runtimes]
    assert without.model_checks == [] and with_file.model_checks
    assert [r["predicted_s"] for r in with_file.model_checks] == \
        [r["predicted_s"] for r in check(with_file.published, runner_model(lab_results))]


def test_predicted_crossover_has_a_band(lab_results):
    report = build(lab_results)
    pc = [c for c in report.predicted_crossovers if c.family == "g4dn.2xlarge" and c.kernel.endswith("op=matmul")
          and c.dtype == "float32"]
    assert pc and pc[0].n is not None and pc[0].low <= pc[0].n <= pc[0].high


def test_predict_command_and_published_score(lab_results):
    run = [sys.executable, "-m", "jaxci", "predict", "--family", "g4dn.2xlarge", "--kernel", "matmul", "--n", "2000",
           "--dtype", "float32", "--results", str(lab_results)]
    out = subprocess.run(run + ["--format", "json"], capture_output=True, text=True, cwd=REPO, check=True).stdout
    got = json.loads(out)
    assert got["label"] == "predicted" and got["low"] <= got["seconds"] <= got["high"] and got["inputs"]
    assert {"kind": "measured", "origin": "lab-h200"} in got["sources"]   # the floor; the rate is published
    assert any(s["kind"] == "published" for s in got["sources"])
    text = subprocess.run(run + ["--first-call"], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert "predicted" in text and "compile part" in text
    rest = next(line for line in text.splitlines() if line.startswith("rests on: "))
    assert "measured lab-h200" in rest and "; published incidents.md: " in rest
    bad = subprocess.run(run[:-6] + ["--kernel", "cholesky", "--n", "1024"], capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and "cannot predict" in bad.stderr and not bad.stdout  # a refusal: one line, exit 2
    measure = "; measure it: asv run --bench '^dense\\.Dense\\.' --machine g4dn.2xlarge\n"
    assert bad.stderr.count("\n") == 1 and bad.stderr.endswith(measure)   # what would let it predict
    js = subprocess.run([sys.executable, "-m", "jaxci", "published-score", str(lab_results),
                         "--format", "json"], capture_output=True, text=True, cwd=REPO, check=True).stdout
    got = json.loads(js)
    rows = got["figures"]
    keys = {"case", "family", "device", "published_s", "kind", "term", "goal", "transfer", "loo", "resolution_s"}
    assert rows and all(set(r) == keys for r in rows)
    assert {"g4dn.2xlarge", "ubuntu-latest"} <= {r["family"] for r in rows}
    assert set(got["summary"]) == {"transfer", "loo"}


def test_catalogue_cores_and_paths_are_sourced_or_reasoned():
    for name, m in load_catalogue(include_lab=True).items():
        for key in ("cpu_physical_cores", "gpu_tf32_tflops", "gpu_fp64_tensor_tflops"):
            if key in m.figures:
                fig = m.figure(key)
                assert (fig.value is not None and fig.source) or fig.reason, (name, key)
        cores, vcpu = m.value("cpu_physical_cores"), m.value("vcpu")
        if cores is not None and vcpu is not None:
            assert cores <= vcpu, name

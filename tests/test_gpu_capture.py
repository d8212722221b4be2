"""GPU capture: the plan names real combinations, the budget is honoured (fake clock and a real tiny
rehearsal), an overrunning step is killed and loses nothing else, the carried wheels give a bare Python 3.12
a working asv, and `jaxci import` merges a capture or refuses it with a clear message, copying nothing."""

import importlib
import itertools
import json
import math
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from asv.results import Results

from jaxci.analysis import provenance as pv
from jaxci.capture.carried import install_wheels, source_commit
from jaxci.capture.pack import MAX_FILE_BYTES, MAX_FILES
from jaxci.capture.plan import CaptureStep, combo, first, plan, second, select
from jaxci.capture.run import DRAIN_S, Capture
from jaxci.capture.scheduler import OVERRUN_FACTOR, PACK_RESERVE_S, Costs, schedule
from jaxci.commands.import_capture import main as import_main
from jaxci.machines.asvconf import write_redirected_conf
from jaxci.machines.register import register
from jaxci.nvml import gpu_present
from jaxci.report.build import build
from jaxci.results import captures, importer
from tests.asvutil import REPO
from tests.synth import SynthResults

# ------------------------------------------------------------------------------------------ the plan

def _all_combinations() -> set[str]:
    """Every `name(repr params)` asv would list for the benchmark classes the plan uses (no JAX imported)."""
    names = set()
    for step in plan():
        for c in step.combos:
            bench = c.split("(", 1)[0]
            module, cls, method = bench.split(".")
            klass = getattr(importlib.import_module(f"benchmarks.{module}"), cls)
            assert hasattr(klass, method), bench
            for params in itertools.product(*klass.params):
                names.add(combo(bench, *params))
    return names


GPU_ONLY = {"concurrency-fraction"}  # XLA's memory policies act on the GPU backend only


def test_every_planned_combination_is_a_real_parameter_combination():
    real = _all_combinations()
    for step in plan():
        missing = [c for c in step.combos if c not in real]
        assert not missing, f"{step.name}: {missing[:3]}"
        assert len(set(step.combos)) == len(step.combos), f"{step.name}: a combination twice"
        assert step.combos or step.is_command, f"{step.name}: nothing to run"
        wanted = {"gpu"} if step.name in GPU_ONLY else {"cpu", "gpu"}
        assert wanted <= set(step.devices()), f"{step.name}: not on both devices"


def test_the_second_capture_measures_the_model_primitives_first_and_skips_what_the_first_measured():
    steps = second()
    assert all(s.primitive and s.question and not s.measured for s in steps)
    call1 = [s.name for s in select(plan(), None, call=1)]
    assert call1[:2] == ["sanity", "gemm-precision"] and {"bandwidth", "nuts-step", "profile"} <= set(call1)
    assert {"autotune", "concurrency-fraction", "cache", "notebooks", "notebooks-split"} == \
        {s.name for s in select(plan(), None, 2)}
    assert "crossover-f32" not in {s.name for s in select(plan(), None)}          # the first capture measured it
    assert [s.name for s in select(plan(), "^crossover-f32$")] == ["crossover-f32"]  # unless asked for by name
    h200 = Costs(start_s={"cpu": 3.0, "gpu": 3.8})  # the first capture's measured process starts
    for call in (1, 2):  # each call's estimate fits one 9-minute device call before the correction factor
        assert sum(h200.raw(s, True) for s in select(plan(), None, call)) <= 540


def test_plan_order_follows_the_questions():
    names = [s.name for s in first()]
    assert names[:2] == ["sanity", "crossover-f32"]
    assert names.index("crossover-f64") < names.index("kalman-seq") < names.index("concurrency") \
        < names.index("nuts-seq1") < names.index("nuts-seq4") < names.index("compile")
    kalman = [c for s in first() if s.name.startswith("kalman") for c in s.combos]
    assert {c.split("'")[1] for c in kalman} == {"sequential", "parallel"} and all("11, 96" in c for c in kalman)
    assert {c.split("'")[3] for c in kalman} == {"float32", "float64"}


def test_regex_selects_exactly_the_combination():
    step = plan()[0]
    rx = step.regexes()[0]
    assert re.search(rx, "dispatch.TinyOp.time_warm('float32', 'cpu')")
    assert not re.search(rx, "dispatch.TinyOp.time_warm('float32', 'gpu')")
    assert not re.search(rx, "dispatch.TinyOp.time_warm('float64', 'cpu')")
    # each suite's scale fact once: a later step cut at its deadline must not overwrite it with a failure
    assert any(re.search(r, "dispatch.track_scale") for r in step.regexes())
    assert not any(re.search(r, "dispatch.track_scale") for r in step.regexes({"dispatch"}))


# ----------------------------------------------------------------------------------- the schedule

class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _step(name, n_cpu, n_gpu=0, work=0.0):
    return CaptureStep(name, "q", tuple([f"x.C.time_warm('{name}', {i}, 'cpu')" for i in range(n_cpu)]
                                       + [f"x.C.time_warm('{name}', {i}, 'gpu')" for i in range(n_gpu)]), work)


def test_schedule_never_starts_a_step_that_cannot_finish():
    clock = FakeClock()
    costs = Costs(start_s={"cpu": 10.0, "gpu": 20.0}, skip_s=1.0, discovery_s=0.0)
    ran = []

    def run_step(step, deadline):
        ran.append((step.name, deadline))
        spent = costs.raw(step, gpu=False)  # exactly as estimated
        clock.t += spent
        return "ok", spent

    steps = [_step("a", 3), _step("big", 20), _step("b", 2, n_gpu=5)]
    budget = 70 + PACK_RESERVE_S
    records = schedule(steps, budget, costs, False, run_step, clock=clock)
    assert [r["status"] for r in records] == ["ok", "not reached", "ok"]  # a later, smaller step still runs
    assert "needs about 200 s" in records[1]["why"] and records[0]["estimate_s"] == 30.0
    assert records[2]["estimate_s"] == 25.0  # 2 cpu processes + 5 gpu combinations skipped at 1 s
    assert all(deadline <= budget - PACK_RESERVE_S for _, deadline in ran)
    assert clock.t <= budget - PACK_RESERVE_S


def test_schedule_learns_from_underestimated_steps():
    clock = FakeClock()
    costs = Costs(start_s={"cpu": 10.0, "gpu": 10.0}, skip_s=0.0, discovery_s=0.0)

    def run_step(step, deadline):
        spent = min(deadline, 1.5 * costs.raw(step, gpu=True))  # everything takes 1.5x the raw estimate
        clock.t += spent
        return "ok", spent

    records = schedule([_step("a", 2), _step("b", 2), _step("c", 4)], 110 + PACK_RESERVE_S, costs, True,
                       run_step, clock=clock)
    assert records[1]["estimate_s"] == 30.0      # 20 s raw x the factor 1.5 learnt from step a
    assert records[2]["status"] == "not reached"  # 60 s (40 x 1.5) do not fit the 50 s left (raw 40 would)
    assert costs.factor == 1.5


def test_step_overrunning_its_estimate_gets_a_deadline():
    clock = FakeClock()
    costs = Costs(start_s={"cpu": 10.0, "gpu": 10.0}, skip_s=0.0, discovery_s=0.0)
    seen = []

    def run_step(step, deadline):
        seen.append(deadline)
        clock.t += deadline  # hangs until killed at its deadline
        return f"killed at {deadline:.0f} s", deadline

    records = schedule([_step("a", 2), _step("b", 1)], 100 + PACK_RESERVE_S, costs, True, run_step, clock=clock)
    assert seen[0] == 20 * OVERRUN_FACTOR and records[0]["status"].startswith("killed")
    assert records[1]["estimate_s"] == 20.0  # 10 s raw x factor 2 (the kill counted as spent time)
    assert clock.t <= 100


def test_wheels_unpack_only_what_is_missing(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name in ("pytest-0.0-py3-none-any.whl", "jaxci_fake_dist-1.0-py3-none-any.whl"):
        with zipfile.ZipFile(wheels / name, "w") as zf:
            zf.writestr(f"{name.split('-')[0]}_marker.py", "X = 1\n")
    done = install_wheels(wheels, tmp_path / "site")
    assert done == ["jaxci_fake_dist-1.0-py3-none-any.whl"]  # pytest is installed here: left alone
    assert (tmp_path / "site" / "jaxci_fake_dist_marker.py").is_file()


CARRIED = REPO / ".device" / "wheels"


@pytest.mark.skipif(not any(CARRIED.glob("asv-*.whl")), reason="run scripts/prepare-device.sh first")
def test_carried_wheels_give_a_bare_python_asv(tmp_path):
    """What the lent machine does: a Python 3.12 without asv unpacks the carried wheels and runs asv."""
    proc = subprocess.run(["pyenv", "prefix", "3.12.1"], capture_output=True, text=True)
    if proc.returncode:
        pytest.skip("no bare CPython 3.12 here (pyenv 3.12.1)")
    bare = Path(proc.stdout.strip()) / "bin" / "python3.12"
    # the checkout on sys.path, as scripts/gpu_capture.py puts it there: jaxci is not installed on the lent machine
    site = tmp_path / "site"
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from jaxci.capture.carried import install_wheels; "
            f"from pathlib import Path; print(len(install_wheels(Path({str(CARRIED)!r}), Path({str(site)!r})))); "
            "import asv, asv_runner, asv._rangemedian; import jaxci.capture.asvrepo; "
            "from asv.results import Results; print(asv.__version__)")
    out = subprocess.run([str(bare), "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "0.6.6"


# ------------------------------------------------------------------------- the rehearsal, for real

@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """The whole flow on this CPU machine with a tiny budget: the sanity step fits, and at most the few steps
    estimated near ten seconds after it. 40 s leaves the sanity step's 14 s (its estimate with the start margin)
    and the pack reserve room for a slow preparation on a loaded machine; a larger budget only runs more suite
    benchmarks at full scale, which these tests do not read."""
    root = tmp_path_factory.mktemp("rehearsal")
    budget = 40
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_capture.py"), "--rehearse", "--budget",
                           str(budget), "--out", str(root / "out"), "--work", str(root / "work")],
                          capture_output=True, text=True, timeout=budget + 120, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root, budget, json.loads((root / "out" / "capture.json").read_text())


@pytest.mark.skipif(gpu_present(), reason="a rehearsal is for a machine without a GPU")
def test_rehearsal_honours_budget_and_packs_few_small_files(rehearsal):
    root, budget, manifest = rehearsal
    files = sorted(p.name for p in (root / "out").iterdir())
    assert files == ["capture.json", "logs.tar.gz", "results.tar.gz", "summary.md"]
    assert len(files) <= MAX_FILES and all(p.stat().st_size < MAX_FILE_BYTES for p in (root / "out").iterdir())
    assert manifest["wall_s"] <= budget  # the budget is the feature under test, not a performance goal
    steps = {r["step"]: r for r in manifest["steps"]}
    assert list(steps) == [s.name for s in select(plan(), None)]  # every step accounted for, run or not reached
    assert steps["sanity"]["status"] == "ok"
    assert steps["nuts-step"]["status"] == "not reached" and "were left" in steps["nuts-step"]["why"]
    summary = (root / "out" / "summary.md").read_text()
    assert "rehearsal" in summary and "not reached" in summary
    with tarfile.open(root / "out" / "results.tar.gz") as tar:
        names = tar.getnames()
    assert "results/local-rehearsal/machine.json" in names and "results/benchmarks.json" in names


@pytest.mark.skipif(gpu_present(), reason="a rehearsal is for a machine without a GPU")
def test_rehearsal_imports_and_reads_back_with_gpu_na(rehearsal, tmp_path):
    root, _, _ = rehearsal
    cap, written = importer.import_capture(root / "out", tmp_path / "results")
    assert cap.machine == "local-rehearsal" and any(w.endswith("machine.json") for w in written)
    from jaxci.results.records import load_results

    rs = load_results(tmp_path / "results")
    tiny = {r.params["device"]: r for r in rs.records if r.benchmark == "dispatch.TinyOp.time_warm"
            and r.params["dtype"] == "float32"}
    assert tiny["cpu"].status == "ok" and tiny["gpu"].status == "skipped"
    assert import_main([str(root / "out"), "--results", str(tmp_path / "results")]) == 2  # a duplicate


def test_overrunning_step_is_killed_and_earlier_results_kept(tmp_path):
    work = tmp_path / "work"
    cap = Capture(out=tmp_path / "out", work=work, budget_s=30, machine="local-kill", rehearse=True)
    src = source_commit()
    cap.facts.update(commit=src["commit"], commit_date=src["date"])
    write_redirected_conf(work)
    register("local-kill", local=True, machine_file=str(work / ".asv-machine.json"))  # asv gets to discovery
    earlier = work / "results" / "local-kill" / "earlier.json"
    earlier.parent.mkdir(parents=True)
    earlier.write_text('{"kept": true}')
    status, seconds = cap.run_step(plan()[0], deadline_s=0.1)  # asv cannot even start in 0.1 s
    assert status.startswith(("cut at", "killed at")) and seconds < DRAIN_S + 5
    assert json.loads(earlier.read_text()) == {"kept": True}
    assert (cap.out / "capture.json").is_file() and "overran" in (work / "logs" / "01-sanity.log").read_text()


# ------------------------------------------------------------------------------------------- import

def _capture(tmp_path, machine="local-x", gpu="no GPU", kind="local", gpu_value=math.nan, rehearsal=True,
             cpu_value=1e-5) -> Path:
    """A synthetic capture folder (asv results written through asv's API) with known contents."""
    synth = SynthResults(tmp_path / "src").machine(machine, gpu=gpu, kind=kind,
                                                   backend="cuda13" if gpu != "no GPU" else "cpu")
    synth.machines[machine]["gpu_driver"] = "580.1" if gpu != "no GPU" else None
    synth.add(machine, "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu", "gpu"]],
              lambda dtype, device: cpu_value if device == "cpu" else gpu_value)
    results = synth.save()
    out = tmp_path / "out"
    out.mkdir()
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        tar.add(results, arcname="results")
    (out / "capture.json").write_text(json.dumps({"format": 1, "machine": machine, "rehearsal": rehearsal,
                                                  "started": "2026-11-30T00:00:00Z", "facts": {"commit": "abc"},
                                                  "steps": [{"step": "sanity", "status": "ok"}]}))
    (out / "summary.md").write_text("# summary\n")
    return out


def test_import_merges_and_refuses_a_duplicate(tmp_path, capsys):
    src = _capture(tmp_path)
    target = tmp_path / "results"
    assert import_main([str(src), "--results", str(target)]) == 0
    files = sorted(p.name for p in (target / "local-x").iterdir())
    assert "machine.json" in files and any(f.startswith("capture-") and f.endswith(".md") for f in files)
    record = next(target.glob("local-x/capture-*.toml"))   # the data beside the summary: from capture.json
    assert captures.read(record).summary == record.with_suffix(".md").name
    before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()}
    assert import_main([str(src), "--results", str(target)]) == 2
    assert "imported before" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in target.rglob("*") if p.is_file()} == before  # nothing touched


def test_import_writes_the_captures_record_from_its_manifest_and_refuses_a_bad_one(tmp_path, capsys):
    """The probed process starts go from capture.json (the data) into the committed record, never through the
    summary's prose; a start that is not device -> positive seconds is refused before anything is written."""
    src = _capture(tmp_path)
    manifest = json.loads((src / "capture.json").read_text())
    manifest["facts"]["start_s"] = {"cpu": 1.31, "gpu": "3.5"}
    (src / "capture.json").write_text(json.dumps(manifest))
    target = tmp_path / "results"
    assert import_main([str(src), "--results", str(target)]) == 2
    assert "facts.start_s" in capsys.readouterr().err and not target.exists()
    manifest["facts"]["start_s"] = {"cpu": 1.31, "gpu": 3.54}
    (src / "capture.json").write_text(json.dumps(manifest))
    assert import_main([str(src), "--results", str(target)]) == 0
    record = captures.read(next(target.glob("local-x/capture-*.toml")))
    assert record.process_start_s == {"cpu": 1.31, "gpu": 3.54} and record.machine == "local-x"
    assert captures.process_starts(target / "local-x", []) == (captures.ProcessStart(1.31, 3.54, record.summary),)


LAB = dict(machine="lab-h200", gpu="1 x NVIDIA H200", kind="lab")


def test_second_capture_of_the_same_commit_fills_what_the_first_lacked(tmp_path, capsys):
    """A loan spent in two calls: the second capture's new combinations are merged into the first's results
    file, a combination measured twice keeps the first value (and says so), and a third import adds nothing."""
    first = _capture(tmp_path / "a", gpu_value=math.nan, rehearsal=False, **LAB)
    second = _capture(tmp_path / "b", gpu_value=2e-5, cpu_value=1.2e-5, rehearsal=False, **LAB)
    target = tmp_path / "results"
    assert import_main([str(first), "--results", str(target)]) == 0
    assert import_main([str(second), "--results", str(target)]) == 0
    err = capsys.readouterr().err
    assert "1 combination(s) added" in err
    assert "measured in both, kept the first (1e-05; this one 1.2e-05, x1.20)" in err
    (path,) = [p for p in (target / "lab-h200").glob("*.json") if p.name != "machine.json"]
    res = Results.load(str(path), machine_name="lab-h200")
    assert res.get_result_value("dispatch.TinyOp.time_warm", [["'float32'"], ["'cpu'", "'gpu'"]]) == [1e-5, 2e-5]
    before = path.read_bytes()
    assert import_main([str(second), "--results", str(target)]) == 2
    assert "imported before" in capsys.readouterr().err and path.read_bytes() == before


def test_import_of_a_tarball_of_the_folder(tmp_path):
    src = _capture(tmp_path)
    bundle = tmp_path / "capture.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(src, arcname="capture-out")
    cap, _ = importer.import_capture(bundle, tmp_path / "results")
    assert cap.machine == "local-x"


@pytest.mark.parametrize("capture, refused", [
    (dict(gpu_value=2e-5), r"no GPU .* 1 gpu value\(s\), e.g. dispatch.TinyOp"),
    (dict(gpu_value=2e-5, rehearsal=True, **LAB), "a rehearsal cannot be imported as 'lab-h200'"),
    (dict(gpu_value=2e-5, rehearsal=False, **{**LAB, "gpu": "1 x Tesla T4"}),
     "H200 lab machine but machine.json records '1 x Tesla T4'"),
    (dict(rehearsal=False, **{**LAB, "kind": "local"}), "kind 'lab' in the catalogue"),
])
def test_a_capture_its_machine_contradicts_is_refused_writing_nothing(tmp_path, capture, refused):
    """A GPU value on a machine without one, a rehearsal under the lab name, a lab capture the catalogue's entry
    for it contradicts."""
    with pytest.raises(importer.ImportRefused, match=refused):
        importer.import_capture(_capture(tmp_path, **capture), tmp_path / "results")
    assert not (tmp_path / "results").exists()


def test_a_lab_capture_the_catalogue_agrees_with_is_imported(tmp_path):
    cap, _ = importer.import_capture(_capture(tmp_path, gpu_value=2e-5, rehearsal=False, **LAB), tmp_path / "res")
    assert cap.machine == "lab-h200"


def test_broken_captures_are_refused_clearly(tmp_path):
    with pytest.raises(importer.ImportRefused, match="no such file or folder"):
        importer.import_capture(tmp_path / "nope", tmp_path / "results")
    src = _capture(tmp_path)
    (src / "capture.json").write_text('{"format": 99, "machine": "local-x"}')
    with pytest.raises(importer.ImportRefused, match="format 99"):
        importer.import_capture(src, tmp_path / "results")
    src2 = _capture(tmp_path / "two")
    with tarfile.open(src2 / "results.tar.gz", "w:gz") as tar:  # results without machine.json
        empty = tmp_path / "empty" / "results" / "local-x"
        empty.mkdir(parents=True)
        (empty / "abc.json").write_text("{}")
        tar.add(empty.parent, arcname="results")
    with pytest.raises(importer.ImportRefused, match="machine.json"):
        importer.import_capture(src2, tmp_path / "results")
    shutil.rmtree(tmp_path / "results", ignore_errors=True)


def test_sigterm_from_outside_ends_asv_and_still_packs(tmp_path):
    """The device tool's own time limit kills the command: the running asv goes too, and OUT holds a pack."""
    import signal
    import time

    import psutil

    work = tmp_path / "work"
    proc = subprocess.Popen([sys.executable, str(REPO / "scripts" / "gpu_capture.py"), "--rehearse", "--budget", "300",
                             "--out", str(tmp_path / "out"), "--work", str(work)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = work / "logs" / "01-sanity.log"
    deadline = time.monotonic() + 120
    while not log.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert log.exists(), proc.communicate()[0][-2000:]
    def command(p) -> str:
        """A child's command line; '' for one that ended between the listing and the read (a zombie, or gone)."""
        try:
            return " ".join(p.cmdline())
        except psutil.Error:
            return ""

    below = []
    while time.monotonic() < deadline and not any("asv_runner" in command(p) or "benchmark" in command(p)
                                                  for p in below):
        time.sleep(0.2)  # wait until asv has started a benchmark process of its own
        below = psutil.Process(proc.pid).children(recursive=True)
    assert len(below) >= 2, [command(p) for p in below]
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 3, out[-2000:]
    manifest = json.loads((tmp_path / "out" / "capture.json").read_text())
    assert any("stopped from outside" in n for n in manifest["notes"])
    time.sleep(0.5)
    left = [p.pid for p in below if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, f"asv or benchmark processes left running: {left}"


def test_lab_results_calibrate_family_predictions_and_are_never_a_family(tmp_path):
    """An imported lab-h200 capture is the GPU truth the T4/A10G/L4 predictions calibrate on (and they say
    so), while the lab machine itself never appears as a runner family in predictions or costs."""
    synth = SynthResults(tmp_path).machine("lab-h200", gpu="1 x NVIDIA H200", backend="cuda13", kind="lab")
    sizes = [64, 256, 1024, 4096]
    synth.add("lab-h200", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu", "gpu"]],
              lambda dtype, device: 2e-5 if device == "gpu" else 5e-6)
    synth.add("lab-h200", "dense.Dense.time_warm", ["op", "n", "dtype", "device"],
              [["matmul"], sizes, ["float32"], ["cpu", "gpu"]],
              lambda op, n, dtype, device: (2e-5 + 2 * n**3 / 30e12) if device == "gpu" else 5e-6 + 2 * n**3 / 1e12)
    saved = synth.save()
    # transfer-only (no published figure on the T4's hardware): every T4 GPU term is carried from the capture
    transfer = build(saved, incidents=None, measurements=None)
    t4 = [p for p in transfer.runtimes if p.family == "g4dn.2xlarge" and p.device == "gpu" and p.seconds is not None]
    assert t4 and all(p.rests_on(pv.MEASURED, "lab-h200") and not p.rests_on(pv.PUBLISHED) for p in t4)
    # nearest evidence (the default): the T4's published rates, and the capture for what they do not give (the floor)
    report = build(saved)
    t4 = [p for p in report.runtimes if p.family == "g4dn.2xlarge" and p.device == "gpu" and p.seconds is not None]
    assert t4 and all(p.rests_on(pv.MEASURED, "lab-h200") and p.rests_on(pv.PUBLISHED) for p in t4)
    assert not [p for p in report.runtimes if p.family == "lab-h200"]
    assert "lab-h200" not in {p.family for p in report.predicted_crossovers}
    t4_cost = next(c for c in report.costs if c.family == "g4dn.2xlarge")   # a capture's seconds price no job
    assert t4_cost.label == "not predicted" and "a lab capture runs chosen combinations" in t4_cost.inputs


def test_benchmark_processes_get_the_repository_on_their_path(tmp_path):
    """asv drops PYTHONPATH from its benchmark processes unless ASV_PYTHONPATH names it; on the lent machine
    jaxci is not installed, so without it discovery fails (found by a rehearsal in a bare Python 3.12)."""
    cap = Capture(out=tmp_path / "out", work=tmp_path / "work", budget_s=60, machine="local-x", rehearse=True)
    cap.facts.update(commit="0" * 40, commit_date=1_700_000_000)
    env = cap.env(plan()[0])
    assert env["ASV_PYTHONPATH"] == env["PYTHONPATH"]
    assert str(REPO) in env["ASV_PYTHONPATH"].split(":") and env["JAXCI_SCALE"] == "full"
    assert "JAX_PLATFORMS" not in env and env["HOME"] == str(tmp_path / "work")


def test_asv_finds_the_snapshot_repository_the_conf_names(monkeypatch):
    """asv imports the module asv.conf.json's "plugins" names (from the repository root: a leading ".") and
    takes the Repo subclass whose dvcs the conf names: the plugin's module path must stay importable there."""
    from types import SimpleNamespace

    from asv.plugin_manager import plugin_manager
    from asv.repo import get_repo

    from jaxci.capture.asvrepo import DVCS, PLUGIN

    monkeypatch.chdir(REPO)
    monkeypatch.setenv("JAXCI_CAPTURE_COMMIT", "ab" * 20)
    monkeypatch.setenv("JAXCI_CAPTURE_DATE", "1700000000")
    plugin_manager.import_plugin(PLUGIN)
    repo = get_repo(SimpleNamespace(repo=".", dvcs=DVCS, project="jax-ci-bench"))
    assert type(repo).__name__ == "SnapshotRepo" and repo.get_hash_from_name("HEAD") == "ab" * 20
    assert repo.get_date(repo.get_hash_from_name("main")) == 1_700_000_000_000


def test_a_quick_first_step_does_not_shrink_later_estimates():
    costs = Costs(start_s={"cpu": 10.0, "gpu": 10.0}, skip_s=0.0, discovery_s=0.0)
    costs.estimated, costs.actual = 12.0, 6.0    # a sanity step twice as fast as estimated
    assert costs.factor == 1.0
    costs.estimated, costs.actual = 120.0, 60.0  # a minute of evidence: now it may
    assert costs.factor == 0.5

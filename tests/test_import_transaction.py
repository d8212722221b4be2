"""`jaxci import` is a transaction: a refused, failed or interrupted import leaves the target byte for
byte as it was (every file's hash compared), a good one lands whole; and random hostile captures (hypothesis)
either import valid data or are refused with exit 2 and one line, the target unchanged. The fixed hostile
captures (bad manifests, values, versions, targets) are tests/test_bad_input.py's `jaxci import` cases, each run
as a user runs it and checked to leave its --results folder byte for byte as it was; the builders they use are
here."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import operator
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxci.commands.import_capture import main as import_main
from jaxci.results import importer
from jaxci.results.records import load_results
from tests.badinput import tree_hash

BENCH = "dispatch.TinyOp.time_warm"


def results_tree(root: Path, machine="local-x", gpu="no GPU", kind="local", gpu_value=math.nan,
                 cpu_value=1e-5, version="1") -> Path:
    """results/ as asv writes it (tests/synth.py): machine.json, one results file, benchmarks.json."""
    from tests.synth import SynthResults

    synth = SynthResults(root).machine(machine, gpu=gpu, kind=kind, backend="cuda13" if gpu != "no GPU" else "cpu")
    synth.machines[machine]["gpu_driver"] = "580.1" if gpu != "no GPU" else None
    synth.add(machine, BENCH, ["dtype", "device"], [["float32"], ["cpu", "gpu"]],
              lambda dtype, device: cpu_value if device == "cpu" else gpu_value)
    out = synth.save()
    if version != "1":
        set_json(out / "benchmarks.json", (BENCH, "version"), version)
        for path in (out / machine).glob("*-*.json"):
            set_json(path, ("results", BENCH, json.loads(path.read_text())["result_columns"].index("version")), version)
    return out


def set_json(path: Path, keys: tuple, value) -> None:
    """Rewrite a JSON file with the item at `keys` (its keys and indexes, outermost first) set to value."""
    data = json.loads(path.read_text())
    functools.reduce(operator.getitem, keys[:-1], data)[keys[-1]] = value
    path.write_text(json.dumps(data))


def set_result(results: Path, keys: tuple, value, machine: str = "local-x") -> None:
    """set_json on each of a machine's results files."""
    for path in (results / machine).glob("*-*.json"):
        set_json(path, keys, value)


def capture_folder(folder: Path, results: Path, manifest: dict | None = None, summary: bytes = b"# summary\n") -> Path:
    folder.mkdir(parents=True)
    with tarfile.open(folder / "results.tar.gz", "w:gz") as tar:
        tar.add(results, arcname="results")
    base = {"format": 1, "machine": "local-x", "rehearsal": True, "started": "2026-11-30T00:00:00Z",
            "facts": {"commit": "abc"}, "steps": [{"step": "sanity", "status": "ok"}]}
    (folder / "capture.json").write_text(json.dumps({**base, **(manifest or {})}))
    (folder / "summary.md").write_bytes(summary)
    return folder


def run(capture: Path, target: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = import_main([str(capture), "--results", str(target)])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def target(tmp_path) -> Path:
    """A results/ that already holds another machine's results and a benchmarks.json."""
    results = results_tree(tmp_path / "existing", machine="local-old", cpu_value=3e-5)
    dest = tmp_path / "results"
    shutil.copytree(results, dest)
    return dest


def refused(capture: Path, target: Path, fragment: str) -> str:
    before = tree_hash(target)
    rc, out, err = run(capture, target)
    assert rc == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err and fragment in err, err
    assert tree_hash(target) == before
    return err


def test_a_good_capture_lands_whole(tmp_path, target):
    cap = capture_folder(tmp_path / "cap", results_tree(tmp_path / "src"))
    rc, _, err = run(cap, target)
    assert rc == 0, err
    names = sorted(p.name for p in (target / "local-x").iterdir())
    assert "machine.json" in names and any(n.startswith("capture-abc-") for n in names)
    assert not [p for p in target.iterdir() if p.name.startswith(importer.STAGING_PREFIX)]
    loaded = load_results(target)
    assert {r.machine for r in loaded.records} == {"local-old", "local-x"} and not loaded.errors


def test_a_fifo_in_the_capture_is_refused(tmp_path, target):
    cap = capture_folder(tmp_path / "cap", results_tree(tmp_path / "src"))
    os.mkfifo(cap / "logs.tar.gz")
    refused(cap, target, "not a regular file or folder")


def test_a_version_change_no_result_uses_is_merged(tmp_path):
    dest = tmp_path / "results"
    dest.mkdir()
    (dest / "benchmarks.json").write_text(json.dumps({"version": 2, BENCH: {
        "name": BENCH, "version": "0", "params": [], "param_names": []}, "other.B.time_x": {
        "name": "other.B.time_x", "version": "7", "params": [], "param_names": []}}))
    cap = capture_folder(tmp_path / "cap", results_tree(tmp_path / "src"))
    rc, _, err = run(cap, dest)
    assert rc == 0, err
    bench = json.loads((dest / "benchmarks.json").read_text())
    assert bench[BENCH]["version"] == "1" and bench["other.B.time_x"]["version"] == "7"  # merged, not replaced


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_machine_folder_changes_nothing(tmp_path, target):
    first = capture_folder(tmp_path / "a", results_tree(tmp_path / "src", gpu_value=math.nan))
    assert run(first, target)[0] == 0
    (target / "benchmarks.json").write_text((target / "benchmarks.json").read_text())
    second = capture_folder(tmp_path / "b", results_tree(tmp_path / "src2", cpu_value=math.nan, gpu_value=math.nan,
                                                         version="1"), {"started": "2026-12-01T00:00:00Z"})
    (target / "local-x").chmod(0o555)
    try:
        refused(second, target, "")
    finally:
        (target / "local-x").chmod(0o755)


def test_an_interrupted_move_puts_everything_back(tmp_path, target, monkeypatch):
    cap = capture_folder(tmp_path / "cap", results_tree(tmp_path / "src"))
    before = tree_hash(target)
    real, calls = os.replace, []

    def interrupted(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(importer.os, "replace", interrupted)
    rc, _, err = run(cap, target)
    assert rc == 130 and "interrupted" in err and "unchanged" in err, err
    assert tree_hash(target) == before


# ---- random hostile captures ------------------------------------------------------------------------------

json_values = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=12),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=8)
MUTATIONS = st.fixed_dictionaries({}, optional={
    "machine": st.one_of(st.text(max_size=20), json_values, st.sampled_from(["../x", "a/b", ".", "lab-h200"])),
    "started": st.one_of(st.text(max_size=40), json_values, st.just("/../../tmp/x")),
    "commit": st.one_of(st.text(max_size=12), json_values, st.just("/../..")),
    "facts": json_values,
    "steps": json_values,
    "value": st.one_of(json_values, st.sampled_from([math.inf, -math.inf, -1.0, 1e300, 0.0])),
    "version": st.sampled_from(["2", "", "x" * 64]),
    "gpu": st.sampled_from(["1 x NVIDIA H200", "1 x Tesla T4", "unknown", "", "no GPU"]),
    "kind": st.sampled_from(["lab", "catalogue", "local", "x"]),
    "summary_link": st.just(True),
    "fifo": st.just(True),
    "extra_folder": st.just(True),
    "deep": st.integers(min_value=20, max_value=5000),
    "tarball": st.just(True),
})


def hostile_capture(tmp: Path, m: dict) -> Path:
    res = results_tree(tmp / "src", gpu=m.get("gpu", "no GPU"), kind=m.get("kind", "local"))
    (path,) = (res / "local-x").glob("*-*.json")
    if "value" in m:
        set_json(path, ("results", BENCH, 0, 0), m["value"])
    if "version" in m:
        set_json(res / "benchmarks.json", (BENCH, "version"), m["version"])
    if "deep" in m:
        path.write_text("[" * m["deep"] + "]" * m["deep"])
    if "extra_folder" in m:
        (res / "other").mkdir()
    manifest = {k: m[k] for k in ("machine", "started", "facts", "steps") if k in m}
    if "commit" in m:
        manifest["facts"] = {"commit": m["commit"]}
    cap = capture_folder(tmp / "cap", res, manifest)
    if "summary_link" in m:
        (cap / "summary.md").unlink()
        (cap / "summary.md").symlink_to("/etc/passwd")
    if "fifo" in m:
        os.mkfifo(cap / "logs.tar.gz")
    if "tarball" in m and "fifo" not in m:
        bundle = tmp / "cap.tar.gz"
        with tarfile.open(bundle, "w:gz") as tar:
            tar.add(cap, arcname="cap")
        return bundle
    return cap


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=MUTATIONS)
def test_hostile_captures_import_valid_data_or_change_nothing(m):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        target = tmp / "results"
        shutil.copytree(results_tree(tmp / "existing", machine="local-old", cpu_value=3e-5), target)
        before_records = len(load_results(target).records)
        before = tree_hash(target)
        rc, out, err = run(hostile_capture(tmp, m), target)
        assert "Traceback" not in err
        if rc == 2:
            assert err.count("\n") == 1 and err.startswith("jaxci import: refused: "), err
            assert tree_hash(target) == before
            return
        assert rc == 0, err
        loaded = load_results(target)
        assert len([r for r in loaded.records if r.machine == "local-old"]) == before_records  # nothing orphaned
        assert not [e for e in loaded.errors if "not loaded" in e or "ignored" in e], loaded.errors
        assert all(r.value is None or (math.isfinite(r.value) and r.value >= 0) for r in loaded.records)
        assert not (tmp / "tmp" / "x").exists() and "root:" not in "".join(
            p.read_text(errors="replace") for p in target.rglob("*.md"))


def test_a_step_cut_at_its_deadline_imports(tmp_path, target):
    """asv records a benchmark killed at a capture step's deadline as a null row with a null duration: that is
    a failed benchmark, imported as failed."""
    src = results_tree(tmp_path / "src")
    set_result(src, ("results", BENCH, 0), None)
    set_result(src, ("durations", BENCH), None)
    rc, _, err = run(capture_folder(tmp_path / "cap", src), target)
    assert rc == 0, err
    failed = [r for r in load_results(target).records if r.machine == "local-x"]
    assert failed and all(r.status == "failed" for r in failed)


@pytest.mark.parametrize("name", ["../escaped.json", "/abs/escaped.json", "a/../../escaped.json"])
def test_a_member_outside_the_capture_is_refused_and_nothing_escapes(tmp_path, name):
    """extractall's "data" filter refuses it; the refusal names the member, and nothing lands outside dest."""
    bundle = tmp_path / "bundle.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        for member_name in ("ok/first.json", name):
            info = tarfile.TarInfo(member_name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"{}"))
    dest = tmp_path / "deep" / "dest"
    dest.mkdir(parents=True)
    with pytest.raises(importer.ImportRefused, match=r"unsafe member .*escaped\.json.* \(absolute or '\.\.'\)"):
        importer._safe_extract(bundle, dest, 1024 * 1024)
    assert not (tmp_path / "deep" / "escaped.json").exists() and not (tmp_path / "escaped.json").exists()

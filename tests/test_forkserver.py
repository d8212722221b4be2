"""asv's forkserver with JAX imported in the server: no process that forks has a JAX backend running,
and each forked child still gets its own platform and x64 setting (benchmarks/common.py)."""

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

from tests.asvutil import REPO
from tests.suiteutil import last_json, python


def run_forking(body: str, tmp_path, **env) -> subprocess.CompletedProcess:
    """Run `body` in a fresh interpreter that imported benchmarks.common (and so JAX) like asv's server."""
    code = textwrap.dedent(f"""
        import json, os, sys
        sys.path.insert(0, {str(REPO)!r})
        import benchmarks.common as common

        def in_child(fn):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                try:
                    out = fn()
                except Exception as exc:
                    out = f"{{type(exc).__name__}}: {{exc}}"
                os.write(w, json.dumps(out).encode())
                os._exit(0)
            os.close(w)
            data = os.read(r, 65536)
            os.waitpid(pid, 0)
            return json.loads(data)
    """) + textwrap.dedent(body)
    return python("-c", code, cwd=None, env={**os.environ, "JAXCI_FORK_AUDIT": str(tmp_path / "audit.txt"), **env})


def test_import_starts_no_backend_and_a_fork_after_one_is_recorded(tmp_path):
    proc = run_forking("""
        assert "jax" in sys.modules and not common.backend_started()
        in_child(lambda: 0)                       # the server's forks: nothing to report
        before = os.path.exists(os.environ["JAXCI_FORK_AUDIT"])
        common.start_jax("cpu", "float32")        # now this process runs a backend ...
        in_child(lambda: 0)                       # ... and a fork is recorded
        print(json.dumps(before))
    """, tmp_path)
    assert last_json(proc) is False
    (line,) = (tmp_path / "audit.txt").read_text().splitlines()
    assert "forked after a JAX backend started" in line and "forked after a JAX backend started" in proc.stderr


def test_each_child_gets_the_platform_and_x64_of_its_combination(tmp_path):
    """The server imported JAX under JAX_PLATFORMS=cuda and x64 off; children ask for other settings."""
    proc = run_forking("""
        def run(dtype):
            jax, dev = common.start_jax("cpu", dtype)
            return [dev.platform, str(jax.numpy.ones(3).sum().dtype), os.environ["JAX_PLATFORMS"]]
        print(json.dumps([[in_child(lambda d=d: run(d)) for d in ("float64", "float32", "float64")],
                          in_child(lambda: common.start_jax("gpu", "float32")[1].platform)]))
    """, tmp_path, JAX_PLATFORMS="cuda", JAX_ENABLE_X64="0")
    runs, gpu = last_json(proc)
    assert runs == [["cpu", "float64", "cpu"], ["cpu", "float32", "cpu"], ["cpu", "float64", "cpu"]]
    from jaxci.nvml import gpu_present

    if not gpu_present():   # no silent fallback to the CPU: the child asked for CUDA and cannot have it
        assert gpu.startswith("RuntimeError: JAX could not start platform 'cuda'")
    assert not (tmp_path / "audit.txt").exists()


def test_a_setting_that_did_not_take_effect_refuses_to_measure(tmp_path):
    """A combination whose backend started earlier on another platform (or another dtype) fails, never times."""
    said = last_json(run_forking("""
        def twice():
            common.start_jax("cpu", "float32")
            jax = sys.modules["jax"]
            dev = jax.devices("cpu")[0]
            common.check_started(jax, dev, "gpu", "float32")
        print(json.dumps(in_child(twice)))
    """, tmp_path))
    assert "settings did not take effect" in said


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="copy-on-write unsharing is Linux's madvise")
def test_a_first_call_child_holds_its_own_memory_as_a_fresh_process_does(tmp_path):
    """A forked child's first writes to what it inherited are copy-on-write page faults a fresh interpreter
    never takes (they made DenseCompile.track_trace_s +6-8 ms under the forkserver); a child that measures
    a first call takes them all before it measures. Counted in page faults, not seconds."""
    in_server, (_, shared_faults), (said, own_faults) = last_json(run_forking("""
        import resource
        inherited = bytearray(64 << 20)   # 16,384 pages written by the server before it forks

        def faults_writing_inherited(unshare):
            said = common.unshare_inherited_memory() if unshare else "-"
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            for i in range(0, len(inherited), 4096):
                inherited[i] = 1
            return [said, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before]

        print(json.dumps([common.unshare_inherited_memory(), in_child(lambda: faults_writing_inherited(False)),
                          in_child(lambda: faults_writing_inherited(True))]))
    """, tmp_path))
    assert in_server == "not a forked child: nothing shared"
    assert shared_faults >= 16_000                 # one copy-on-write fault per inherited page written
    if said.startswith("madvise"):
        pytest.skip(f"this kernel cannot unshare: {said}")
    assert said.startswith("unshared ") and own_faults < 100, said


def test_a_later_round_loads_the_warm_compile_and_first_call_classes_never_do(tmp_path):
    """Children of one server share one compilation cache for warm benchmarks (the second round's compile is
    setup, not measurement); a first-compile child never reads it, and nothing outside a child has one."""
    in_server, first, second, first_call = last_json(run_forking("""
        from jaxci.jaxmon import CompileClock

        def compile_once(reuse):
            jax, dev = common.start_jax("cpu", "float64", reuse_compiles=reuse)
            clock = CompileClock().install()
            jax.block_until_ready(jax.jit(lambda x: (x @ x.T).sum())(jax.numpy.ones((64, 64))))
            got = clock.snapshot()
            return [str(common.warm_compile_cache()), got["cache_hits"], got["cache_misses"], got["compilations"]]

        print(json.dumps([str(common.warm_compile_cache()), in_child(lambda: compile_once(True)),
                          in_child(lambda: compile_once(True)), in_child(lambda: compile_once(False))]))
    """, tmp_path, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        JAX_COMPILATION_CACHE_DIR=str(tmp_path / "inherited")))
    assert in_server == "None"
    assert first[0] == second[0] and first[0].startswith(os.path.join(tempfile.gettempdir(), "jaxci-warm-compiles-"))
    hits, misses, compiles = first[1:]
    assert hits == 0 and misses == compiles >= 1          # round 1 compiles and writes
    assert second[1:3] == [misses, 0]                    # round 2 loads every one of them
    assert first_call[1:3] == [0, 0] and first_call[3] == compiles   # no cache at all: compiles each
    assert not (tmp_path / "inherited").exists()   # an inherited cache directory is never used


def test_the_three_stage_tracks_of_a_compile_split_share_one_first_compile(tmp_path):
    """asv starts a child per track: the first child compiles and records the split, its siblings read it and
    start no JAX backend; a child that finds an unfinished measurement fails; outside a child none is shared."""
    first, second, third, unfinished, outside = last_json(run_forking("""
        import shutil, tempfile
        from pathlib import Path
        from benchmarks.dense import DenseCompile

        def track(stage, op="matmul"):
            case = DenseCompile()
            try:   # as asv_runner's run does: teardown in every outcome
                case.setup(op, "float32", "cpu")
                return [getattr(case, f"track_{stage}_s")(op, "float32", "cpu"), common.backend_started()]
            finally:
                case.teardown(op, "float32", "cpu")

        shared = Path(tempfile.gettempdir()) / f"{common.SPLITS_PREFIX}{os.getpid()}"
        shared.mkdir()
        (shared / "DenseCompile-solve-float32-cpu.json").write_text(json.dumps({"started": True}))
        try:
            out = [in_child(lambda s=s: track(s)) for s in ("trace", "lower", "backend")]
            out += [in_child(lambda: track("trace", "solve")), common.sibling_folder(common.SPLITS_PREFIX) is None]
        finally:
            shutil.rmtree(shared)
        print(json.dumps(out))
    """, tmp_path))
    assert [first[1], second[1], third[1]] == [True, False, False]   # only the first child started JAX
    assert min(first[0], second[0], third[0]) > 0
    assert unfinished.startswith("RuntimeError") and "did not finish" in unfinished and outside


def test_warm_classes_reuse_compiles_first_call_classes_unshare_and_no_class_does_both():
    import benchmarks
    import benchmarks.common as common

    for m in pkgutil.walk_packages(benchmarks.__path__, "benchmarks."):
        importlib.import_module(m.name)
    classes = _subclasses(common.JaxCase)
    reuse = {c.__name__ for c in classes if c.reuse_compiles}
    first = {c.__name__ for c in classes if c.first_in_process}
    assert {"Dense", "Scan", "KalmanGrad", "TinyOp", "Elementwise"} <= reuse
    assert {"DenseCompile", "LoopsCompile", "ElementwiseCompile", "DispatchCompile"} <= first
    cold = {c.__name__ for c in _subclasses(common.ColdStart)}
    assert not reuse & first and not reuse & cold and not first & cold


def _subclasses(cls) -> set:
    """Every subclass of `cls`, at any depth."""
    subs = set(cls.__subclasses__())
    return subs.union(*map(_subclasses, subs))


@pytest.mark.slow
def test_whole_suite_never_forks_after_a_backend_started(ci_run):
    box, _, log = ci_run
    assert json.loads(box.conf.read_text())["launch_method"] == "forkserver"
    assert not (box.root / "forks-after-backend.txt").exists(), (box.root / "forks-after-backend.txt").read_text()
    assert "forked after a JAX backend started" not in log


def test_asv_discovery_imports_warm_nothing_a_fresh_benchmark_process_would_not_have():
    """asv imports every module under benchmarks/ (discovery, and the forkserver before it forks). A module
    that imported numpyro there made every child's first lowering 3-4x faster than a fresh process's
    (measure/launch_fidelity.py: DenseCompile.track_lower_s 0.29 s -> 0.07 s), so nothing heavy may load."""
    code = (f"import json, sys, pkgutil, importlib; sys.path.insert(0, {str(REPO)!r})\n"
            "import benchmarks\n"
            "for m in pkgutil.walk_packages(benchmarks.__path__, 'benchmarks.'): importlib.import_module(m.name)\n"
            "print(json.dumps(sorted(n for n in ('numpyro', 'numba', 'jax.scipy.special', 'nbclient')"
            " if n in sys.modules)))")
    assert last_json(python("-c", code, cwd=None)) == []

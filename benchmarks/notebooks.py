"""notebooks: lecture-shaped notebooks run cell by cell through a real Jupyter kernel.

Lectures run as notebooks, so the numbers a maintainer sees include the kernel: its start, JAX's import and
every compile. Each fixture notebook (benchmarks/notebook_fixtures/*.md, MyST, written for this suite) is
- timed whole by `Notebook.time_notebook` (kernel start to shutdown, what a build pays per lecture), and
- split by the instrumented runner (jaxci.audit.runner) in `NotebookSplit`: `track_compile_s` (trace +
  lowering + backend compile, summed over cells) and `track_run_s` (the rest of the cells' wall time),
  both from one run per notebook and device made in setup_cache (a kernel start costs ~1-2 s).
`KernelPath` runs the loops suite's scan as notebook cells in a fresh plain interpreter ("bare") and in a
fresh Jupyter kernel ("kernel") and tracks the first (compile + run) and warm cells: does the kernel path
add cost?
`External`/`ExternalSplit` benchmark a user's own lectures: JAXCI_NOTEBOOK_DIR=path maps the sorted lectures found there
(.ipynb, MyST .md) to the fixed slots lecture-0..lecture-3; empty slots are skipped, so params never change.

The notebooks read JAXCI_SCALE themselves (tiny sizes at ci). Every run is a fresh kernel: no cache carries
over. Nothing here imports JAX: the notebooks run in kernels and subprocesses.
"""

import os
from pathlib import Path

from benchmarks.common import (
    DEVICES,
    REPO_ROOT,
    platform_for,
    skip_unless_runnable,
    track_scale,  # noqa: F401  (track_scale: this suite's scale)
    without_compile_cache,
)

HERE = Path(__file__).resolve().parent / "notebook_fixtures"  # asv rejects a folder named like a module
NOTEBOOKS = ["elementwise_f64", "grid_scan", "nuts_f64", "fresh_compiles"]
PATHS = ["bare", "kernel"]
EXTERNAL_SLOTS = [f"lecture-{i}" for i in range(4)]  # each slot costs asv processes even when empty
EXTERNAL_ENV = "JAXCI_NOTEBOOK_DIR"
TIMEOUT = 1200  # asv, per benchmark process
CELL_TIMEOUT = 900  # runner, per cell: a runaway cell fails the combination before asv's timeout does


def _kernel_env() -> dict:
    """The repository root on the kernel's path, so a notebook can import benchmarks.kernels; the
    persistent compilation cache off in this process and so in every kernel it starts (cold means cold)."""
    without_compile_cache()
    paths = [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"PYTHONPATH": os.pathsep.join(paths), "JAX_ENABLE_COMPILATION_CACHE": "false"}


def _runnable(device: str) -> None:
    """Refuse, before any kernel starts, a device this machine lacks (KernelPath's setup_cache, whose source is its
    asv version, loops over every device param and keeps the error; its setup skips that combination first)."""
    from jaxci.accel import missing_reason

    reason = missing_reason(device)
    if reason:
        raise NotImplementedError(reason)


def run(path, device: str):
    """One instrumented run in a fresh kernel; a failed notebook fails the benchmark with its cause."""
    from jaxci.audit.runner import run_notebook

    _runnable(device)
    result = run_notebook(path, timeout=CELL_TIMEOUT, platform=platform_for(device), env=_kernel_env(),
                          kernel_name="python3")
    if not result.ok:
        raise RuntimeError(f"{path}: {result.status}: {result.error}")
    return result


def split_all(files: dict) -> dict:
    """Run each {name: path} once per device this machine has; {(name, device): numbers or error}.

    For setup_cache: one run feeds both track_ methods of every combination. A failed run is stored
    as its error (that combination fails, the others still report)."""
    from jaxci.accel import missing_reason

    out = {}
    for device in DEVICES:
        if missing_reason(device):
            continue
        for name, path in files.items():
            try:
                result = run(path, device)
                out[(name, device)] = {"compile_s": result.compile_s, "run_s": result.run_s,
                                       "wall_s": result.wall_s, "compilations": result.compilations}
            except Exception as exc:
                out[(name, device)] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


class _Split:
    """track_compile_s / track_run_s read from one instrumented run per notebook and device (setup_cache)."""

    timeout = 120  # the tracks only read the cache; the runs happen in setup_cache
    #: setup_cache: every notebook on every device, one after another, at full scale. Each subclass
    #: defines its own setup_cache: asv keys the cache by where the function is defined.
    CACHE_TIMEOUT = 3600

    def setup(self, cache, name, device):
        skip_unless_runnable(device)
        entry = cache.get((name, device))
        if entry is None:
            raise NotImplementedError(f"{name}: nothing to run")
        if "error" in entry:
            raise RuntimeError(entry["error"])
        self.entry = entry

    def track_compile_s(self, cache, name, device):
        return self.entry["compile_s"]

    def track_run_s(self, cache, name, device):
        return self.entry["run_s"]

    track_compile_s.unit = track_run_s.unit = "seconds"


class _Whole:
    """time_notebook: one whole run, kernel start to shutdown, what a build pays per lecture."""

    timeout = TIMEOUT
    number = 1
    repeat = (1, 3, 120.0)
    warmup_time = 0.0

    def time_notebook(self, name, device):
        run(self.file, device)


#: compile-bound (~100 compilations, ~15 s) even at ci scale: timed whole at full scale only; its
#: compile/run split is still tracked at ci by NotebookSplit
CI_SKIP_WHOLE = {"nuts_f64"}


class Notebook(_Whole):
    params = [NOTEBOOKS, DEVICES]
    param_names = ["notebook", "device"]

    def setup(self, name, device):
        skip_unless_runnable(device, large=name in CI_SKIP_WHOLE)
        self.file = HERE / f"{name}.md"


class NotebookSplit(_Split):
    params = Notebook.params
    param_names = Notebook.param_names

    def setup_cache(self):
        return split_all({name: HERE / f"{name}.md" for name in NOTEBOOKS})

    setup_cache.timeout = _Split.CACHE_TIMEOUT


def external_lectures() -> list[Path]:
    """The sorted lectures under $JAXCI_NOTEBOOK_DIR ([] when unset); slot i runs the i-th."""
    root = os.environ.get(EXTERNAL_ENV)
    if not root:
        return []
    from jaxci.audit.repo import find_lectures

    return find_lectures(Path(root))


def _external(slot) -> Path:
    lectures = external_lectures()
    index = EXTERNAL_SLOTS.index(slot)
    if index >= len(lectures):
        raise NotImplementedError(f"{slot}: no lecture (set {EXTERNAL_ENV} to a folder of lectures)")
    return lectures[index]


class External(_Whole):
    params = [EXTERNAL_SLOTS, DEVICES]
    param_names = ["lecture", "device"]

    def setup(self, slot, device):
        self.file = _external(slot)  # the cheap skip first
        skip_unless_runnable(device)


class ExternalSplit(_Split):
    params = External.params
    param_names = External.param_names

    def setup_cache(self):
        return split_all(dict(zip(EXTERNAL_SLOTS, external_lectures())))

    setup_cache.timeout = _Split.CACHE_TIMEOUT


BARE = r"""
import json, sys, time
from jaxci.audit.runner import read_notebook
nb = read_notebook(sys.argv[1])
namespace, seconds = {"__name__": "__main__"}, {}
for cell in nb.cells:
    if cell.cell_type != "code":
        continue
    code = compile(cell.source, "<cell>", "exec")
    start = time.perf_counter()
    exec(code, namespace)
    elapsed = time.perf_counter() - start
    for tag in cell.metadata.get("tags", []):
        seconds[tag] = elapsed
print(json.dumps(seconds))
"""


def bare_cells(path, device: str) -> dict:
    """The notebook's code cells exec()'d in a fresh plain interpreter (no Jupyter): seconds per tagged cell."""
    import json
    import subprocess
    import sys

    _runnable(device)
    extra = _kernel_env()  # first: it switches the cache off in os.environ
    env = dict(os.environ, JAX_PLATFORMS=platform_for(device), **extra)
    proc = subprocess.run([sys.executable, "-c", BARE, str(path)], env=env, capture_output=True, text=True,
                          timeout=CELL_TIMEOUT, cwd=str(Path(path).parent))
    if proc.returncode:
        raise RuntimeError(f"{path} (bare): exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def kernel_cells(path, device: str) -> dict:
    """The same cells through a Jupyter kernel (instrumented runner): kernel-side seconds per tagged cell."""
    from jaxci.audit.runner import read_notebook

    result = run(path, device)
    tags = {i: c.metadata.get("tags", []) for i, c in enumerate(read_notebook(path).cells)}
    return {tag: cell.wall_s for cell in result.cells for tag in tags[cell.index]}


class KernelPath:
    """The loops suite's scan (float32), first call (compile + run) and warm call, each a notebook cell
    run in a fresh plain interpreter ("bare") or in a fresh Jupyter kernel ("kernel"): both fresh
    processes, so only the kernel path differs."""

    params = [PATHS, DEVICES]
    param_names = ["path", "device"]
    timeout = 120

    def setup_cache(self):
        from jaxci.nvml import gpu_present

        path, out = HERE / "kernel_path.md", {}
        for device in DEVICES:
            if device == "gpu" and not gpu_present():
                continue
            for how, measure in (("bare", bare_cells), ("kernel", kernel_cells)):
                try:
                    out[(how, device)] = measure(path, device)
                except Exception as exc:
                    out[(how, device)] = {"error": f"{type(exc).__name__}: {exc}"}
        return out

    setup_cache.timeout = 1800

    def setup(self, cache, path, device):
        skip_unless_runnable(device)
        self.cells = cache[(path, device)]
        if "error" in self.cells:
            raise RuntimeError(self.cells["error"])

    def track_first_s(self, cache, path, device):
        return self.cells["first"]

    def track_warm_s(self, cache, path, device):
        return self.cells["warm"]

    track_first_s.unit = track_warm_s.unit = "seconds"

"""Run a notebook cell by cell in a real Jupyter kernel and time each cell: wall, compile, run.

Why this shape:
- the kernel gets `jaxci.jaxmon.CompileClock` as *source* (no jaxci import needed in the kernel, so any
  Python 3 kernelspec works) plus IPython `pre_run_cell`/`post_run_cell` hooks that time each cell inside
  the kernel, so message transport and output handling are not counted as cell time;
- the clock is installed when the notebook itself imports `jax` (an import hook), so instrumentation never
  moves JAX's import cost out of the cell that pays it;
- each cell's execute request carries a `user_expressions` entry that returns the cell's record with the
  reply (evaluated after `post_run_cell`, outside the timed window, no extra round trip); after an error,
  when the kernel skips user_expressions, one *silent* request (no run_cell events, no execution count)
  reads it instead; records already read survive a kernel that dies later;
- the kernel is shut down `immediate`ly in every outcome and its process tree (jaxci.util.proc) is checked and
  killed if anything is left, so a timeout or a dead kernel leaves no zombie.

This module is a runtime helper of benchmarks/notebooks.py (installed per benchmarked commit): keep its API
(`read_notebook`, `run_notebook`, `NotebookRun`, `CellTiming`) stable.
"""

from __future__ import annotations

import ast
import asyncio
import atexit
import contextlib
import inspect
import json
import math
import os
import shutil
import stat
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jaxci.util import proc as proc_tree
from jaxci.util import safeio

#: Outcomes of a notebook run (and of its last executed cell).
OK, ERROR, TIMEOUT, DEAD, UNREADABLE, NO_KERNEL = "ok", "error", "timeout", "dead", "unreadable", "no-kernel"

RAISES_TAG, SKIP_TAG = "raises-exception", "skip-execution"  # the tags Jupyter Book (nbclient) honours
_MODULE = "_jaxci_kernel"
_TAKE = f"__import__('sys').modules[{_MODULE!r}].take()"


def _kernel_setup_code(trace: bool = True) -> str:
    """jaxmon's source plus jaxci.audit.hooks' (the kernel-side module), executed in a private module so the user
    namespace stays clean; the kernel needs no jaxci."""
    from jaxci import jaxmon
    from jaxci.audit import hooks

    kernel_side = inspect.getsource(hooks).replace("from __future__ import annotations\n", "")
    body = (inspect.getsource(jaxmon) + "\n" + kernel_side
            + f"\ninstall(get_ipython(), CompileClock(), {bool(trace)})\n")
    return (f"import sys as _s, types as _t\n_m = _t.ModuleType({_MODULE!r})\n"
            f"_m.__dict__['get_ipython'] = get_ipython\n"
            f"exec(compile({body!r}, {_MODULE!r}, 'exec'), _m.__dict__)\n"
            f"_s.modules[{_MODULE!r}] = _m\ndel _s, _t, _m\n")


#: the largest notebook read (jaxci.audit.repo.LECTURE_LIMIT finds lectures with the same bound)
NOTEBOOK_LIMIT = 64 * 1024 * 1024


class NotebookReadError(Exception):
    """A notebook file that cannot be read or parsed; the message names the file and the cause."""


@dataclass
class CellTiming:
    """One executed code cell. Seconds; compile = trace + lower + backend; run = wall - compile."""

    index: int  # position among the notebook's cells (markdown cells count)
    first_line: str
    wall_s: float  # kernel-side (pre_run_cell -> post_run_cell) when instrumented, else client-side
    client_s: float  # request sent -> reply and outputs received
    status: str = OK
    compile_s: float | None = None
    trace_s: float | None = None
    lower_s: float | None = None
    backend_s: float | None = None
    compilations: int | None = None
    cache_hits: int | None = None
    cache_misses: int | None = None
    error: str | None = None
    expected_error: str | None = None  # the error of a cell tagged raises-exception (not a failure)
    loops: list | None = None  # traced lax loops: [kind, trips or None, carry elements, times noted, within]
    jitted: dict | None = None  # jitted function traced in this cell -> its largest argument, in elements
    calls: list | None = None  # per jitted function and signature called here: calls, times, shapes, XLA cost
    eager: dict | None = None  # un-jitted primitives run here: ops, seconds, [largest, ops, dtype] per size class
    startup_s: float | None = None  # the backend's start-up, in the cell that triggered it (not compile time)
    settle_s: float | None = None  # of wall_s: waiting at the cell's end for its asynchronous JAX work
    import_s: float | None = None  # of wall_s: the notebook's own `import jax`
    memory: dict | None = None  # at the cell's end, labelled: device_peak_bytes (+ platform), live_buffers, host RSS

    @property
    def run_s(self) -> float | None:
        return None if self.compile_s is None else max(self.wall_s - self.compile_s, 0.0)

    def as_dict(self) -> dict:
        return {**asdict(self), "run_s": self.run_s}


@dataclass
class NotebookRun:
    path: str
    status: str = OK
    error: str | None = None
    platform: str | None = None
    kernel_start_s: float | None = None
    wall_s: float | None = None  # whole run: kernel start to shutdown
    cells: list[CellTiming] = field(default_factory=list)
    leftover_pids: list[int] = field(default_factory=list)  # processes that had to be killed after shutdown
    kernel_pid: int | None = None
    notes: list[str] = field(default_factory=list)  # what the scratch copy left out (links leading out)

    @property
    def ok(self) -> bool:
        return self.status == OK

    def _sum(self, name):
        values = [getattr(c, name) for c in self.cells]
        return None if not values or any(v is None for v in values) else sum(values)

    @property
    def compile_s(self) -> float | None:
        return self._sum("compile_s")

    @property
    def run_s(self) -> float | None:
        return self._sum("run_s")

    @property
    def cells_s(self) -> float:
        return sum(c.wall_s for c in self.cells)

    @property
    def compilations(self) -> int | None:
        return self._sum("compilations")

    @property
    def slowest(self) -> CellTiming | None:
        return max(self.cells, key=lambda c: c.wall_s, default=None)

    @property
    def peak_memory(self) -> dict | None:
        """The lecture's peak memory per kind over its cells (kinds as hooks.memory() names them, in MiB), with
        `device_platform` where a device reported one; None when no cell carried a record."""
        records = [c.memory for c in self.cells if c.memory]
        if not records:
            return None
        out: dict = {}
        for key in ("device_peak_bytes", "live_buffers_bytes", "host_rss_peak_bytes"):
            values = [r[key] for r in records if isinstance(r.get(key), (int, float))]
            if values:
                out[key.replace("_bytes", "_mib")] = round(max(values) / 2**20, 1)
        platforms = sorted({r["device_platform"] for r in records if r.get("device_platform")})
        if platforms:
            out["device_platform"] = ",".join(platforms)
        return out or None

    def as_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "error": self.error, "platform": self.platform,
                "kernel_start_s": self.kernel_start_s, "wall_s": self.wall_s, "cells_s": self.cells_s,
                "compile_s": self.compile_s, "run_s": self.run_s, "compilations": self.compilations,
                "leftover_pids": self.leftover_pids, "kernel_pid": self.kernel_pid,
                "peak_memory": self.peak_memory, "notes": self.notes, "cells": [c.as_dict() for c in self.cells]}


def read_notebook(path):
    """An .ipynb (nbformat) or a MyST/jupytext text notebook (.md, .py:percent ...) as a NotebookNode."""
    import nbformat

    path = Path(path)
    try:
        text = safeio.read_bytes(path, NOTEBOOK_LIMIT).decode("utf-8")
    except safeio.UnsafeFile as exc:
        raise NotebookReadError(f"{path}: cannot read: {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise NotebookReadError(f"{path}: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    try:
        if path.suffix == ".ipynb":
            nb = nbformat.reads(text, as_version=4)
        else:
            import jupytext

            with _whole_notebook_validation(), _fast_yaml():
                nb = jupytext.reads(text, fmt=text_format(path, text))
        nbformat.validate(nb)
    except Exception as exc:  # JSON errors, nbformat ValidationError, jupytext format errors
        raise NotebookReadError(f"{path}: malformed notebook: {type(exc).__name__}{read_problem(exc)}") from None
    return nb


def read_problem(exc: BaseException) -> str:
    """Where a notebook failed to parse, never what it holds: the parsers' own messages quote the file's first
    bytes (nbformat's NotJSONError) or the offending value (schema errors), and a lecture that is a link to
    /proc/self/environ or a key must not reach the log or the job summary (issue 40)."""
    import json

    if isinstance(exc, json.JSONDecodeError):
        return f": {exc.msg} at line {exc.lineno} column {exc.colno}"
    where = getattr(exc, "absolute_path", None)
    if where is not None:
        path = "/".join(str(p) for p in where) or "the top level"
        return f": fails the notebook schema at {path} ({getattr(exc, 'validator', '?')})"
    line = getattr(exc, "lineno", None) or getattr(getattr(exc, "problem_mark", None), "line", None)
    return f" (line {line})" if isinstance(line, int) else ""


@contextlib.contextmanager
def _whole_notebook_validation():
    """jupytext builds each cell with nbformat.v4.new_*_cell, which validates the cell against a schema
    fragment with jsonschema: ~70% of reading a MyST lecture. The whole notebook is validated once
    afterwards (nbformat.validate, fastjsonschema) instead, so nothing goes unchecked."""
    from nbformat.v4 import nbbase

    original = getattr(nbbase, "validate", None)
    if original is None:
        yield
        return
    nbbase.validate = lambda node, ref=None: None
    try:
        yield
    finally:
        nbbase.validate = original


@contextlib.contextmanager
def _fast_yaml():
    """jupytext reads front matter and cell options with yaml.safe_load (pure Python); the same safe
    loader in libyaml's C build, when present, reads them identically in a fraction of the time."""
    import yaml

    if not getattr(yaml, "__with_libyaml__", False):
        yield
        return
    originals = yaml.safe_load, yaml.safe_load_all
    yaml.safe_load = lambda stream: yaml.load(stream, Loader=yaml.CSafeLoader)
    yaml.safe_load_all = lambda stream: yaml.load_all(stream, Loader=yaml.CSafeLoader)
    try:
        yield
    finally:
        yaml.safe_load, yaml.safe_load_all = originals


def text_format(path: Path, text: str) -> str:
    """jupytext's format for a text notebook: MyST when it has code-cell directives (jupytext does not
    always guess that from the header), else what the extension says."""
    ext = path.suffix.lstrip(".") or "md"
    if ext == "md" and "{code-cell}" in text:
        return "md:myst"
    return ext


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit] + "..."


def kernel_env(platform: str | None = None, extra: dict | None = None) -> dict:
    """The kernel's environment: ours, JAX_PLATFORMS for the chosen platform, and any extras."""
    env = dict(os.environ)
    if platform:
        env["JAX_PLATFORMS"] = platform
    env.update(extra or {})
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # silence the debugger's frozen-modules warning
    return env


def run_notebook(notebook, *, timeout: float = 600, platform: str | None = None, env: dict | None = None,
                 kernel_name: str | None = None, cwd=None, instrument: bool = True,
                 allow_errors: bool = False, startup_timeout: float = 60, trace: bool = True) -> NotebookRun:
    """Execute every code cell in a fresh kernel and time each; never raises for a bad notebook or kernel.

    notebook: a path (.ipynb or jupytext text) or a NotebookNode. timeout: per cell, seconds.
    platform: JAX_PLATFORMS for the kernel ("cpu", "cuda"); env: extra variables for the kernel.
    kernel_name: defaults to the notebook's kernelspec, else python3.
    trace (with instrument): record per cell lax loop trip counts and carry sizes, the jitted calls (counts,
    waited times, XLA cost analysis once per executable), eager primitives, the backend's start-up, and wait for
    the cell's asynchronous work before its clock stops (jaxci.audit.hooks).
    Cells tagged skip-execution are not run; an error in a cell tagged raises-exception is expected (kept
    in `expected_error`) and execution goes on, as Jupyter Book does.
    """
    if not (isinstance(timeout, (int, float)) and 0 < timeout < float("inf")):  # nan too (issue 17)
        raise ValueError(f"cell timeout {timeout!r}: must be a finite number of seconds > 0")
    path = str(notebook) if isinstance(notebook, (str, Path)) else "<notebook>"
    scratch = None
    if isinstance(notebook, (str, Path)):
        try:
            nb = read_notebook(notebook)
        except NotebookReadError as exc:
            return NotebookRun(path, status=UNREADABLE, error=str(exc), platform=platform)
        if cwd is None:
            scratch, cwd, copy_notes = scratch_copy(Path(notebook).resolve().parent)
    else:
        nb = notebook
    result = NotebookRun(path, platform=platform)
    result.notes = copy_notes if scratch is not None else []
    _adopt_orphans()
    start = time.perf_counter()
    STOP["running"] = True
    try:
        if STOP["signum"] is None:
            asyncio.run(_execute(nb, result, timeout=timeout, env=kernel_env(platform, env),
                                 kernel_name=kernel_name, cwd=cwd, instrument=instrument, allow_errors=allow_errors,
                                 startup_timeout=startup_timeout, trace=trace))
    finally:
        STOP["running"] = False
        result.wall_s = time.perf_counter() - start
        end_kernels()   # an interrupt can leave the loop before _execute's own clean-up ran
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if STOP["signum"] is not None:
            raise Interrupted(STOP["signum"])   # whatever the killed kernel made nbclient raise meanwhile
    return result


def _signal_handlers() -> dict:
    import signal

    return {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(handlers: dict) -> None:
    """Put back the handlers that were there before nbclient added its event-loop ones (a command's
    "interrupted" handler, or Python's defaults), so a signal ends the lecture through request_stop."""
    import signal

    if threading_main():
        loop = asyncio.get_running_loop()
        for signum, handler in handlers.items():
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


class Interrupted(Exception):
    """A stop was requested (request_stop) while a lecture ran: its kernel and processes were ended."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


#: set by request_stop(); "running" while run_notebook has a kernel up
STOP: dict = {"signum": None, "running": False}


def request_stop(signum: int) -> bool:
    """For a signal handler: end the running lecture's processes now and make run_notebook raise Interrupted
    once its event loop is done (raising inside the loop leaves nbclient's clean-up half done). False when no
    lecture is running (the caller raises itself)."""
    if not STOP["running"]:
        return False
    STOP["signum"] = signum
    end_kernels()
    return True


#: the most a lecture's folder may hold to be copied as the kernel's scratch working directory
SCRATCH_LIMIT = 256 * 1024 * 1024
_SKIP_COPY = {"_build", "node_modules", "__pycache__"}


def scratch_copy(folder: Path) -> tuple[str, str, list[str]]:
    """A scratch copy of the lecture's folder (hidden and build folders left out), so the lecture reads its data
    files by their relative paths and what it writes there lands in the copy, removed after the run. No link
    is kept as a link (a write through one would land on its target): a link to a file inside the folder is
    copied as that file's content, a link to a folder inside it points at that folder's copy, a link leading
    out of the folder (or dangling) is left out with a note; FIFOs, sockets and devices are left out too. A
    folder over SCRATCH_LIMIT is not copied: the kernel starts in an empty scratch folder.
    Returns (scratch root to remove, working directory, notes)."""
    root = tempfile.mkdtemp(prefix="jaxci-lecture-")
    top = Path(os.path.realpath(folder))
    plan, notes = _scratch_plan(top)
    work = Path(root) / (folder.name or "work")
    if plan is None:
        work = Path(root) / "work"
        os.mkdir(work)
        return root, str(work), [f"lecture folder over {SCRATCH_LIMIT // (1024 * 1024)} MiB: the kernel starts "
                                 "in an empty scratch folder"]
    os.mkdir(work)
    for rel, kind, source in plan:
        dst = work / rel
        try:
            if kind == "dir":
                dst.mkdir(exist_ok=True)
            elif kind == "file":
                shutil.copyfile(source, dst, follow_symlinks=False)
            else:  # a link to a folder inside: to that folder's copy, relative, so it stays in the copy
                os.symlink(os.path.relpath(work / source, dst.parent), dst)
        except OSError as exc:
            notes.append(f"{rel}: not copied to the scratch folder ({exc.strerror or exc})")
    return root, str(work), notes


def _scratch_plan(top: Path):
    """What scratch_copy copies, in order: (path relative to top, "dir" | "file" | "dirlink", source) where a
    file's source is the real file to copy and a dirlink's its folder relative to top; and the notes of what
    is left out. None for the plan when the files come to more than SCRATCH_LIMIT."""
    plan, notes, total = [], [], 0
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        keep = []
        for name in sorted(dirnames):
            if name.startswith(".") or name in _SKIP_COPY:
                continue
            if (here / name).is_symlink():
                filenames.append(name)  # a link to a folder: resolved below, never walked through
                continue
            keep.append(name)
            plan.append(((here / name).relative_to(top), "dir", None))
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            entry = here / name
            rel = entry.relative_to(top)
            real = Path(os.path.realpath(entry))
            if entry.is_symlink() and real != top and top not in real.parents:
                notes.append(f"{rel}: a link leading out of the lecture folder (to {real}): left out of the "
                             "scratch copy, so the lecture cannot write through it")
                continue
            try:
                st = os.stat(real)
            except OSError:
                notes.append(f"{rel}: a dangling link: left out of the scratch copy")
                continue
            if stat.S_ISDIR(st.st_mode):
                plan.append((rel, "dirlink", real.relative_to(top)))
            elif stat.S_ISREG(st.st_mode):
                plan.append((rel, "file", real))
                total += st.st_size
                if total > SCRATCH_LIMIT:
                    return None, notes
            elif entry.is_symlink():
                notes.append(f"{rel}: a link to a special file: left out of the scratch copy")
    return plan, notes


# ---- everything a kernel started ends with the lecture ---------------------------------------------------
# jupyter_client starts each kernel in its own session and process group (start_new_session). At the end of
# a lecture, or when the audit is interrupted, everything is killed (jaxci.util.proc): the kernel's process
# tree as last seen, every process still in its session (a daemon that double-forked without setsid), and
# every orphan this process adopted meanwhile as a child subreaper (a daemon that also called setsid).

_LIVE: dict[int, list] = {}   # kernel pid -> snapshot of its tree, while a lecture runs
_ADOPTED: set[int] = set()    # our children before the kernels started (never killed here)
_SUBREAPER = {"set": False}


def _adopt_orphans() -> None:
    """Become a child subreaper (Linux), so a kernel's orphaned descendants are reparented here, not to init."""
    if _SUBREAPER["set"]:
        return
    _SUBREAPER["set"] = True
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER
    _ADOPTED.update(proc_tree.children(os.getpid()))


def end_kernel(kernel_pid: int | None, procs: list) -> list[int]:
    """Kill the kernel's tree, its session and the orphans it left with us; the pids that were still alive."""
    if kernel_pid is not None:
        for pid in proc_tree.session(kernel_pid):
            procs = proc_tree.merge(procs, proc_tree.snapshot(pid))
    born = next((p.started for p in procs if p.pid == kernel_pid), None)
    for pid in proc_tree.children(os.getpid()) - _ADOPTED:
        if pid != kernel_pid and not any(p.pid == pid for p in procs) and born is not None \
                and proc_tree.orphan_since(pid, born):
            procs = proc_tree.merge(procs, proc_tree.snapshot(pid))
    killed = proc_tree.kill_tree(procs)
    if kernel_pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(kernel_pid, 9)
    return killed


def end_kernels() -> list[int]:
    """End every kernel still registered (the audit was interrupted mid-lecture)."""
    killed = []
    for pid, procs in list(_LIVE.items()):
        killed += end_kernel(pid, procs)
        _LIVE.pop(pid, None)
    return killed


def _kernel_pid(client) -> int | None:
    provisioner = getattr(client.km, "provisioner", None)
    process = getattr(provisioner, "process", None)
    return getattr(process, "pid", None) or getattr(provisioner, "pid", None)


def _client(nb, name: str, timeout, cwd, startup_timeout):
    """nbclient's client over ipc transport with an absolute socket prefix (the kernel's cwd is the notebook's
    folder): no TCP ports to race for, and no "running over TCP without encryption" warning on every start.
    Returns (client, the socket folder to remove)."""
    from nbclient import NotebookClient
    from traitlets.config import Config

    sockets = tempfile.mkdtemp(prefix="jaxci-kernel-")
    config = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}})
    client = NotebookClient(nb, config=config, timeout=math.ceil(timeout), kernel_name=name, allow_errors=True,
                            startup_timeout=startup_timeout,
                            shutdown_kernel="immediate", interrupt_on_timeout=False, record_timing=False,
                            resources={"metadata": {"path": cwd}} if cwd else {})
    return client, sockets


async def _run_cell(client, cell, index: int, timing: CellTiming, tags: set, *, timeout, instrument, replies) -> None:
    """One code cell: executed, timed, its error or expected error recorded, the hooks' records merged."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    sent = time.perf_counter()
    try:
        await client.async_execute_cell(cell, index)
    except CellTimeoutError:
        timing.status, timing.error = TIMEOUT, f"cell {index} exceeded the {timeout:g} s cell timeout"
    except DeadKernelError:
        timing.status, timing.error = DEAD, f"kernel died while running cell {index}"
    finally:
        timing.client_s = timing.wall_s = time.perf_counter() - sent
    if timing.status != OK:
        return
    error = _cell_error(cell)
    if error and RAISES_TAG in tags:
        timing.expected_error = error
    elif error:
        timing.status, timing.error = ERROR, f"cell {index}: {error}"
    if instrument:
        records = _records(replies.pop(index, None))
        _merge(timing, records if records is not None else await _take(client, timeout))


async def _execute(nb, result: NotebookRun, *, timeout, env, kernel_name, cwd, instrument, allow_errors,
                   startup_timeout, trace=True):
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    name = kernel_name or nb.metadata.get("kernelspec", {}).get("name") or "python3"
    client, sockets = _client(nb, name, timeout, cwd, startup_timeout)
    procs: list = []
    t0 = time.perf_counter()
    try:
        handlers = _signal_handlers()
        async with client.async_setup_kernel(env=env):
            _restore_signal_handlers(handlers)   # nbclient's own SIGINT/SIGTERM clean-up leaves it half done
            result.kernel_start_s = time.perf_counter() - t0
            procs = proc_tree.snapshot(_kernel_pid(client))
            result.kernel_pid = _kernel_pid(client)
            if result.kernel_pid is not None:
                _LIVE[result.kernel_pid] = procs
            replies: dict = {}
            if instrument:
                await _silent(client, _kernel_setup_code(trace), timeout=startup_timeout)
                _piggyback(client, replies)
            for index, cell in enumerate(nb.cells):
                tags = _tags(cell)
                if cell.cell_type != "code" or not cell.source.strip() or SKIP_TAG in tags:
                    continue
                timing = CellTiming(index, cell.source.strip().splitlines()[0][:80], 0.0, 0.0)
                result.cells.append(timing)
                await _run_cell(client, cell, index, timing, tags, timeout=timeout, instrument=instrument,
                                replies=replies)
                # children a cell started, while still alive
                procs = proc_tree.merge(procs, proc_tree.snapshot(result.kernel_pid))
                if result.kernel_pid is not None:
                    _LIVE[result.kernel_pid] = procs
                if timing.status != OK:
                    result.status, result.error = timing.status, timing.error
                    if timing.status != ERROR or not allow_errors:
                        break
    except NoSuchKernel as exc:
        result.status, result.error = NO_KERNEL, f"no Jupyter kernel named {exc.args[0] if exc.args else name!r}"
    except (DeadKernelError, RuntimeError, TimeoutError) as exc:  # died or never came up while starting
        if result.status == OK:
            result.status, result.error = DEAD, f"kernel failed: {type(exc).__name__}: {_short(exc)}"
    except CellExecutionError as exc:  # not raised with allow_errors=True; kept for safety
        result.status, result.error = ERROR, _short(exc)
    finally:
        procs = procs or proc_tree.snapshot(_kernel_pid(client))
        result.leftover_pids = end_kernel(result.kernel_pid or _kernel_pid(client), procs)
        _LIVE.pop(result.kernel_pid, None)
        atexit.unregister(client._cleanup_kernel)  # nbclient leaves it registered when start-up fails
        shutil.rmtree(sockets, ignore_errors=True)


def _tags(cell) -> set:
    tags = (cell.get("metadata") or {}).get("tags") or []
    return {str(t) for t in tags} if isinstance(tags, (list, tuple)) else set()


def _cell_error(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {_short(output.get('evalue', ''), 200)}"
    return None


async def _silent(client, code: str, *, timeout: float, expressions: dict | None = None) -> dict:
    """Run code silently (no history, no run_cell events) and return the reply content."""
    from jupyter_core.utils import ensure_async

    msg_id = client.kc.execute(code, silent=True, store_history=False, user_expressions=expressions or {})
    deadline = time.monotonic() + timeout
    while True:
        msg = await ensure_async(client.kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01)))
        if msg["parent_header"].get("msg_id") == msg_id:
            content = msg["content"]
            if content.get("status") != "ok":
                raise RuntimeError(f"instrumentation failed in the kernel: {content.get('ename')}: "
                                   f"{content.get('evalue')}")
            return content


def _piggyback(client, replies: dict) -> None:
    """Ask for the cell's record in the cell's own execute request (user_expressions are evaluated after
    post_run_cell), and keep each reply: no extra round trip per cell."""
    execute = client.kc.execute

    def execute_with_record(code, *args, **kwargs):
        kwargs.setdefault("user_expressions", {"jaxci": _TAKE})
        return execute(code, *args, **kwargs)

    def keep(cell=None, cell_index=None, execute_reply=None, **kwargs):
        replies[cell_index] = execute_reply

    client.kc.execute = execute_with_record
    client.on_cell_executed = keep


def _records(reply) -> list[dict] | None:
    """The record list a cell's reply carries; None when it carries none (the kernel skips
    user_expressions after an error): the caller then asks separately."""
    try:
        text = reply["content"]["user_expressions"]["jaxci"]["data"]["text/plain"]
        return json.loads(ast.literal_eval(text))
    except (KeyError, TypeError, ValueError, SyntaxError):
        return None


async def _take(client, timeout: float) -> list[dict]:
    try:
        content = await _silent(client, "", timeout=min(timeout, 60), expressions={"r": _TAKE})
        text = content["user_expressions"]["r"]["data"]["text/plain"]
        return json.loads(ast.literal_eval(text))
    except Exception:  # a record we cannot read is missing, not fatal: the cell keeps its client time
        return []


def _merge(timing: CellTiming, records: list[dict]) -> None:
    if not records:
        return
    rec = records[-1]
    timing.wall_s = rec["wall"]
    timing.compile_s = rec["compile"]
    timing.trace_s, timing.lower_s, timing.backend_s = rec["trace"], rec["lower"], rec["backend"]
    timing.compilations = rec["compilations"]
    timing.cache_hits, timing.cache_misses = rec["cache_hits"], rec["cache_misses"]
    timing.loops, timing.jitted, timing.calls = rec.get("loops"), rec.get("jitted"), rec.get("calls")
    timing.eager, timing.startup_s, timing.settle_s = rec.get("eager"), rec.get("startup_s"), rec.get("settle_s")
    timing.import_s = rec.get("import_s")
    timing.memory = rec.get("memory")

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

"""

from __future__ import annotations

import ast
import asyncio
import atexit
import inspect
import json
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from jaxci.audit.reading.cell_records import EagerWork, JitCall, SamplerRun, TracedLoop
from jaxci.audit.reading.notebook import NotebookReadError, read_notebook
from jaxci.audit.reading.static import cell_tags
from jaxci.audit.runner import errorinfo, jit_calls
from jaxci.audit.runner.ending import (
    _LIVE,
    STOP,
    LectureStopped,
    _adopt_orphans,
    _restore_signal_handlers,
    _signal_handlers,
    end_kernel,
    end_kernels,
)
from jaxci.audit.runner.noinet import kernel_manager_class
from jaxci.audit.runner.outcome import (
    DEAD,
    ERROR,
    NO_KERNEL,
    OK,
    RAISES_TAG,
    SKIP_TAG,
    TIMEOUT,
    UNREADABLE,
    CellTiming,
    NotebookRun,
    typed_records,
)
from jaxci.audit.runner.scratch import scratch_copy
from jaxci.util import proc as proc_tree
from jaxci.util.jsonschema_import import skip_iri_syntax_checkers

_MODULE = "_jaxci_kernel"


_TAKE = f"__import__('sys').modules[{_MODULE!r}].take()"


#: the kernel-side modules, in the order the kernel runs them as one private module (each reads the ones before)
KERNEL_SIDE = ("jaxci.audit.reading.cell_records", "jaxci.audit.runner.hook_state", "jaxci.audit.runner.jit_calls",
               "jaxci.audit.runner.jax_hooks", "jaxci.audit.runner.host_kinds", "jaxci.audit.runner.hooks")


def _kernel_setup_code(trace: bool = True) -> str:
    """jaxmon's source and the kernel-side modules' (KERNEL_SIDE), executed as one private module so the user
    namespace stays clean, and `trips` (the loop counter the hooks use) in one of its own; the kernel needs no
    jaxci."""
    import importlib

    from jaxci import jaxmon
    from jaxci.audit.runner import trips

    sides = [importlib.import_module(name) for name in KERNEL_SIDE]
    body = ("from __future__ import annotations\n" + "\n".join(map(shipped_source, (jaxmon, *sides)))
            + f"\ninstall(get_ipython(), CompileClock(), {bool(trace)})\n")
    return ("import sys as _s, types as _t\n"
            + _private_module(jit_calls.TRIPS_MODULE, shipped_source(trips)) + _private_module(_MODULE, body)
            + "del _s, _t, _m\n")


def shipped_source(module) -> str:
    """A module's source as the kernel runs it: without its imports from jaxci (what they import is defined earlier
    in the same private module) and `from __future__` (the private module's first line)."""
    source = inspect.getsource(module)
    lines = source.splitlines(keepends=True)
    for node in reversed(ast.parse(source).body):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("jaxci", "__future__"):
            del lines[node.lineno - 1:node.end_lineno]
    return "".join(lines)


def _private_module(name: str, body: str) -> str:
    """Code that executes `body` as a module named `name` (kept out of the user's namespace), registered first as
    an import registers a module, so that dataclasses can resolve its annotations while it runs."""
    return (f"_m = _t.ModuleType({name!r})\n_m.__dict__['get_ipython'] = get_ipython\n_s.modules[{name!r}] = _m\n"
            f"exec(compile({body!r}, {name!r}, 'exec'), _m.__dict__)\n")


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit] + "..."


def kernel_env(platform: str | None = None, extra: dict | None = None) -> dict:
    """The kernel's environment: ours, JAX_PLATFORMS for the chosen platform, and any extras; CI=true unless set.

    A lecture site builds in CI, and GitHub Actions (RunsOn runners too) sets CI=true in every step, which the
    kernels inherit. Libraries read it: numpyro's MCMC turns its progress bar off under CI, and a chain then runs as
    one jitted fori_loop instead of one dispatch per iteration. The audit runs lectures as the build would."""
    env = dict(os.environ)
    env.setdefault("CI", "true")
    if platform:
        env["JAX_PLATFORMS"] = platform
    env.update(extra or {})
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # silence the debugger's frozen-modules warning
    return env


@dataclass(frozen=True)
class Launch:
    """How run_notebook runs one notebook, handed down to the client, each cell and the hooks as one value."""
    timeout: float              # per cell, seconds
    env: dict                   # the kernel's environment (kernel_env)
    kernel_name: str | None
    cwd: object
    instrument: bool
    allow_errors: bool          # the book's execute.allow_errors: an erroring cell does not end the run
    startup_timeout: float
    trace: bool


def run_notebook(notebook, *, timeout: float = 600, platform: str | None = None, env: dict | None = None,
                 kernel_name: str | None = None, cwd=None, instrument: bool = True,
                 allow_errors: bool = False, startup_timeout: float = 60, trace: bool = True) -> NotebookRun:
    """Execute every code cell in a fresh kernel and time each; never raises for a bad notebook or kernel.

    notebook: a path (.ipynb or jupytext text) or a NotebookNode. timeout: per cell, seconds.
    platform: JAX_PLATFORMS for the kernel ("cpu", "cuda"); env: extra variables for the kernel.
    kernel_name: defaults to the notebook's kernelspec, else python3.
    trace (with instrument): record per cell lax loop trip counts and carry sizes, the jitted calls (counts,
    waited times, XLA cost analysis once per executable), eager primitives, the backend's start-up, and wait for
    the cell's asynchronous work before its clock stops (jaxci.audit.runner.hooks).
    Cells tagged skip-execution are not run; an error in a cell tagged raises-exception is expected (kept
    in `expected_error`) and execution goes on, as Jupyter Book does.
    """
    if not (isinstance(timeout, (int, float)) and 0 < timeout < float("inf")):  # nan too: nan > 0 is False
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
            asyncio.run(_execute(nb, result, Launch(timeout, kernel_env(platform, env), kernel_name, cwd, instrument,
                                                    allow_errors, startup_timeout, trace)))
    finally:
        STOP["running"] = False
        result.wall_s = time.perf_counter() - start
        end_kernels()   # an interrupt can leave the loop before _execute's own clean-up ran
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if STOP["signum"] is not None:
            raise LectureStopped(STOP["signum"])   # whatever the killed kernel made nbclient raise meanwhile
    return result


def _kernel_pid(client) -> int | None:
    provisioner = getattr(client.km, "provisioner", None)
    process = getattr(provisioner, "process", None)
    return getattr(process, "pid", None) or getattr(provisioner, "pid", None)


def _client(nb, name: str, launch: Launch):
    """nbclient's client over ipc transport with an absolute socket prefix (the kernel's cwd is the notebook's
    folder): no TCP ports to race for, and no "running over TCP without encryption" warning on every start; ipykernel
    starts through jaxci.audit.runner.noinet's launcher, so a machine without inet sockets runs it too.
    Returns (client, the socket folder to remove)."""
    skip_iri_syntax_checkers()
    from nbclient import NotebookClient
    from traitlets.config import Config

    sockets = tempfile.mkdtemp(prefix="jaxci-kernel-")
    config = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}})
    client = NotebookClient(nb, config=config, timeout=math.ceil(launch.timeout), kernel_name=name, allow_errors=True,
                            startup_timeout=launch.startup_timeout, kernel_manager_class=kernel_manager_class(),
                            shutdown_kernel="immediate", interrupt_on_timeout=False, record_timing=False,
                            resources={"metadata": {"path": launch.cwd}} if launch.cwd else {})
    return client, sockets


async def _run_cell(client, cell, index: int, timing: CellTiming, tags: set, launch: Launch, replies: dict) -> None:
    """One code cell: executed, timed, its error or expected error recorded, the hooks' records merged."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    sent = time.perf_counter()
    try:
        await client.async_execute_cell(cell, index)
    except CellTimeoutError:
        timing.status, timing.error = TIMEOUT, f"cell {index} exceeded the {launch.timeout:g} s cell timeout"
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
        output = errorinfo.error_output(cell) or {}
        timing.error_name, timing.error_packages = errorinfo.error_name(output), errorinfo.traceback_packages(output)
    if launch.instrument:
        records = _records(replies.pop(index, None))
        records = records if records is not None else await _take(client, launch.timeout)
        _merge(timing, records)
        if records and records[-1].get("queued"):
            _merge_counts(timing, await _counts(client, launch.timeout))


async def _execute(nb, result: NotebookRun, launch: Launch):
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    name = launch.kernel_name or nb.metadata.get("kernelspec", {}).get("name") or "python3"
    client, sockets = _client(nb, name, launch)
    procs: list = []
    t0 = time.perf_counter()
    try:
        handlers = _signal_handlers()
        async with client.async_setup_kernel(env=launch.env):
            _restore_signal_handlers(handlers)   # nbclient's own SIGINT/SIGTERM clean-up leaves it half done
            result.kernel_start_s = time.perf_counter() - t0
            procs = proc_tree.snapshot(_kernel_pid(client))
            result.kernel_pid = _kernel_pid(client)
            if result.kernel_pid is not None:
                _LIVE[result.kernel_pid] = procs
            replies: dict = {}
            if launch.instrument:
                await _silent(client, _kernel_setup_code(launch.trace), timeout=launch.startup_timeout)
                _piggyback(client, replies)
            for index, cell in enumerate(nb.cells):
                tags = cell_tags(cell)
                if cell.cell_type != "code" or not cell.source.strip() or SKIP_TAG in tags:
                    continue
                timing = CellTiming(index, cell.source.strip().splitlines()[0][:80], 0.0, 0.0)
                result.cells.append(timing)
                await _run_cell(client, cell, index, timing, tags, launch, replies)
                # children a cell started, while still alive
                procs = proc_tree.merge(procs, proc_tree.snapshot(result.kernel_pid))
                if result.kernel_pid is not None:
                    _LIVE[result.kernel_pid] = procs
                if timing.status != OK:
                    result.status, result.error = timing.status, timing.error
                    if timing.status != ERROR or not launch.allow_errors:
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
        if result.kernel_pid is not None:
            _LIVE.pop(result.kernel_pid, None)
        atexit.unregister(client._cleanup_kernel)  # nbclient leaves it registered when start-up fails
        shutil.rmtree(sockets, ignore_errors=True)


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


async def _counts(client, timeout: float) -> dict:
    """The while loops' turns the cell's calls queued for counting, counted now, in a request of the runner's own:
    outside the cell's clocks and its timeout (jit_calls.count_queued); {} when they cannot be read."""
    budget = min(timeout, 60)
    call = f"__import__('sys').modules[{_MODULE!r}].count_queued({budget!r})"
    try:
        content = await _silent(client, "", timeout=2 * budget, expressions={"r": call})
        return json.loads(ast.literal_eval(content["user_expressions"]["r"]["data"]["text/plain"]))
    except Exception:  # counts we cannot read leave the loops' trips unknown, labelled as the hooks left them
        return {}


def _merge_counts(timing: CellTiming, counts: dict) -> None:
    """Each counted call entry's loops into the cell's record, and the seconds the counts took; where the counts
    did not answer, each loop still waiting for one says so."""
    calls = timing.calls or []
    if not counts:
        for entry in calls:
            for loop in entry.loops:
                if loop.trips is None and loop.count is None and loop.kind in jit_calls.COUNTABLE:
                    loop.count = "not counted: the count did not answer"
    for k, loops in counts.get("calls") or []:
        if isinstance(k, int) and 0 <= k < len(calls):
            calls[k].loops = typed_records(TracedLoop, loops) or []
    if counts:
        timing.trip_probe_s = counts.get("s")


def _merge(timing: CellTiming, records: list[dict]) -> None:
    if not records:
        return
    rec = records[-1]
    timing.wall_s = rec["wall"]
    timing.compile_s = rec["compile"]
    timing.trace_s, timing.lower_s, timing.backend_s = rec["trace"], rec["lower"], rec["backend"]
    timing.compilations = rec["compilations"]
    timing.cache_hits, timing.cache_misses = rec["cache_hits"], rec["cache_misses"]
    timing.loops = typed_records(TracedLoop, rec.get("loops"))
    timing.calls = typed_records(JitCall, rec.get("calls"))
    timing.jitted = rec.get("jitted")
    timing.eager = EagerWork.read(rec.get("eager"))
    timing.startup_s, timing.settle_s = rec.get("startup_s"), rec.get("settle_s")
    timing.import_s, timing.samplers = rec.get("import_s"), typed_records(SamplerRun, rec.get("samplers"))
    timing.trip_probe_s, timing.busy_s = rec.get("trip_probe_s"), rec.get("busy_s")
    timing.wait_s = rec.get("wait_s")
    timing.host_kinds = rec.get("host_kinds") or None
    timing.memory = rec.get("memory")

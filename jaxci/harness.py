"""Run N worker processes at once and record how each one ended: the concurrency suite's runtime helper.

Each worker is a fresh interpreter (subprocess, never fork: JAX and CUDA must not be forked) in its own
process group, running a workload named "module:function" with its environment applied before Python
starts, so memory-policy variables are in place before the worker can import JAX. The parent never
imports JAX. Every worker is reaped whatever happens (its whole process group is killed after it ends
or times out), and each gets a plain record: exit code, signal, whether a Python traceback was printed,
the stderr tail, wall time, peak device memory where the backend reports it, and the cause.

Benchmarks import this module at every benchmarked commit: keep its API small and stable.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jaxci.util.proc import kill_tree

if TYPE_CHECKING:
    import resource

#: Causes a worker can end with.
CAUSES = ("ok", "python-exception", "error-exit", "abort-signal", "crash-signal", "killed", "timeout")
_CRASH_SIGNALS = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"}
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):$", re.M)
_STDERR_SCAN_BYTES = 1 << 20  # tracebacks are looked for in the last MiB of stderr
POLL_S = 0.02


@dataclass
class WorkerSpec:
    """One worker: `target` is "module:function", called with `kwargs`; `env` is set and `unset` removed
    from the inherited environment before the interpreter starts."""

    target: str
    kwargs: dict = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    timeout_s: float = 600.0
    name: str = ""


@dataclass
class WorkerRecord:
    index: int
    name: str
    target: str
    pid: int
    cause: str
    exit_code: int | None  # None when the worker ended by a signal
    signal: str | None  # e.g. "SIGABRT"
    traceback: bool  # a Python traceback was printed on stderr
    timed_out: bool
    wall_s: float  # process start to exit, as seen by the parent
    work_s: float | None  # the workload call alone, reported by a worker that finished
    peak_device_mib: float | None  # max peak_bytes_in_use over devices whose memory_stats() report it
    peak_rss_mib: float | None  # the worker's peak resident set (host memory), from wait4
    nvml_peak_mib: float | None  # the worker's largest GPU memory in the NVML timeline, where NVML reports it
    memory_stats: dict | None  # memory_stats() of the devices that report it, at the end
    value: object  # what the workload returned (JSON-able), None unless it finished
    env: dict[str, str]
    stderr_tail: str


@dataclass
class RunRecord:
    workers: list[WorkerRecord]
    wall_s: float
    started: float  # time.time() at the start
    nvml: dict | None  # {"interval_s", "samples"} on NVIDIA machines, else None

    @property
    def died(self) -> int:
        return sum(w.cause != "ok" for w in self.workers)

    def as_dict(self) -> dict:
        return {**asdict(self), "died": self.died}


def classify(exit_code: int | None, sig: str | None, traceback: bool, timed_out: bool) -> str:
    """The cause of a worker's end from what the parent saw."""
    if timed_out:
        return "timeout"
    if sig == "SIGABRT":
        return "abort-signal"  # XLA fatal errors abort: no Python traceback
    if sig in _CRASH_SIGNALS:
        return "crash-signal"
    if sig is not None:
        return "killed"  # SIGKILL (the OOM killer, a runner) or another signal from outside
    if exit_code == 0:
        return "ok"
    return "python-exception" if traceback else "error-exit"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _stderr_facts(path: Path, tail_chars: int) -> tuple[bool, str]:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - _STDERR_SCAN_BYTES))
        text = fh.read().decode("utf-8", "replace")
    return bool(_TRACEBACK.search(text)), text[-tail_chars:]


class _Worker:
    def __init__(self, index: int, spec: WorkerSpec, workdir: Path, pythonpath: list[str]):
        self.index, self.spec = index, spec
        self.result_path = workdir / f"worker-{index}.json"
        self.stderr_path = workdir / f"worker-{index}.stderr"
        spec_path = workdir / f"worker-{index}.spec.json"
        spec_path.write_text(json.dumps({"target": spec.target, "kwargs": spec.kwargs,
                                         "result_path": str(self.result_path)}))
        env = {k: v for k, v in os.environ.items() if k not in spec.unset}
        env.update(spec.env)
        if pythonpath:
            env["PYTHONPATH"] = os.pathsep.join([*pythonpath, *filter(None, [env.get("PYTHONPATH")])])
        self.start = time.perf_counter()
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", "from jaxci.harness import worker_main; worker_main()", str(spec_path)],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                start_new_session=True,  # its own process group: killpg reaches its children too
            )
        self.status: int | None = None
        self.rusage: resource.struct_rusage | None = None  # os.wait4's, once reaped
        self.timed_out = False
        self.wall_s = 0.0

    @property
    def done(self) -> bool:
        return self.status is not None

    def poll(self, now: float) -> None:
        if self.done:
            return
        pid, status, rusage = os.wait4(self.proc.pid, os.WNOHANG)
        if pid == 0:
            if now - self.start > self.spec.timeout_s:
                self.timed_out = True
                kill_tree(self.proc.pid, reap=False)
                pid, status, rusage = os.wait4(self.proc.pid, 0)
            else:
                return
        self.wall_s = time.perf_counter() - self.start
        self.status, self.rusage = status, rusage
        self.proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        kill_tree(self.proc.pid, reap=False)  # anything the worker left behind in its group

    def abandon(self) -> None:
        """Kill and reap (the harness itself is failing or interrupted)."""
        if not self.done:
            kill_tree(self.proc.pid, reap=False)
            self.poll(float("inf"))

    def record(self, tail_chars: int, nvml_peaks: dict[int, float]) -> WorkerRecord:
        if self.status is None:
            raise RuntimeError(f"worker {self.index}: recorded before it was reaped (poll it to the end first)")
        code = os.waitstatus_to_exitcode(self.status)
        exit_code, sig = (code, None) if code >= 0 else (None, _signal_name(-code))
        traceback, tail = _stderr_facts(self.stderr_path, tail_chars)
        report = {}
        if code == 0 and self.result_path.is_file():
            report = json.loads(self.result_path.read_text())
        stats = report.get("memory_stats")
        peaks = [s["peak_bytes_in_use"] for s in (stats or {}).values() if "peak_bytes_in_use" in s]
        return WorkerRecord(
            index=self.index, name=self.spec.name or f"worker-{self.index}", target=self.spec.target,
            pid=self.proc.pid, cause=classify(exit_code, sig, traceback, self.timed_out),
            exit_code=exit_code, signal=sig, traceback=traceback, timed_out=self.timed_out,
            wall_s=self.wall_s, work_s=report.get("work_s"),
            peak_device_mib=max(peaks) / 2**20 if peaks else None,
            peak_rss_mib=self.rusage.ru_maxrss / 1024 if self.rusage else None,  # ru_maxrss is KiB on Linux
            nvml_peak_mib=nvml_peaks.get(self.proc.pid), memory_stats=stats, value=report.get("value"),
            env=dict(self.spec.env), stderr_tail=tail,
        )


def run_workers(specs: list[WorkerSpec], *, nvml_interval_s: float | None = 0.5, tail_chars: int = 4000,
                pythonpath: list[str] | tuple[str, ...] = ()) -> RunRecord:
    """Start every worker at once, wait for all (killing those past their timeout), return their records.

    On NVIDIA machines a background thread samples GPU memory every `nvml_interval_s` seconds (None: off).
    `pythonpath` entries are put in front of the workers' PYTHONPATH (for workloads outside installed packages).
    """
    from jaxci.nvml import MemorySampler

    sampler = MemorySampler(nvml_interval_s) if nvml_interval_s else None
    started, t0 = time.time(), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jaxci-harness-") as tmp:
        workers: list[_Worker] = []
        try:
            if sampler:
                sampler.start()
            for i, spec in enumerate(specs):
                workers.append(_Worker(i, spec, Path(tmp), list(pythonpath)))
            while not all(w.done for w in workers):
                now = time.perf_counter()
                for w in workers:
                    w.poll(now)
                time.sleep(POLL_S)
        finally:
            for w in workers:
                w.abandon()
            timeline = sampler.stop() if sampler else None
        peaks = sampler.process_peaks_mib() if sampler else {}
        records = [w.record(tail_chars, peaks) for w in workers]
    nvml = {"interval_s": nvml_interval_s, "samples": timeline} if sampler and sampler.available else None
    return RunRecord(workers=records, wall_s=time.perf_counter() - t0, started=started, nvml=nvml)


def _device_memory() -> dict | None:
    """memory_stats() of every local device that reports it (None on backends that do not, e.g. CPU)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    found = {}
    for device in jax.local_devices():
        stats = device.memory_stats()
        if stats:
            found[str(device)] = {k: int(v) for k, v in stats.items() if isinstance(v, (int, float))}
    return found or None


def worker_main() -> None:
    """Inside a worker: call the target, then write its value, its duration and the device memory figures."""
    import importlib

    spec = json.loads(Path(sys.argv[1]).read_text())
    module, _, name = spec["target"].partition(":")
    fn = getattr(importlib.import_module(module), name)
    t0 = time.perf_counter()
    value = fn(**spec["kwargs"])
    work_s = time.perf_counter() - t0
    report = {"value": value, "work_s": work_s, "memory_stats": _device_memory()}
    tmp = Path(spec["result_path"] + ".tmp")
    tmp.write_text(json.dumps(report, default=repr))
    tmp.replace(spec["result_path"])

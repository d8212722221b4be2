"""What running a notebook records: per cell timings and the notebook's outcome (kept stable: benchmarks read it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from jaxci.audit.reading.cell_records import EagerWork, JitCall, SamplerRun, TracedLoop

#: Outcomes of a notebook run (and of its last executed cell).
OK, ERROR, TIMEOUT, DEAD, UNREADABLE, NO_KERNEL = "ok", "error", "timeout", "dead", "unreadable", "no-kernel"


RAISES_TAG, SKIP_TAG = "raises-exception", "skip-execution"  # the tags Jupyter Book (nbclient) honours


def typed_records(cls, raw: list | None) -> list | None:
    """Typed records (cell_records) from what the hooks sent or a file holds (None stays None)."""
    return None if raw is None else [cls.read(item) for item in raw]


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
    error_name: str | None = None  # the exception's class name, of `error` (runner.errorinfo)
    error_packages: list[str] | None = None  # installed packages its traceback passes through, outermost first
    loops: list[TracedLoop] | None = None  # traced lax loops
    jitted: dict | None = None  # jitted function traced in this cell -> its largest argument, in elements
    calls: list[JitCall] | None = None  # per jitted function and signature called here: calls, times, XLA cost
    eager: EagerWork | None = None  # un-jitted primitives run here: ops, seconds, size classes
    samplers: list[SamplerRun] | None = None  # library sampler runs started here (numpyro MCMC.run)
    startup_s: float | None = None  # the backend's start-up, in the cell that triggered it (not compile time)
    settle_s: float | None = None  # of wall_s: waiting at the cell's end for its asynchronous JAX work
    import_s: float | None = None  # of wall_s: the notebook's own `import jax`
    trip_probe_s: float | None = None  # not in wall_s: the extra runs that counted while loops' trips (hooks)
    busy_s: float | None = None  # CPU seconds of the kernel's main thread in wall_s: host work (hooks)
    wait_s: float | None = None  # of wall_s: the main thread waiting for a core (schedstat run_delay; hooks)
    host_kinds: dict | None = None  # CPU seconds by kind: python_s, native_s (busy_s split), threads_s (hooks)
    memory: dict | None = None  # at the cell's end, labelled: device_peak_bytes (+ platform), live_buffers, host RSS

    def __post_init__(self):
        self.loops, self.calls = typed_records(TracedLoop, self.loops), typed_records(JitCall, self.calls)
        self.eager, self.samplers = EagerWork.read(self.eager), typed_records(SamplerRun, self.samplers)

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
    host_probe: dict | None = None  # this host's probe when the run ran (jaxci.audit.runner.host_probe.as_dict)

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

    @classmethod
    def from_dict(cls, data: dict) -> NotebookRun:
        """A run read back from its as_dict() (a cached or previous audit's record): checked field by field first
        (runrecord.RecordError, one line naming the field), derived fields recomputed."""
        from jaxci.audit.reading import runrecord

        data = runrecord.run("run", data)
        names = set(CellTiming.__dataclass_fields__)
        for i, c in enumerate(data.get("cells", [])):
            missing = [k for k in ("index", "wall_s", "client_s") if k not in c]
            if missing:
                raise runrecord.RecordError(f"run.cells[{i}]: no {', '.join(missing)}")
        # a published audit (audits/) keeps no lecture text: its cells have no first_line, and still serve as a
        # --baseline (the line is display only)
        cells = [CellTiming(**{"first_line": "", **{k: v for k, v in c.items() if k in names}})
                 for c in data.get("cells", [])]
        keep = set(cls.__dataclass_fields__) - {"cells"}
        return cls(**{k: v for k, v in data.items() if k in keep}, cells=cells)

    @property
    def own_core_share(self) -> float | None:
        """The share of its cells' wall time this run's main thread had a core (1 - waited / wall over the cells that
        recorded their wait; None where none did: a run recorded before, or a kernel without schedstat). Beside a
        CPU-bound process a cell's wall grows by the wait, which no host probe taken at another moment sees."""
        timed = [c for c in self.cells if c.wait_s is not None and c.wall_s]
        wall = sum(c.wall_s for c in timed)
        if not timed or wall <= 0:
            return None
        return min(max(1.0 - sum(c.wait_s or 0.0 for c in timed) / wall, 0.05), 1.0)

    def as_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "error": self.error, "platform": self.platform,
                "kernel_start_s": self.kernel_start_s, "wall_s": self.wall_s, "cells_s": self.cells_s,
                "compile_s": self.compile_s, "run_s": self.run_s, "compilations": self.compilations,
                "leftover_pids": self.leftover_pids, "kernel_pid": self.kernel_pid,
                "peak_memory": self.peak_memory, "notes": self.notes, "cells": [c.as_dict() for c in self.cells],
                "host_probe": self.host_probe}

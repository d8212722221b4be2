"""Running lectures: a notebook cell by cell in a real Jupyter kernel, timed (`kernel`), with the kernel-side
hooks (`hooks`: a cell's record; `jit_calls`, `jax_hooks` and their shared `hook_state`; the records themselves are
reading.cell_records; `trips`, the count of a while loop's turns: standard library only, any kernelspec runs them), the
pre-flight check of a lecture's imports
(`envcheck`), the scratch folder it runs in (`scratch`), the end of its processes (`ending`, through
jaxci.util.proc, the process-tree killer), what a run records (`outcome`), a repository's lectures in turn
(`lectures`) with the share a shard runs (`shard`), the runs reused by their key (`cache`) and the lines a person
follows (`progress`), and this host's single-thread speed (`host_probe`).

May import: jaxci.audit.reading (the notebook reader), jaxci.util, and the runtime (jaxci.jaxmon, jaxci.nvml,
jaxci.accel); never the judging or writing of verdicts. benchmarks/notebooks.py imports `run_notebook` and
`read_notebook` from this package (installed per benchmarked commit): keep these names and `NotebookRun`,
`CellTiming` stable.
"""

from jaxci.audit.reading.notebook import NotebookReadError, read_notebook
from jaxci.audit.runner.ending import LectureStopped, request_stop
from jaxci.audit.runner.kernel import kernel_env, run_notebook
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
)
from jaxci.audit.runner.scratch import scratch_copy

__all__ = ["DEAD", "ERROR", "NO_KERNEL", "OK", "RAISES_TAG", "SKIP_TAG", "TIMEOUT", "UNREADABLE", "CellTiming",
           "LectureStopped", "NotebookReadError", "NotebookRun", "kernel_env", "read_notebook", "request_stop",
           "run_notebook", "scratch_copy"]

"""Workloads that die in the ways the harness must recognise (run in harness workers, never in pytest)."""

import os
import signal
import subprocess
import sys
import time


def ok(value=1):
    return {"value": value}


def abort():
    print("about to abort", file=sys.stderr, flush=True)
    os.abort()  # SIGABRT, no Python traceback: what an XLA fatal error looks like from outside


def sigkill():
    os.kill(os.getpid(), signal.SIGKILL)  # what the OOM killer does


def hang(pid_file=None):
    """Sleep forever; with pid_file, first start a child that sleeps too (it must not outlive the harness)."""
    if pid_file:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with open(pid_file, "w") as fh:
            fh.write(str(child.pid))
    time.sleep(3600)


def raise_error():
    raise RuntimeError("RESOURCE_EXHAUSTED: pretend the device is full")


def exit_quietly(code=3):
    sys.exit(code)


def report_env(names):
    """The variables the worker sees, and whether JAX was imported before the workload started."""
    return {"env": {n: os.environ.get(n) for n in names}, "jax_imported": "jax" in sys.modules}

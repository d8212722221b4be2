"""Setup that the suite, kernel and process tests share: a fresh interpreter, a kernel jitted as the benchmarks
run it, and whether a process is still alive."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import psutil

from tests.asvutil import REPO


def python(*args: str, timeout: float = 300, cwd=REPO, **kwargs) -> subprocess.CompletedProcess:
    """This interpreter run with `args` (`-c CODE`, `-m MODULE ...`) in a fresh process, its text output kept."""
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          **kwargs)


def last_json(proc: subprocess.CompletedProcess):
    """The JSON a fresh interpreter printed last, once it exited 0."""
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def alive(pid: int) -> bool:
    """The process runs (a zombie, waiting to be reaped, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone(pid: int, timeout: float) -> bool:
    """The process ended within `timeout` seconds (a killed process may take a moment to go)."""
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def jitted_as(fn, dtype: str, *args):
    """`fn(*args)` jitted with x64 as the benchmark of `dtype` sets it, as NumPy; its dtype is `dtype`."""
    import jax
    import numpy as np

    from tests.jaxmode import x64_for

    with x64_for(dtype):
        got = np.asarray(jax.jit(fn)(*args))
    assert got.dtype == np.dtype(dtype)
    return got

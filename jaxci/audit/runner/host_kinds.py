"""Host work split by kind, in the lecture's kernel (issue 81 item 1): of a cell's CPU seconds, how many the main
thread spent interpreting Python (a loop of small NumPy calls included: its cost is the interpreter's), how many it
spent inside native code (NumPy/SciPy C loops on large arrays, LAPACK, a compiled Numba function, a jitted call),
and how many other threads spent (multi-threaded BLAS/OpenMP, XLA's threads).

The mechanism changes nothing the lecture computes and costs a wake-up every INTERVAL_S: a daemon thread that reads
the main thread's CPU clock (`time.pthread_getcpuclockid`) and notes how long it waited for the GIL on waking. The
interpreter holds the GIL and gives it up only when a waiting thread has asked for it for one switch interval
(`sys.getswitchinterval()`, 5 ms): a wait of about that long means the main thread was interpreting. Native code
that releases the GIL (NumPy on large arrays, BLAS, Numba with nogil) lets the sampler in at once; native code that
holds it makes it wait past the interval. Each interval is weighed by the main thread's CPU seconds in it, so waiting
(sleep, I/O, a lock) counts as neither. The process's CPU clock minus the main thread's gives the other threads.
(Where the innermost frame stays put tells nothing: the interpreter gives up the GIL at the same instructions, so a
Python loop is always seen at its back jump.)

Like the other kernel-side modules it runs inside the kernel: standard library only (kernel._kernel_setup_code)."""

import sys as _sys
import threading as _threading
import time as _time

INTERVAL_S = 0.01


def run_delay() -> float | None:
    """Seconds this thread has waited on a run queue for a core since it started (Linux schedstat's run_delay;
    None where the kernel does not keep it): what a busy machine adds to a cell's wall time, and to the sampler's
    own wake-ups (taken out of its wait for the GIL)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class HostKinds:
    """The sampler: start() once per kernel; mark() at a cell's start; split() at its end."""

    def __init__(self, interval: float = INTERVAL_S):
        self.interval = interval
        self.main = _threading.main_thread().ident
        self.clock: int | None = None  # not on this platform: split() says nothing
        try:
            self.clock = _time.pthread_getcpuclockid(self.main or 0)
        except (AttributeError, OSError):
            pass
        self.python_s = self.native_s = 0.0
        self.marks = (0.0, 0.0, 0.0)
        self._last = None
        self._stop = _threading.Event()

    def _kind(self, waited: float) -> str:
        """The kind an interval's main-thread CPU goes to, by how long the sampler waited for the GIL."""
        switch = _sys.getswitchinterval()
        return "python" if 0.2 * switch <= waited <= 1.5 * switch else "native"

    def _loop(self, clock: int) -> None:
        cpu0 = _time.clock_gettime(clock)
        while True:
            queued = run_delay() or 0.0  # read first: its file read gives up the GIL and waits for it again
            asked = _time.perf_counter()
            if self._stop.wait(self.interval):
                return
            woke = _time.perf_counter()
            # the GIL, after the timed wait: less what a busy machine kept this thread waiting for a core
            waited = max(woke - asked - self.interval - ((run_delay() or 0.0) - queued), 0.0)
            cpu = _time.clock_gettime(clock)
            used = max(cpu - cpu0, 0.0)
            if self._kind(waited) == "python":
                self.python_s += used
            else:
                self.native_s += used
            cpu0 = cpu

    def start(self) -> None:
        if self.clock is None:
            return
        _threading.Thread(target=self._loop, args=(self.clock,), name="jaxci-host-kinds", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def mark(self) -> None:
        self.marks = (self.python_s, self.native_s, _time.process_time())

    def split(self, busy_s: float | None) -> dict:
        """{python_s, native_s, threads_s}: the cell's main-thread CPU (`busy_s`, the thread's own clock) shared
        by the sampled kinds, and the other threads' CPU seconds; {} where the clock is not there."""
        if self.clock is None or busy_s is None:
            return {}
        python, native = self.python_s - self.marks[0], self.native_s - self.marks[1]
        process = _time.process_time() - self.marks[2]
        seen = python + native
        share = native / seen if seen > 0 else 0.0
        return {"python_s": busy_s * (1 - share), "native_s": busy_s * share,
                "threads_s": max(process - busy_s, 0.0)}

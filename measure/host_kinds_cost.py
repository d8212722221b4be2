"""What the host-kinds sampler (jaxci.audit.runner.host_kinds) costs the work it watches: a pure-Python loop (the
case where the sampler makes the interpreter give up the GIL every wake-up) and a GIL-releasing NumPy sort, each
timed without and with the sampler running, alternated, the minimum of REPEATS each (the minimum: the machine may
be shared). Issue 81 item 1's budget is the audit's 1.15x over plain execution.

    .venv/bin/python measure/host_kinds_cost.py
"""

import time

import numpy as np

from jaxci.audit.runner.host_kinds import HostKinds

REPEATS = 9


def python_loop() -> None:
    total = 0
    for i in range(2_000_000):
        total += i % 7


ARRAY = np.random.default_rng(0).random(4_000_000)


def numpy_sort() -> None:
    np.sort(ARRAY)


def timed(work) -> float:
    t0 = time.perf_counter()
    work()
    return time.perf_counter() - t0


def main() -> None:
    for name, work in (("pure-Python loop", python_loop), ("NumPy sort (GIL released)", numpy_sort)):
        plain, watched = [], []
        for _ in range(REPEATS):
            plain.append(timed(work))
            kinds = HostKinds()
            kinds.start()
            kinds.mark()
            watched.append(timed(work))
            kinds.stop()
            time.sleep(0.02)
        print(f"{name:28s} plain {min(plain):.4f} s  with the sampler {min(watched):.4f} s  "
              f"x{min(watched) / min(plain):.3f}")


if __name__ == "__main__":
    main()

"""The audit's host probe on a quiet host and beside CPU-bound processes (issue 81 item 3): the probe as the audit
takes it (jaxci.audit.runner.host_probe.probe: the fastest of 9 in this thread's CPU time) against the rule it
replaced (the median of 3 in wall time), alternating quiet and busy rounds so that drift falls on both.

    .venv/bin/python measure/host_probe_busy.py [--rounds 5] [--busy 2]

Run it alone (nothing else timed or running): it starts `--busy` pure-Python spinners itself for the busy rounds.
Prints one line per round and a summary: each rule's busy/quiet ratio of medians.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time

from jaxci.audit.runner import host_probe


def _spin(stop) -> None:
    """A CPU-bound process: an interpreter loop until `stop` is set."""
    x = 0
    while not stop.is_set():
        for i in range(100_000):
            x += i


def _old_rule(int_sum, n: int = host_probe.PROBE_N) -> float:
    """The probe before issue 81: the median of 3 wall-clock runs."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        int_sum(n)
        times.append(time.perf_counter() - t0)
    return statistics.median_high(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="CPU-bound processes in a busy round")
    args = parser.parse_args()
    int_sum = host_probe.int_sum_of()
    ctx = mp.get_context("spawn")
    got: dict = {"quiet": ([], []), "busy": ([], [])}
    for k in range(args.rounds):
        for state in ("quiet", "busy"):
            stop, spinners = ctx.Event(), []
            if state == "busy":
                spinners = [ctx.Process(target=_spin, args=(stop,)) for _ in range(args.busy)]
                for p in spinners:
                    p.start()
                time.sleep(1.0)
            new, old = host_probe.probe(), _old_rule(int_sum)
            load = os.getloadavg()[0]
            stop.set()
            for p in spinners:
                p.join()
            got[state][0].append(new.seconds)
            got[state][1].append(old)
            shown = f"{new.seconds:.4f}" if new.seconds else new.text[:60]
            print(f"round {k + 1} {state:5}: probe (CPU, fastest of 9) {shown} s; old rule (wall, median of 3) "
                  f"{old:.4f} s; load {load:.2f}", flush=True)
            time.sleep(2.0)
    for i, name in enumerate(("probe (CPU time, fastest of 9)", "old rule (wall time, median of 3)")):
        quiet = [v for v in got["quiet"][i] if v]
        busy = [v for v in got["busy"][i] if v]
        if quiet and busy:
            q, b = statistics.median(quiet), statistics.median(busy)
            print(f"{name}: quiet {q:.4f} s, beside {args.busy} spinner(s) {b:.4f} s: x{b / q:.3f} "
                  f"({len(busy)} of {args.rounds} busy rounds trusted)")


if __name__ == "__main__":
    main()

"""Progress of an executed audit a person can follow: which lecture, how many are left, the time so far and an
expected finish. A tqdm bar on a terminal; plain lines where stderr is not a terminal or CI=true (a CI log
keeps every line, and a bar's carriage returns would make it unreadable), e.g.

    jaxci audit: [3/20] lecture.md (cpu) 12.3 s; elapsed 1 min 05 s, about 4 min left

"About N left" is a model, said as such in the docs: the remaining runs' weights (a previous audit's seconds, or
the static weights of jaxci.audit.runner.shard) scaled by how the finished runs' measured seconds compare with
their weights; before any run has finished, the weights themselves.
"""

from __future__ import annotations

import os
import sys
import time


def plain_wanted(stream=None) -> bool:
    """Plain lines, not a bar: stderr is not a terminal, or the CI variable is set true (GitHub Actions)."""
    stream = stream or sys.stderr
    return os.environ.get("CI", "").lower() == "true" or not getattr(stream, "isatty", lambda: False)()


def duration(seconds: float) -> str:
    """12.3 s, 1 min 05 s, 2 h 03 min."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def left(weights_done: float, seconds_done: float, weights_left: float) -> float:
    """Seconds expected for the rest: the remaining weight at the finished runs' seconds per unit of weight."""
    if weights_done > 0 and seconds_done > 0:
        return weights_left * seconds_done / weights_done
    return weights_left


class Progress:
    """One audit's runs in turn: `begin(label)` before each, `end(label, seconds, reused)` after; `close()` at
    the end. `weights` (label -> rough seconds) gives the expected finish; without them none is said."""

    def __init__(self, labels: list[str], weights: dict[str, float] | None = None, *, enabled: bool = True,
                 stream=None, plain: bool | None = None, clock=time.monotonic):
        self.labels, self.weights = labels, weights or {}
        self.stream = stream or sys.stderr
        self.enabled = enabled and bool(labels)
        self.plain = plain_wanted(self.stream) if plain is None else plain
        self.clock, self.start = clock, clock()
        self.done = 0
        self.weight_done = self.seconds_done = 0.0
        self.bar = None
        if self.enabled and not self.plain:
            from tqdm import tqdm

            self.bar = tqdm(total=len(labels), desc="executing lectures", unit="run", leave=False, file=self.stream)

    def begin(self, label: str) -> None:
        if self.bar is not None:
            rest = self.expected_left()
            self.bar.set_postfix_str(label + (f"; about {duration(rest)} left" if rest is not None else ""))

    def expected_left(self) -> float | None:
        """Seconds expected for the runs not finished yet (None without weights or when none is left)."""
        rest = self.labels[self.done:]
        if not rest or not self.weights:
            return None
        return left(self.weight_done, self.seconds_done, sum(self.weights.get(r, 0.0) for r in rest))

    def end(self, label: str, seconds: float, reused: bool = False) -> None:
        """One run finished (or was reused: it then costs nothing here and does not teach the rate)."""
        self.done += 1
        if not reused:
            self.weight_done += self.weights.get(label, 0.0)
            self.seconds_done += seconds
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(1)
            return
        print(self.line(label, seconds, reused), file=self.stream, flush=True)

    def line(self, label: str, seconds: float, reused: bool = False) -> str:
        elapsed = self.clock() - self.start
        what = "reused (unchanged)" if reused else duration(seconds)
        text = f"jaxci audit: [{self.done}/{len(self.labels)}] {label} {what}; elapsed {duration(elapsed)}"
        rest = self.expected_left()
        return text + (f", about {duration(rest)} left" if rest is not None else "")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

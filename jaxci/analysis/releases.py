"""Regressions and improvements between consecutive JAX releases, per machine and benchmark combination.

The history (`jaxci history`, or pin commits on main) gives one result per JAX release. A step between two
consecutive measured releases counts when the time moved by more than the upgrade factor
(env_matrix/upgrade.toml) AND the two interquartile ranges do not overlap (asv's rule of thumb: a change
inside the spread of the samples is noise). A regression is "undone" at the first later release whose time
is back within the factor of the time before it.

Such a step is a candidate, not a fact: a neighbour's test suite on the same cores moves a multi-threaded kernel
by x100 between two releases measured minutes apart. A step is **confirmed** only by the release watch's rule:
both releases measured again, back to back, on a quiet machine (other processes used at most
QUIET_OTHERS_PER_CPU of each CPU through the rerun: the rerun's own use is not counted), and the rerun still
past the factor the same way (`jaxci history --confirm`, records in
results/<machine>/conditions.toml). Everything else is "unconfirmed (noise?)", shown apart with the load it
was measured at.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from jaxci.analysis import group, is_timing
from jaxci.util.versions import release_key


@dataclass(frozen=True)
class ReleaseStep:
    machine: str
    benchmark: str
    params: tuple            # (name, value) pairs: the sizes, dtype, device
    before: str              # JAX release
    after: str
    t_before: float
    t_after: float
    kind: str                # "regression" | "improvement"
    undone_in: str | None    # regression: the release that brought the time back; improvement: the release
                             # before the regression it fixes
    last: str                # the newest release measured for this combination
    t_last: float | None = None  # its time at `last`: how much of a regression is still there today
    confirmed: bool = False  # re-measured on a quiet machine and still past the factor the same way
    rerun_ratio: float | None = None   # the confirming (or refuting) rerun's ratio, when one was run
    load: float | None = None          # the higher median load of the two releases' runs; None: not recorded
    others: float | None = None        # the most CPUs other processes used through either run; None: not recorded

    @property
    def ratio(self) -> float:
        return self.t_after / self.t_before

    @property
    def today_ratio(self) -> float | None:
        """The time at the newest measured release over the time before the step (None: not recorded)."""
        return None if self.t_last is None else self.t_last / self.t_before

    def undone_text(self, factor: float) -> str:
        """Whether a regression is undone today, against the release before it: "yes, in R"; "partly" when the
        newest release is back by more than `factor` from the step but still past `factor` over the time before
        it; "no" with today's ratio otherwise. An improvement says so."""
        if self.kind != "regression":
            return "improvement"
        if self.undone_in:
            return f"yes, in {self.undone_in}"
        today = self.today_ratio
        if today is None or self.t_last is None:
            return f"no (still at {self.last})"
        if self.t_last * factor < self.t_after:
            return f"partly: x{today:.3g} at {self.last} (x{self.ratio:.3g} at {self.after})"
        return f"no: x{today:.3g} at {self.last}"


def _separated(a, b) -> bool:
    """True when the interquartile ranges of two records do not overlap (or either has none recorded)."""
    if None in (a.q25, a.q75, b.q25, b.q75):
        return True
    return a.q75 < b.q25 or b.q75 < a.q25


def per_release(records) -> dict:
    """(machine, benchmark, params) -> [(release, record)] oldest first, one record per release (newest file)."""
    timed = [r for r in records if r.ok and is_timing(r) and release_key(r.jax_version) and r.value > 0]
    key = lambda r: (r.machine, r.benchmark, tuple(r.params.items()))  # asv's param order: the size first
    out = {}
    for k, recs in group(timed, key).items():
        best = {r.jax_version: r for r in sorted(recs, key=lambda r: (r.date, r.file))}
        if len(best) > 1:
            out[k] = sorted(best.items(), key=lambda kv: release_key(kv[0]))
    return out


def release_steps(records, factor: float) -> list[ReleaseStep]:
    """Every step beyond `factor` between consecutive measured releases, in machine/benchmark order."""
    steps: list = []
    for (machine, bench, params), series in sorted(per_release(records).items(), key=lambda kv: str(kv[0])):
        last, t_last = series[-1][0], series[-1][1].value
        for i in range(1, len(series)):
            (v0, r0), (v1, r1) = series[i - 1], series[i]
            ratio = r1.value / r0.value
            if not _separated(r0, r1) or 1 / factor <= ratio <= factor:
                continue
            undone = None
            if ratio > factor:
                undone = next((v for v, r in series[i + 1:] if r.value / r0.value <= factor), None)
            else:  # an improvement that brings back the time of before an earlier regression: say so
                undone = next((s.before for s in reversed(steps) if (s.machine, s.benchmark, s.params) ==
                               (machine, bench, params) and s.kind == "regression" and s.undone_in == v1), None)
            steps.append(ReleaseStep(machine, bench, params, v0, v1, r0.value, r1.value,
                                     "regression" if ratio > factor else "improvement", undone, last, t_last))
    return steps


#: the most CPU per CPU of the machine that *other* processes may use through a rerun that confirms a step (0.5
#: of a CPU on the 2-vCPU build VM). The run's own use is discounted (util.loadavg.Load.others): the load average
#: alone counts asv, pip and the benchmark too (1.0-1.3 on that VM with nothing else running), so no rule on it
#: could call the VM quiet. Above a quarter of the machine, a neighbour shares the cache and memory bandwidth of
#: the pinned kernel's CPU for most of the run. Records from before the split are judged by the median load
#: average against the same figure (the stricter reading).
QUIET_OTHERS_PER_CPU = 0.25


def quiet_limit(cpus: int | None) -> float:
    """The most CPUs other processes may use through a run on a machine of `cpus` CPUs for it to count as quiet:
    the one rule `jaxci history --max-load`'s default, its reruns and `judge` read."""
    return QUIET_OTHERS_PER_CPU * max(1, cpus or 1)


def params_text(params) -> str:
    """A step's params as one key: "op=cholesky, n=256, dtype=float64, device=cpu" (asv's order)."""
    return ", ".join(f"{k}={v}" for k, v in params)


def _past(ratio: float | None, factor: float, kind: str) -> bool:
    if ratio is None:
        return False
    return ratio > factor if kind == "regression" else ratio < 1 / factor


def judge(steps: list[ReleaseStep], runs: dict, confirmations: dict, factor: float, cores: dict) -> list[ReleaseStep]:
    """Each step with its confirmation and load: `runs` and `confirmations` map a machine to its
    results.conditions records, `cores` a machine to its CPU count. Pure: the records are read by the caller."""
    out = []
    for s in steps:
        mine = [r for r in runs.get(s.machine, ()) if r.release in (s.before, s.after)]
        loads = [r.load_median for r in mine if r.load_median is not None]
        others = [r.others for r in mine if r.others is not None]
        quiet = quiet_limit(cores.get(s.machine))
        key = (s.benchmark, params_text(s.params), s.before, s.after)
        rerun = next((c for c in reversed(confirmations.get(s.machine, ()))
                      if (c.benchmark, c.params, c.before, c.after) == key), None)
        confirmed = bool(rerun and _past(rerun.rerun_ratio, factor, s.kind) and rerun.measured_load.quiet(quiet))
        out.append(replace(s, confirmed=confirmed, rerun_ratio=rerun.rerun_ratio if rerun else None,
                           load=max(loads) if loads else None, others=max(others) if others else None))
    return out


def releases_measured(records) -> dict[str, list[str]]:
    """machine -> the JAX releases with at least one timing, oldest first."""
    out: dict[str, set] = {}
    for r in records:
        if r.ok and release_key(r.jax_version):
            out.setdefault(r.machine, set()).add(r.jax_version)
    return {m: sorted(v, key=release_key) for m, v in sorted(out.items())}


def _fmt_t(seconds: float) -> str:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _size(step: ReleaseStep) -> float:
    return max(step.ratio, 1 / step.ratio)


def _load_text(step: ReleaseStep) -> str:
    if step.load is None:
        return "not recorded"
    return f"{step.load:.2f}" + ("" if step.others is None else f" (others {step.others:.2f} CPU)")


def _rows(mine: list[ReleaseStep], limit: int, confirmed: bool, factor: float) -> list[str]:
    """One table: a row per (benchmark, from, to, kind), largest first, at most `limit`, the rest counted."""
    groups = group(mine, lambda s: (s.benchmark, s.before, s.after, s.kind))
    rows = sorted((sorted(g, key=_size, reverse=True) for g in groups.values()),
                  key=lambda g: _size(g[0]), reverse=True)
    last = "rerun" if confirmed else "load"
    lines = [f"| benchmark | params | from | to | ratio | times | undone | {last} |",
             "|---|---|---|---|---|---|---|---|"]
    for group_ in rows[:limit]:
        s = group_[0]
        params = params_text(s.params)
        if len(group_) > 1:
            params += f" (and {len(group_) - 1} more, the smallest step x{group_[-1].ratio:.3g})"
        undone = s.undone_text(factor)
        tail = f"x{s.rerun_ratio:.3g}" if confirmed else _load_text(s)
        lines.append(f"| {s.benchmark} | {params} | {s.before} | {s.after} | x{s.ratio:.3g} | "
                     f"{_fmt_t(s.t_before)} -> {_fmt_t(s.t_after)} | {undone} | {tail} |")
    rest = rows[limit:]
    if rest:
        sizes = [_size(g[0]) for g in rest]
        lines.append(f"\n{len(rest)} smaller steps not listed (x{min(sizes):.3g} .. x{max(sizes):.3g} either way).")
    return lines


def confirm_command(machine: str) -> str:
    return f"jaxci history --confirm --machine {machine}"


def releases_md(steps: list[ReleaseStep], measured: dict[str, list[str]], factor: float, limit: int = 40) -> str:
    """The findings section: per machine, the confirmed steps between consecutive releases, then the
    unconfirmed ones apart ("noise?"), with the load they were measured at.

    One row per (benchmark, from, to, kind), largest first: the combination that moved most, then how many
    other combinations of that benchmark took the same step (a kernel regressed by a release usually moves at
    every size). At most `limit` rows per table; the rest are counted, with the range of their ratios."""
    multi = {m: v for m, v in measured.items() if len(v) > 1}
    if not multi:
        return ("Not measured: no machine has results for more than one JAX release. "
                "`jaxci history` backfills them (docs/history.md).\n")
    lines = [f"A step is a candidate when the time moved by more than x{factor:g} (env_matrix/upgrade.toml) between "
             "two consecutive measured releases and the interquartile ranges do not overlap. It is **confirmed** "
             "only when both releases were measured again, back to back, while other processes used at most "
             f"{QUIET_OTHERS_PER_CPU:g} of each CPU (the rerun's own use not counted), and the rerun is still past "
             "the factor the same way (the release watch's rule; docs/history.md). Unconfirmed steps are listed "
             "apart, with the highest median load of the two releases' runs and, where recorded, the CPUs other "
             "processes used: read them as noise until a rerun confirms them. An improvement that undoes a "
             "listed regression is not listed again: the regression's row names the release that undid it.\n"]
    for machine, versions in multi.items():
        mine = [s for s in steps if s.machine == machine and not (s.kind == "improvement" and s.undone_in)]
        lines.append(f"### {machine}: {len(versions)} releases ({versions[0]} .. {versions[-1]})\n")
        if not mine:
            lines.append(f"No benchmark moved by more than x{factor:g} between consecutive releases.\n")
            continue
        sure = [s for s in mine if s.confirmed]
        unsure = [s for s in mine if not s.confirmed]
        if sure:
            lines += ["Confirmed:\n"] + _rows(sure, limit, True, factor) + [""]
        else:
            lines.append("No confirmed step.\n")
        if unsure:
            lines += [f"Unconfirmed (noise?): `{confirm_command(machine)}` re-measures them.\n"]
            lines += _rows(unsure, limit, False, factor) + [""]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PinAdvice:
    target: str | None            # the release to pin (None: no release history measured)
    between: tuple = ()           # confirmed steps after the pin up to the target (ReleaseStep)
    held_back_by: tuple = ()      # confirmed regressions still standing at the newest release, after the target


def pin_advice(steps: list[ReleaseStep], measured: dict[str, list[str]], pin: str | None,
               factor: float) -> PinAdvice:
    """Which JAX release to pin, from `pin`: the newest measured release, unless a confirmed regression after the
    pin still stands there (not undone, and past `factor` at the newest release): then the release before the
    first such regression. Unconfirmed steps never move the advice (they may be noise)."""
    releases = sorted({r for rs in measured.values() for r in rs if release_key(r)}, key=release_key)
    if not releases:
        return PinAdvice(None)
    start = release_key(pin) if pin and release_key(pin) else ()
    confirmed = sorted((s for s in steps if s.confirmed and release_key(s.after) > start),
                       key=lambda s: release_key(s.after))
    standing = [s for s in confirmed if s.kind == "regression" and not s.undone_in
                and (s.today_ratio is None or s.today_ratio > factor)]
    target = standing[0].before if standing else releases[-1]
    if pin and start and release_key(target) < start:
        target = pin
    between = tuple(s for s in confirmed if release_key(s.after) <= release_key(target))
    held = tuple(s for s in standing if release_key(s.after) > release_key(target))
    return PinAdvice(target, between, held)

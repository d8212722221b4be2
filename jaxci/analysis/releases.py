"""Regressions and improvements between consecutive JAX releases, per machine and benchmark combination.

The history (`jaxci history`, or pin commits on main) gives one result per JAX release. A step between two
consecutive measured releases counts when the time moved by more than the upgrade factor
(env_matrix/upgrade.toml) AND the two interquartile ranges do not overlap (asv's rule of thumb: a change
inside the spread of the samples is noise). A regression is "undone" at the first later release whose time
is back within the factor of the time before it.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis import group, is_timing
from jaxci.util.versions import release_key


@dataclass(frozen=True)
class Step:
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

    @property
    def ratio(self) -> float:
        return self.t_after / self.t_before


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
        best = {}
        for r in recs:
            if r.jax_version not in best or (r.date, r.file) >= (best[r.jax_version].date, best[r.jax_version].file):
                best[r.jax_version] = r
        if len(best) > 1:
            out[k] = sorted(best.items(), key=lambda kv: release_key(kv[0]))
    return out


def release_steps(records, factor: float) -> list[Step]:
    """Every step beyond `factor` between consecutive measured releases, in machine/benchmark order."""
    steps = []
    for (machine, bench, params), series in sorted(per_release(records).items(), key=lambda kv: str(kv[0])):
        last = series[-1][0]
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
            steps.append(Step(machine, bench, params, v0, v1, r0.value, r1.value,
                              "regression" if ratio > factor else "improvement", undone, last))
    return steps


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


def _size(step: Step) -> float:
    return max(step.ratio, 1 / step.ratio)


def releases_md(steps: list[Step], measured: dict[str, list[str]], factor: float, limit: int = 40) -> str:
    """The findings section: per machine, the regressions and improvements between consecutive releases.

    One row per (benchmark, from, to, kind), largest first: the combination that moved most, then how many
    other combinations of that benchmark took the same step (a kernel regressed by a release usually moves at
    every size). At most `limit` rows per machine; the rest are counted, with the range of their ratios."""
    multi = {m: v for m, v in measured.items() if len(v) > 1}
    if not multi:
        return ("Not measured: no machine has results for more than one JAX release. "
                "`jaxci history` backfills them (docs/history.md).\n")
    lines = [f"A step counts when the time moved by more than x{factor:g} (env_matrix/upgrade.toml) between two "
             "consecutive measured releases and the interquartile ranges do not overlap. Largest first; on a "
             "shared or CI-scale machine, steps under about x1.5 are mostly its noise. An improvement that undoes "
             "a listed regression is not listed again: the regression's row names the release that undid it.\n"]
    for machine, versions in multi.items():
        mine = [s for s in steps if s.machine == machine and not (s.kind == "improvement" and s.undone_in)]
        lines.append(f"### {machine}: {len(versions)} releases ({versions[0]} .. {versions[-1]})\n")
        if not mine:
            lines.append(f"No benchmark moved by more than x{factor:g} between consecutive releases.\n")
            continue
        groups: dict[tuple, list[Step]] = {}
        for s in mine:
            groups.setdefault((s.benchmark, s.before, s.after, s.kind), []).append(s)
        rows = sorted((sorted(g, key=_size, reverse=True) for g in groups.values()),
                      key=lambda g: _size(g[0]), reverse=True)
        lines.append("| benchmark | params | from | to | ratio | times | undone |")
        lines.append("|---|---|---|---|---|---|---|")
        for group_ in rows[:limit]:
            s = group_[0]
            params = ", ".join(f"{k}={v}" for k, v in s.params)
            if len(group_) > 1:
                params += f" (and {len(group_) - 1} more, the smallest step x{group_[-1].ratio:.3g})"
            if s.kind == "regression":
                undone = f"yes, in {s.undone_in}" if s.undone_in else f"no (still at {s.last})"
            else:
                undone = "improvement"
            lines.append(f"| {s.benchmark} | {params} | {s.before} | {s.after} | x{s.ratio:.3g} | "
                         f"{_fmt_t(s.t_before)} -> {_fmt_t(s.t_after)} | {undone} |")
        rest = rows[limit:]
        if rest:
            sizes = [_size(g[0]) for g in rest]
            lines.append(f"\n{len(rest)} smaller steps not listed (x{min(sizes):.3g} .. x{max(sizes):.3g} either way).")
        lines.append("")
    return "\n".join(lines) + "\n"


def upgrade_factor(directory=None, default: float = 1.3) -> float:
    """The slowdown factor of env_matrix/upgrade.toml (the pin-bump gate's), so both use one threshold."""
    import tomllib

    from jaxci.catalogue import env_matrix_dir

    try:
        value = tomllib.loads(((directory or env_matrix_dir()) / "upgrade.toml").read_text()).get("factor")
    except (OSError, ValueError):
        return default
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1 else default

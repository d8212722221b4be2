"""`jaxci history --confirm`: re-measure each candidate step of the release history, both releases back to back.

A step between two releases measured minutes apart in a backfill may be the neighbours' load, not the release. The
release watch trusts a step only when a rerun shows it again; this applies the same rule to the history: for every
(benchmark, from, to) of the candidate regressions, `asv run` the benchmark on the release before and the release
after, one after the other, with the load sampled through both, and record the rerun's ratio per combination in
results/<machine>/conditions.toml. The rerun's values replace the first run's in asv's result files (asv keeps one
result per commit), so a refuted step simply leaves the history; a confirmed one stays, now with its rerun.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from jaxci.results import conditions
from jaxci.results.history import AsvRuns, run_release
from jaxci.results.records import load_results
from jaxci.util.loadavg import Sampler


@dataclass(frozen=True)
class Target:
    """One rerun: a benchmark on two releases, and the combinations (params text -> first ratio) it decides."""

    benchmark: str
    before: str
    after: str
    first: dict           # params_text -> the first run's ratio


def _values(records, machine: str, benchmark: str, release: str) -> dict:
    """params_text -> value of `benchmark` on `release` among `records` (the results as they are now)."""
    out = {}
    for r in records:
        if r.machine == machine and r.benchmark == benchmark and r.jax_version == release and r.ok and r.value:
            out[", ".join(f"{k}={v}" for k, v in r.params.items())] = r.value
    return out


def confirm(runs: AsvRuns, targets: list[Target], commits: dict) -> list[conditions.Confirmation]:
    """Rerun the targets release pair by release pair (every benchmark of a pair in one asv run per release:
    the release before, then the release after, back to back) and record each combination's rerun ratio."""
    pairs: dict = {}
    for t in targets:
        pairs.setdefault((t.before, t.after), []).append(t)
    made = []
    machine, results_dir, out = runs.machine, runs.results_dir, runs.out
    for k, ((v0, v1), group) in enumerate(sorted(pairs.items()), 1):
        names = sorted({t.benchmark for t in group})
        print(f"jaxci history: confirm {k} of {len(pairs)}: {v0} -> {v1}: {', '.join(names)}", file=out, flush=True)
        # asv matches a parameterised benchmark as `name(params)`: `$` alone would select nothing
        pattern = [rf"^{re.escape(name)}(\(|$)" for name in names]
        with Sampler() as sampler:
            ok_before, why_before = run_release(runs, commits[v0], pattern, again=True)
            ok_after, why_after = run_release(runs, commits[v1], pattern, again=True)
        if not (ok_before and ok_after):
            print(f"jaxci history:   rerun failed: {why_before or why_after}; nothing recorded for it",
                  file=out, flush=True)
            continue
        date = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        load = sampler.load
        records = load_results(results_dir).records
        for t in group:
            before = _values(records, machine, t.benchmark, v0)
            after = _values(records, machine, t.benchmark, v1)
            for params, first in sorted(t.first.items()):
                ratio = after[params] / before[params] if params in after and params in before else None
                c = conditions.Confirmation(t.benchmark, params, v0, v1, first, ratio, load.samples, date,
                                            load.own, load.others)
                conditions.append_confirmation(results_dir, machine, c)
                made.append(c)
        print(f"jaxci history:   {load.text()}", file=out, flush=True)
    return made

"""The executed audit's sharded and incremental options (`jaxci audit --execute --shard i/N --cache DIR
--baseline FILE`): what one shard runs, which runs are reused, and the blocks they add to the audit JSON.

Kept beside jaxci.commands.audit so that module only calls in: `add_arguments` (the options), `prepare`
(before executing: the shard's lectures, the reuse of previous runs, the weights for progress) and `finish`
(the JSON's `execution` and `shard` blocks).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxci.audit.runner.cache import Reuse
    from jaxci.audit.runner.host_probe import Probe


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sharded and incremental executed audits (docs/audit.md)")
    g.add_argument("--shard", metavar="I/N", default=None,
                   help="execute only shard I of N (1-based): a deterministic, cost-balanced share of the lectures; "
                        "combine the shards' JSON with `jaxci audit merge`")
    g.add_argument("--shard-times", metavar="FILE", type=Path, default=None,
                   help="a previous audit JSON, or a build's Execution Statistics page (status.ipynb or .md), whose "
                        "seconds balance the shards and time the progress (default: --baseline's; else static weights)")
    g.add_argument("--cache", metavar="DIR", type=Path, default=None,
                   help="reuse a lecture's run stored here when its code cells, kernel environment (Python, jax, "
                        "jaxlib, numpy, numpyro) and platform are unchanged; store new runs here")
    g.add_argument("--baseline", metavar="FILE", type=Path, default=None,
                   help="a previous audit JSON (--execute --format json) whose unchanged runs are reused")
    g.add_argument("--reuse-failures", action="store_true",
                   help="with --baseline/--cache: reuse failed and timed-out runs too (a re-judge with new rules "
                        "that executes nothing that ran before; by default a failure runs again)")
    g.add_argument("--only", metavar="NAMES", default=None,
                   help="execute only these lectures (comma-separated names without suffix, or @FILE with one per "
                        "line); the others keep their static verdicts, each said as not selected")


@dataclass
class ShardPlan:
    reuse: Reuse
    weights: dict = field(default_factory=dict)
    spec: object = None  # jaxci.audit.runner.shard.Spec, or None when not sharded
    baseline_probe: Probe | None = None  # the --baseline audit's recorded host probe
    owned: list = field(default_factory=list)
    shard_block: dict = field(default_factory=dict)

    def owns(self, path: str) -> bool:
        """This run answers for the lecture (its exit status and failure lines): every lecture when unsharded."""
        return self.spec is None or path in self.owned


def _read_audit(option: str, path: Path) -> dict:
    from jaxci.audit.writing.record import AuditError, read
    from jaxci.util.validate import InputError

    try:
        return read(path)
    except AuditError as exc:
        raise InputError(f"{option} {path}: {exc}") from None


def _measured(args, verdicts) -> dict:
    """--shard-times: a previous audit JSON's measured seconds, or a build's Execution Statistics page (.ipynb or
    .md: jupyter-book's status page, Document | ... | Run Time (s) | Status) matched to the lectures by name."""
    from jaxci.audit.runner import shard
    from jaxci.util import safeio
    from jaxci.util.validate import InputError, one_line

    if args.shard_times.suffix not in (".ipynb", ".md"):
        return shard.measured_weights(_read_audit("--shard-times", args.shard_times))
    try:
        text = safeio.read_text(args.shard_times, 64 * 1024 * 1024)
    except (OSError, ValueError) as exc:
        raise InputError(f"--shard-times {args.shard_times}: {one_line(exc)}") from None
    seconds = shard.by_lecture(verdicts, shard.execution_statistics(text))
    if not seconds:
        raise InputError(f"--shard-times {args.shard_times}: no Execution Statistics row names a lecture here "
                         "(Document | Modified | Method | Run Time (s) | Status)")
    return seconds


def check(args) -> None:
    """The options checked before anything runs (InputError, one line)."""
    from jaxci.audit.runner.shard import ShardError, parse
    from jaxci.util.validate import InputError, folder_to_fill

    used = [o for o, v in (("--shard", args.shard), ("--cache", args.cache), ("--baseline", args.baseline),
                           ("--shard-times", args.shard_times), ("--only", args.only),
                           ("--reuse-failures", args.reuse_failures or None)) if v is not None]
    if used and not args.execute:
        raise InputError(f"{used[0]} needs --execute")
    if args.shard is not None:
        try:
            args.shard_spec = parse(args.shard)
        except ShardError as exc:
            raise InputError(str(exc)) from None
        if getattr(args, "ci", None):
            raise InputError("--ci with --shard: the CI audit judges the whole repository; run it unsharded")
        if args.format != "json":
            raise InputError("--shard needs --format json (the shards are merged with `jaxci audit merge`)")
    if args.cache is not None:  # made and checked now: a cache that cannot hold a run must not cost an execution
        folder_to_fill("--cache", args.cache)
    for option, path in (("--baseline", args.baseline), ("--shard-times", args.shard_times)):
        if path is not None and not path.is_file():
            raise InputError(f"{option} {path}: no such file")


#: the most unknown names a refusal lists (the rest are counted)
SHOWN = 5


def selected(option: str, verdicts) -> set[str]:
    """--only's lecture names (a name is a lecture file's stem); InputError for a name no lecture has, so a typo
    never silently narrows an audit. From @FILE: one name a line (or comma-separated), a BOM and CR line ends
    ignored; a refusal names its lines (`as written on line 3 of n.txt`), never what the file holds
    (`@/proc/self/environ` echoes nothing), and lists at most SHOWN unknown names (the rest counted)."""
    from jaxci.util.quoting import line
    from jaxci.util.validate import InputError

    entries = _from_file(option) if option.startswith("@") else [(line(n.strip(), 40), n.strip())
                                                                   for n in option.split(",")]
    entries = [(label, name) for label, name in entries if name and not name.startswith("#")]
    stems = {Path(v.path).stem for v in verdicts}
    unknown = list(dict.fromkeys(label for label, name in entries if name not in stems))
    if not entries:
        raise InputError("--only: no names")
    if unknown:
        more = f" and {len(unknown) - SHOWN:,} more" if len(unknown) > SHOWN else ""
        where = f" of {line(option[1:], 200)}" if option.startswith("@") else ""
        raise InputError(f"--only: no lecture named {', '.join(unknown[:SHOWN])}{more}{where}")
    return {name for _, name in entries}


def _from_file(option: str) -> list[tuple[str, str]]:
    """(label, name) of each name in --only @FILE, labelled by its line; a file that is not a text list of names
    (a control character: an environment block, a binary file) is refused without quoting it."""
    from jaxci.util import safeio
    from jaxci.util.quoting import line
    from jaxci.util.validate import InputError, one_line

    try:
        text = safeio.read_text(Path(option[1:]), 1024 * 1024).removeprefix("\ufeff")  # a Windows editor's BOM
    except (OSError, ValueError) as exc:
        raise InputError(f"--only {one_line(exc)}") from None
    rows = text.splitlines()
    bad = next((i for i, row in enumerate(rows, 1) if line(row) != row), None)
    if bad is not None:
        raise InputError(f"--only {line(option, 200)}: line {bad:,} holds a control character: not a list of lecture "
                         "names (its content is not shown)")
    return [(f"as written on line {i:,}", n.strip()) for i, row in enumerate(rows, 1) for n in row.split(",")]


def prepare(args, verdicts) -> ShardPlan:
    """Before executing: read the previous audits, weigh the lectures, and, for a shard, mark the lectures
    other shards run as not executed here (their static verdicts stay in this shard's JSON)."""
    from jaxci.audit.judging.judge import NOT_SELECTED
    from jaxci.audit.runner import host_probe, shard
    from jaxci.audit.runner.cache import Reuse

    baseline = _read_audit("--baseline", args.baseline) if args.baseline else None
    times = _measured(args, verdicts) if args.shard_times else \
        (shard.measured_weights(baseline) if baseline else None)
    weights = shard.weights(verdicts, times)
    plan = ShardPlan(Reuse(args.cache, baseline, cell_timeout=args.cell_timeout,
                           failures=getattr(args, "reuse_failures", False)), weights)
    plan.baseline_probe = host_probe.from_dict((baseline or {}).get("host_probe"))
    if args.only is not None:
        names = selected(args.only, verdicts)
        for v in verdicts:
            if Path(v.path).stem not in names:
                v.not_executed, v.selected = f"{NOT_SELECTED} (--only): static verdict stands", False
    spec = getattr(args, "shard_spec", None)
    if spec is None:
        return plan
    shards = shard.assign(weights, spec.count)
    owner = {p: i + 1 for i, paths in enumerate(shards) for p in paths}
    for v in verdicts:
        if owner[v.path] != spec.index:
            v.not_executed = f"executed by shard {owner[v.path]}/{spec.count}"
    plan.spec, plan.owned = spec, shards[spec.index - 1]
    load = shard.loads(weights, shards)
    plan.shard_block = {"spec": str(spec), "index": spec.index, "count": spec.count, "lectures": plan.owned,
                        "source": shard.source_digest(verdicts),
                        "balance": "measured seconds of " + str(args.shard_times or args.baseline) if times
                        else "static weights", "weight": round(load[spec.index - 1], 3),
                        "weights": [round(x, 3) for x in load]}
    if getattr(args, "ci", None) is None:
        args.ci = False  # each shard would judge the CI on its own share: the CI audit belongs to a whole run
    print(f"jaxci audit: shard {spec}: {len(plan.owned)} of {len(verdicts)} lectures "
          f"(weight {load[spec.index - 1]:.1f} of {sum(load):.1f}, {plan.shard_block['balance']})", file=sys.stderr)
    return plan


def finish(args, plan: ShardPlan | None, text: str) -> str:
    """The audit JSON with its `execution` block (every run's key, the reused runs) and, for a shard, its
    `shard` block. Other formats are returned as they are."""
    if plan is None or args.format != "json":
        return text
    doc = json.loads(text)
    doc["execution"] = plan.reuse.as_dict()
    if plan.spec is not None:
        doc["shard"] = plan.shard_block
    from jaxci.audit.writing.record import dumps

    return dumps(doc)

"""`jaxci history`: backfill the asv history over JAX releases on the machine at hand (jaxci.results.history).

One dated, tagged pin commit per release on the branch jax-history, `asv run` per release (resumable,
failures recorded with their reason); `--validate` only checks a workflow input. SIGINT and SIGTERM become
history.HistoryStopped: the asv run in flight is killed with its tree, the state saved, exit 128 + signal.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, ascii_float, refuse
from jaxci.machines.register import register
from jaxci.results.asvrun import asv_env
from jaxci.results.history import (
    BRANCH,
    TAG_PREFIX,
    AsvRuns,
    Chain,
    HistoryError,
    HistoryStopped,
    backfill,
    build_chain,
    checkout_root,
    choose,
    existing_base,
    load_state,
    parse_releases,
    restore_refs,
    state_path,
)
from jaxci.results.release_index import BACKEND_WHEEL, IndexAnswer, ask_index, numpyro_for, read_snapshot
from jaxci.util import safewrite
from jaxci.util.git import GitError
from jaxci.util.validate import SCALES, InputError, bench_filter, machine_name, number, quoted, scale


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="jaxci history",
                           description="Backfill the asv history over JAX releases on the machine at hand.")
    parser.add_argument("--releases", help="comma-separated JAX releases (default: every installable one)")
    parser.add_argument("--since", help="only releases at or after this one")
    parser.add_argument("--bench", action="append", default=[], help="asv --bench regex (repeatable)")
    parser.add_argument("--scale", choices=SCALES,  # default: validate.scale() reads JAXCI_SCALE, checked
                        help="JAXCI_SCALE for the runs (default: $JAXCI_SCALE, else ci)")
    parser.add_argument("--machine", help="registered asv machine (default: local-<hostname>, registered)")
    parser.add_argument("--backend", choices=tuple(BACKEND_WHEEL), default=os.environ.get("JAXCI_BACKEND", "cpu"))
    parser.add_argument("--base", help="base commit of the chain (default: the existing branch's, else HEAD)")
    parser.add_argument("--index-snapshot", metavar="FILE",
                        help="the package index's answer from FILE (format jax-release-index: releases, jaxlib, "
                             "dates, numpyro_jax) instead of asking the index: a fixed release list")
    parser.add_argument("--force", action="store_true", help="run releases already measured again")
    parser.add_argument("--dry-run", action="store_true", help="build the branch and tags, measure nothing")
    parser.add_argument("--validate", metavar="TEXT",
                        help="only check a workflow input: empty, 'all', or releases like 0.11.0,0.11.1")
    parser.add_argument("--github-output", metavar="FILE", help="with --validate: append history=<checked value>")
    parser.add_argument("--max-load", type=ascii_float, metavar="L",
                        help="re-run a release during which other processes used more than L CPUs on average "
                             "(the run's own use is not counted; default: 0.25 per CPU)")
    parser.add_argument("--cpus", metavar="LIST",
                        help="run asv and every benchmark on these CPUs only, e.g. 1 (its affinity: XLA's thread "
                             "pools size themselves to it, so multi-threaded kernels run on them alone; recorded "
                             "in conditions.toml)")
    parser.add_argument("--confirm", action="store_true",
                        help="only re-measure the candidate regressions of --machine's committed history (those of "
                             "--bench benchmarks into --releases releases, when given), both releases back to back, "
                             "and record the reruns (results/<machine>/conditions.toml)")
    parser.add_argument("--restore-refs", action="store_true",
                        help="only recreate the jax-v* tags and the branch of the pin commits main carries (no "
                             "network; what asv publish needs in a fresh clone), in the repository of the "
                             "current directory (or --repo)")
    parser.add_argument("--repo", metavar="DIR", default=None,
                        help="with --restore-refs: the jax-ci-bench checkout to restore them in (default: the "
                             "current directory's)")
    return parser


def restore_target(repo: str | None) -> Path:
    """The checkout --restore-refs writes refs into: the git top level of --repo (default: the current
    directory), which must be a jax-ci-bench checkout; never the checkout jaxci was installed from by default
    (a run elsewhere would write 46 tags and a branch there). Raises InputError."""
    from jaxci.util.git import git

    where = Path(repo) if repo else Path.cwd()
    option = f"--repo {where}" if repo else f"the current directory {where}"
    if not where.is_dir():
        raise InputError(f"--restore-refs: {option}: no such folder")
    try:
        top = Path(git(where, "rev-parse", "--show-toplevel", timeout=30))
    except (GitError, OSError):
        raise InputError(f"--restore-refs: {option} is not in a git repository: run it in the jax-ci-bench "
                         "checkout whose release tags to restore, or give --repo DIR") from None
    if not ((top / "asv.conf.json").is_file() and (top / "env_matrix").is_dir()):
        raise InputError(f"--restore-refs: {top} (the repository of {option}) is not a jax-ci-bench checkout "
                         "(no asv.conf.json and env_matrix/): nothing restored")
    return top


def _validate(text: str, github_output: str | None) -> int:
    """--validate: a workflow input checked and echoed (appended to $GITHUB_OUTPUT when asked)."""
    try:
        value = text.strip()
        value = value if value in ("", "all") else ",".join(parse_releases(value))
    except HistoryError as exc:
        return refuse("jaxci history", exc)
    if github_output:  # written before the value is echoed: a failed write is the one line said
        try:
            safewrite.write_text(github_output, f"history={value}\n", append=True, option="--github-output")
        except safewrite.UnsafeWrite as exc:
            return refuse("jaxci history", exc)
    print(f"jaxci history: {value or 'no backfill'}")
    return 0


def _chain(repo: Path, args) -> tuple[Chain, list[str]]:
    """The releases to measure and the pin-commit chain they sit on (built or reused)."""
    wanted = parse_releases(args.releases) if args.releases else None
    answer = _index_answer(repo, args)
    todo = choose(answer.releases, wanted, args.since)
    chain_releases = [v for v in answer.releases if v in answer.dates]
    base = args.base or _reusable_base(repo) or "HEAD"
    numpyro = {v: numpyro_for(v, answer.numpyro_jax) for v in chain_releases}
    chain = build_chain(repo, base, chain_releases, answer.dates, answer.jaxlib, numpyro)
    print(f"jaxci history: branch {BRANCH}: {len(chain.commits)} release commits over {chain.base[:8]} "
          f"({chain_releases[0]} .. {chain_releases[-1]}), tags {TAG_PREFIX}*", flush=True)
    if chain.moved_tags:
        print(f"jaxci history: warning: {len(chain.moved_tags)} tag(s) moved to the new chain over "
              f"{chain.base[:8]} ({chain.moved_tags[0]} .. {chain.moved_tags[-1]}); results taken on the old "
              "chain no longer sit on a release tag", file=sys.stderr)
    return chain, [v for v in todo if v in chain.commits]


def _index_answer(repo: Path, args) -> IndexAnswer:
    """--index-snapshot's fixed answer, else the package index's answer today."""
    if args.index_snapshot:
        print(f"jaxci history: the JAX releases of {args.index_snapshot} (--index-snapshot)", flush=True)
        return read_snapshot(args.index_snapshot)
    print("jaxci history: asking the package index which JAX releases install here ...", flush=True)
    return ask_index(args.backend, repo / ".jaxci" / "history" / "numpyro-jax-requirements.json")


#: what a release commit installs from its own tree (asv's wheel of it) while asv runs the benchmarks of the
#: checkout: where these differ between the chain's base and HEAD, the checkout's benchmarks meet an older jaxci
_INSTALLED_FROM_THE_PIN_COMMIT = ("jaxci", "pyproject.toml")


def _reusable_base(repo: Path) -> str | None:
    """The existing chain's base, when the checkout's benchmarks can run on it; HistoryError when they cannot.

    asv installs each release commit's own jaxci but runs the benchmarks of the checkout, so a chain over an
    older base (the committed reference history's) meets benchmarks that import what that jaxci lacks: every
    case would fail with ModuleNotFoundError. Refused up front, with the two ways on."""
    from jaxci.util.git import git

    base = existing_base(repo)
    if base is None:
        return None
    if git(repo, "diff", "--name-only", base, "HEAD", "--", *_INSTALLED_FROM_THE_PIN_COMMIT, timeout=60):
        raise HistoryError(
            f"the existing {BRANCH} chain sits on {base[:8]}, whose jaxci differs from this checkout's (asv runs "
            "this checkout's benchmarks against each release commit's jaxci, so they would fail): pass --base HEAD "
            f"for a chain over this checkout (its tags move), or --base {base[:8]} to measure on the old chain "
            "anyway")
    return base


def _summary(outcomes, machine: str, repo: Path, seconds: float) -> int:
    failed = [o for o in outcomes if o.status == "failed"]
    print(f"jaxci history: done in {seconds:.0f} s: "
          f"{sum(o.status == 'measured' for o in outcomes)} measured, "
          f"{sum(o.status == 'skipped' for o in outcomes)} already measured, {len(failed)} failed")
    for o in failed:
        print(f"  jax {o.release}: {o.reason}")
    print(f"jaxci history: state in {state_path(machine, repo)}; next: asv publish, then "
          f"asv compare {TAG_PREFIX}<old> {TAG_PREFIX}<new> --machine {machine}")
    return 1 if failed and len(failed) == len(outcomes) else 0


def _raise_interrupted(signum, frame):
    raise HistoryStopped(signum)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.validate is not None:
        return _validate(args.validate, args.github_output)
    if args.restore_refs:
        try:
            repo = restore_target(args.repo)
            tags, branch = restore_refs(repo)
        except (GitError, InputError, HistoryError) as exc:  # HistoryError: a pin commit dated off the calendar
            return refuse("jaxci history", ' '.join(str(exc).split())[:400])
        print(f"jaxci history: {tags} release tag(s) restored in {repo}" + (f", branch {BRANCH}" if branch else ""))
        return 0
    if args.repo:
        return refuse("jaxci history", "--repo goes with --restore-refs only")
    repo = checkout_root()
    try:
        args.scale = scale(args.scale, "ci")  # refused here, before a branch is built or asv started
    except InputError as exc:
        return refuse("jaxci history", exc)
    previous = {s: signal.signal(s, _raise_interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _confirm(repo, args) if args.confirm else _run(repo, args)
    except HistoryStopped as exc:
        print(f"jaxci history: interrupted by {exc.args[0]}: no asv run left behind, no ref half-moved; "
              "the state file records the release in flight; rerun the same command to resume", file=sys.stderr)
        return 128 + exc.signum
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _run(repo: Path, args) -> int:
    try:
        bench = [bench_filter("--bench", b) for b in args.bench]
        machine = machine_name("--machine", args.machine) if args.machine else None
        max_load = _max_load(args)
        cpus = _cpus(args)
        chain, todo = _chain(repo, args)
        if args.dry_run:
            print("jaxci history: --dry-run: would measure " + ", ".join(todo))
            return 0
        if not machine:
            machine = f"local-{socket.gethostname()}"
            register(machine, local=True)
        earlier = load_state(state_path(machine, repo))
        env = asv_env(args.scale, args.backend)
    except (HistoryError, InputError, GitError, subprocess.TimeoutExpired, OSError) as exc:
        return refuse("jaxci history", exc)
    _pin(cpus)
    start = time.monotonic()
    outcomes = backfill(AsvRuns(repo, machine, env, repo / "results"), todo, chain, bench, force=args.force,
                        earlier=earlier, max_load=max_load)
    return _summary(outcomes, machine, repo, time.monotonic() - start)


def _cpus(args) -> tuple[int, ...] | None:
    """--cpus as CPU numbers ("1", "0,1"), checked against the CPUs this process may run on; None when not given."""
    from jaxci.util.loadavg import cpus_in_use

    if args.cpus is None:
        return None
    parts = [p.strip() for p in str(args.cpus).split(",")]
    if not all(p.isascii() and p.isdigit() and len(p) <= 4 for p in parts):
        raise InputError(f"--cpus {quoted(args.cpus)}: CPU numbers separated by commas, e.g. 1 or 0,1")
    cpus = tuple(sorted({int(p) for p in parts}))
    allowed = cpus_in_use()
    if allowed and not set(cpus) <= set(allowed):
        raise InputError(f"--cpus {quoted(args.cpus)}: this process may run on CPU "
                         f"{', '.join(map(str, allowed))} only")
    return cpus


def _pin(cpus: tuple[int, ...] | None) -> None:
    """Pin this process (and so asv, pip and every benchmark it starts) to `cpus`, and say so."""
    from jaxci.util.loadavg import pin_to

    if cpus:
        pin_to(cpus)
        print(f"jaxci history: pinned to CPU {', '.join(map(str, cpus))} (multi-threaded kernels run on these alone)",
              flush=True)


def _max_load(args) -> float:
    """--max-load, else the quiet rule of analysis.releases for this machine's CPUs; checked before anything is
    measured."""
    from jaxci.analysis.releases import quiet_limit

    if args.max_load is not None:
        return number("--max-load", args.max_load, low=0.01, high=10_000)
    return quiet_limit(os.cpu_count())


def _targets(repo: Path, machine: str, bench: list[str], releases: list[str] | None) -> tuple[list, dict]:
    """The candidate regressions of `machine`'s results as rerun targets (narrowed to benchmarks matching a
    --bench regex and to steps into a --releases release, when given), and release -> commit."""
    from jaxci.analysis.releases import params_text, release_steps
    from jaxci.catalogue import upgrade_factor
    from jaxci.results.confirm import Target
    from jaxci.results.records import load_results

    records = [r for r in load_results(repo / "results").records if r.machine == machine]
    commits = {r.jax_version: r.commit for r in records}
    groups: dict = {}
    for s in release_steps(records, upgrade_factor()):
        if s.kind == "regression" and (not bench or any(re.search(b, s.benchmark) for b in bench)) \
                and (not releases or s.after in releases):
            groups.setdefault((s.benchmark, s.before, s.after), {})[params_text(s.params)] = s.ratio
    return [Target(b, v0, v1, first) for (b, v0, v1), first in sorted(groups.items())], commits


def _confirm(repo: Path, args) -> int:
    """--confirm: every candidate regression of the machine's history measured again, recorded."""
    from jaxci.analysis.releases import QUIET_OTHERS_PER_CPU
    from jaxci.catalogue import upgrade_factor
    from jaxci.results.conditions import ConditionsError
    from jaxci.results.confirm import confirm

    try:
        if not args.machine:
            raise InputError("--confirm needs --machine: the history to re-measure (results/<machine>/)")
        machine = machine_name("--machine", args.machine)
        if not (repo / "results" / machine).is_dir():  # nothing to confirm is not "confirmed"
            raise InputError(f"--machine {machine}: no history at results/{machine}/ (run `jaxci history "
                             f"--machine {machine}` first, or name a machine that has one)")
        bench = [bench_filter("--bench", b) for b in args.bench]
        releases = parse_releases(args.releases) if args.releases else None
        cpus = _cpus(args)
        targets, commits = _targets(repo, machine, bench, releases)
        env = asv_env(args.scale, args.backend)
    except (HistoryError, InputError, GitError, OSError, ValueError) as exc:
        return refuse("jaxci history", exc)
    if not targets:
        print(f"jaxci history: {machine}: no candidate regression to confirm")
        return 0
    if args.dry_run:
        for t in targets:
            print(f"jaxci history: would re-measure {t.benchmark} on {t.before} and {t.after} "
                  f"({len(t.first)} combination(s), first x{max(t.first.values()):.3g})")
        return 0
    runs = AsvRuns(repo, machine, env, repo / "results", log=state_path(machine, repo).with_suffix(".confirm.log"))
    runs.log_path.parent.mkdir(parents=True, exist_ok=True)
    _pin(cpus)
    try:
        made = confirm(runs, targets, commits)
    except ConditionsError as exc:
        return refuse("jaxci history", exc)
    factor = upgrade_factor()
    kept = sum(1 for c in made if c.rerun_ratio is not None and c.rerun_ratio > factor)
    print(f"jaxci history: {len(made)} combination(s) re-measured: {kept} still past x{factor:g}, "
          f"{len(made) - kept} not; a rerun confirms only while other processes used at most "
          f"{QUIET_OTHERS_PER_CPU:g} of each CPU (jaxci report shows which)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

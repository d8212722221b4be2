"""`jaxci history`: backfill the asv history over JAX releases on the machine at hand.

The history axis of this project is JAX releases: a JAX upgrade is one commit that moves the pins in
env_matrix/. This command writes that series for past releases, so the site shows how every benchmark
moved from one release to the next:

- one commit per release on the branch `jax-history` of this repository, made with git plumbing (the
  working tree is never touched); each commit changes only env_matrix/<backend>/requirements.txt on top of
  a fixed base commit, is dated at the release's PyPI upload time, and carries an annotated tag `jax-vX`
  dated the same, so asv orders the points by release date and draws the release names on its graphs;
- the chain always holds every release that has wheels for this Python (not only the ones measured), so a
  commit's hash depends only on the base and the release list: measuring more releases later never moves
  the ones already measured, and a new JAX release is appended at the end;
- then stock `asv run --machine M <commit>^!` per selected release, newest first (the releases a lecture
  site is about to move to matter most; an interrupted backfill keeps them). Results land in asv's results
  directory like any run, so `asv publish` draws them and `asv compare jax-v0.11.0 jax-v0.11.1` works.

Resumable: a release whose result file already holds every selected benchmark is skipped. A release that
fails to install or run is recorded with the reason (.jaxci/history/<machine>.json) and the rest go on; the
state file merges every run's records (an earlier failure's reason is kept when a later run measures it).

Interruptible: SIGINT or SIGTERM (raised as HistoryStopped by the command's handler) kills the `asv run` in
flight with its whole process tree and records the release as interrupted. Building the chain writes every
object first and moves the branch and all tags in one git ref transaction at the end, with SIGINT and SIGTERM
held off during it: an interrupted build moves no ref.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from jaxci import REPO_ROOT
from jaxci.results.asvfiles import FormatError, any_value, load_benchmarks_json, measured_keys
from jaxci.results.asvrun import asv_exe
from jaxci.results.release_index import HistoryError  # noqa: F401 (the backfill's one error, raised here too)
from jaxci.util import signals
from jaxci.util.git import GitError, git
from jaxci.util.pins import pin_jax
from jaxci.util.proc import kill_tree
from jaxci.util.safeio import load_json
from jaxci.util.validate import quoted
from jaxci.util.versions import RELEASE, release_key

BRANCH = "jax-history"
TAG_PREFIX = "jax-v"
COMMIT_PREFIX = "history: pin jax "
AUTHOR = ("jaxci history", "jaxci-history@localhost")


class HistoryStopped(BaseException):  # noqa: N818 (like KeyboardInterrupt: not caught by `except Exception`)
    """SIGINT or SIGTERM arrived (the command's signal handler raises it); `signum` says which."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def parse_releases(text: str) -> list[str]:
    """'0.11.0,0.11.1' -> ['0.11.0', '0.11.1'], checked; order and duplicates normalised (oldest first)."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not RELEASE.fullmatch(part):
            raise HistoryError(f"--releases: {quoted(part, 40)} is not a JAX release like 0.11.1")
        out.add(part)
    if not out:
        raise HistoryError("--releases: no release given")
    return sorted(out, key=release_key)


# ---- the pin commits -----------------------------------------------------------------------------------

def _dated_env(iso: str) -> dict:
    """git's author and committer for a pin commit or tag dated `iso` (a release's upload time); a date outside
    the calendar (a year past 9999, a stamp no clock can hold) is a HistoryError, not a traceback."""
    try:
        stamp = dt.datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
        when = f"{int(stamp.timestamp())} +0000"
    except (ValueError, OverflowError, OSError):
        raise HistoryError(f"date {quoted(iso, 40)} is not a time on the calendar") from None
    return {"GIT_AUTHOR_NAME": AUTHOR[0], "GIT_AUTHOR_EMAIL": AUTHOR[1], "GIT_AUTHOR_DATE": when,
            "GIT_COMMITTER_NAME": AUTHOR[0], "GIT_COMMITTER_EMAIL": AUTHOR[1], "GIT_COMMITTER_DATE": when}


def _commit_time(commit: str, stamp: str) -> str:
    """A commit's time (git's seconds since 1970) as ISO; one outside the calendar is a HistoryError."""
    try:
        return dt.datetime.fromtimestamp(int(stamp), dt.UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        raise HistoryError(f"commit {commit[:12]}: its time {quoted(stamp, 30)} is outside the calendar "
                           "(git's seconds since 1970); not tagged") from None


def existing_base(repo: Path) -> str | None:
    """The base commit of an existing jax-history branch (the parent of its oldest pin commit), else None."""
    log = []
    for ref in (BRANCH, f"origin/{BRANCH}"):  # a fresh CI checkout has only the remote branch
        try:
            log = git(repo, "log", "--first-parent", "--format=%H %P%x09%s", ref).splitlines()
            break
        except GitError:
            continue
    base = None
    for line in log:
        hashes, _, subject = line.partition("\t")
        if not subject.startswith(COMMIT_PREFIX):
            break
        parents = hashes.split()[1:]
        base = parents[0] if parents else None
    return base


@dataclass
class Chain:
    base: str
    commits: dict[str, str] = field(default_factory=dict)   # release -> commit
    moved_tags: list[str] = field(default_factory=list)


def _refs(repo: Path) -> dict[str, str]:
    """refname -> the commit it names, for the branch and the jax-v* tags (peeled through tag objects)."""
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname) %(*objectname)",
              f"refs/tags/{TAG_PREFIX}*", f"refs/heads/{BRANCH}")
    refs = {}
    for line in out.splitlines():
        name, obj, *peeled = line.split()
        refs[name] = peeled[0] if peeled else obj
    return refs


def _tag_text(commit: str, tag: str, version: str, env: dict) -> str:
    """An annotated tag object, byte for byte what `git tag -a -m 'JAX X'` writes with that env."""
    return (f"object {commit}\ntype commit\ntag {tag}\n"
            f"tagger {env['GIT_COMMITTER_NAME']} <{env['GIT_COMMITTER_EMAIL']}> {env['GIT_COMMITTER_DATE']}\n"
            f"\nJAX {version}\n")




def move_refs(repo: Path, updates: list[tuple[str, str]]) -> None:
    """Every (ref, object) update in one git transaction (all or none), with SIGINT and SIGTERM held off."""
    script = "".join(f"update {ref} {obj}\n" for ref, obj in updates)
    with signals.held():
        git(repo, "update-ref", "--stdin", input=script)


def build_chain(repo: Path, base: str, releases: list[str], dates: dict[str, str],
                jaxlib_versions: set[str], numpyro: dict[str, str | None] | None = None) -> Chain:
    """One commit per release (oldest first) on BRANCH over `base`, each tagged jax-vX; deterministic.

    Every commit and tag object is written first; the branch and the tags that change move together at the
    end (move_refs), so an interruption before that leaves every ref where it was."""
    chain = Chain(base=git(repo, "rev-parse", f"{base}^{{commit}}"))
    parent = chain.base
    backends = [b for b in ("cpu", "cuda13")
                if git(repo, "ls-tree", chain.base, f"env_matrix/{b}/requirements.txt")]
    if not backends:
        raise HistoryError(f"{chain.base[:8]} has no env_matrix/*/requirements.txt: not a jax-ci-bench commit")
    missing = [v for v in releases if v not in dates]
    if missing:
        raise HistoryError(f"no release date for jax {missing[0]} (PyPI did not list it)")
    current = _refs(repo)
    updates = []
    with tempfile.TemporaryDirectory() as tmp:
        index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        for version in releases:
            env = _dated_env(dates[version])
            git(repo, "read-tree", parent, env=index)
            for backend in backends:
                path = f"env_matrix/{backend}/requirements.txt"
                text = pin_jax(git(repo, "show", f"{chain.base}:{path}") + "\n", version,
                               jaxlib=version in jaxlib_versions, numpyro=(numpyro or {}).get(version))
                blob = git(repo, "hash-object", "-w", "--stdin", input=text)
                git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=index)
            tree = git(repo, "write-tree", env=index)
            message = f"{COMMIT_PREFIX}{version} (released {dates[version][:10]})"
            parent = git(repo, "commit-tree", tree, "-p", parent, "-m", message, env=env)
            chain.commits[version] = parent
            tag = TAG_PREFIX + version
            was = current.get(f"refs/tags/{tag}")
            if was != parent:
                if was is not None:
                    chain.moved_tags.append(tag)
                obj = git(repo, "mktag", input=_tag_text(parent, tag, version, env))
                updates.append((f"refs/tags/{tag}", obj))
    if current.get(f"refs/heads/{BRANCH}") != parent:
        updates.append((f"refs/heads/{BRANCH}", parent))
    if updates:
        move_refs(repo, updates)
    return chain


def restore_refs(repo: Path) -> tuple[int, bool]:
    """The jax-v* tags and the jax-history branch for the pin commits reachable from HEAD, where a clone lacks
    them: main carries the chain through a merge (its commits are what the committed history's results name),
    but a clone of main alone has no tags, and asv labels a release and plots a commit off main's first
    parent only through its tag. Each tag object is rebuilt byte for byte as build_chain wrote it (same
    tagger, same release date), so a tag made here equals the original. Returns (tags made, branch made)."""
    log = git(repo, "log", "--format=%H %ct%x09%s", "HEAD").splitlines()
    current = _refs(repo)
    updates, tip = [], None
    for line in log:  # newest first: the chain's commits are dated by release, so its tip comes first
        head, _, subject = line.partition("\t")
        if not subject.startswith(COMMIT_PREFIX):
            continue
        commit, stamp = head.split()
        version = subject[len(COMMIT_PREFIX):].split(" ", 1)[0]
        if not RELEASE.fullmatch(version):
            continue
        tip = tip or commit
        tag = TAG_PREFIX + version
        if f"refs/tags/{tag}" not in current:
            env = _dated_env(_commit_time(commit, stamp))
            updates.append((f"refs/tags/{tag}", git(repo, "mktag", input=_tag_text(commit, tag, version, env))))
    branch = tip is not None and f"refs/heads/{BRANCH}" not in current
    if branch and tip is not None:
        updates.append((f"refs/heads/{BRANCH}", tip))
    if updates:
        move_refs(repo, updates)
    return len(updates) - branch, branch


def missing_release_tags(results_dir: Path, releases: list[str]) -> tuple[Path, list[str]] | None:
    """(the repository holding `results_dir`, the jax-v* tags it lacks for `releases`), or None when it has them
    all or is no git checkout: asv publish draws a release only through its tag, so without them a fresh clone's
    site shows no history and `asv compare jax-v...` finds no results."""
    try:
        top = Path(git(Path(results_dir).resolve(), "rev-parse", "--show-toplevel", timeout=30))
        have = set(git(top, "tag", "-l", f"{TAG_PREFIX}*", timeout=30).split())
    except (GitError, OSError):
        return None
    missing = [TAG_PREFIX + v for v in releases if TAG_PREFIX + v not in have]
    return (top, missing) if missing else None


# ---- measuring -----------------------------------------------------------------------------------------

def selected_benchmarks(results_dir: Path, patterns: list[str]) -> set[str] | None:
    """Names in asv's benchmarks.json matching any --bench regex (asv's re.search rule); None if unknown."""
    try:
        names = list(load_benchmarks_json(results_dir / "benchmarks.json"))
    except FormatError:
        return None
    return {n for n in names if not patterns or any(re.search(p, n) for p in patterns)}


@dataclass
class AsvRuns:
    """What every `asv run` of one history command shares: checkout, machine, asv's environment, results folder,
    the log each run appends to (default: beside the machine's state file) and the progress stream (stdout)."""
    repo: Path
    machine: str
    env: dict
    results_dir: Path
    out: TextIO = field(default_factory=lambda: sys.stdout)
    log: Path | None = None  # the log every run appends to; None: beside the machine's state file (log_path)

    @property
    def log_path(self) -> Path:
        return self.log if self.log is not None else self.state.with_suffix(".log")

    @property
    def state(self) -> Path:
        return state_path(self.machine, self.repo)


@dataclass
class Outcome:
    release: str
    commit: str
    status: str      # measured | skipped (already measured) | failed | interrupted
    seconds: float
    reason: str = ""


def run_release(runs: AsvRuns, commit: str, bench: list[str], again: bool = False) -> tuple[bool, str]:
    """asv run for one commit of the `bench` regexes; (ok, reason). ok means asv wrote a result file for it.
    `again` measures the selected benchmarks even where they already have a result (a rerun replaces them)."""
    args = [asv_exe(), "run", "--machine", runs.machine, "--show-stderr"]
    args += [] if again else ["--skip-existing-successful"]
    for pattern in bench:
        args += ["--bench", pattern]
    args.append(f"{commit}^!")
    with runs.log_path.open("a") as fh:
        fh.write(f"\n==== {' '.join(args)}\n")
        fh.flush()
        returncode = run_tree(args, cwd=runs.repo, env=runs.env, stdout=fh)
    text = runs.log_path.read_text(errors="replace").rsplit("\n==== ", 1)[-1]
    if returncode not in (0, 2):
        return False, f"asv run exit {returncode}: {_last_error(text)}"
    if re.search(r"Error running .*env_matrix/install\.py", text):
        return False, f"install failed: {_last_error(text)}"
    if re.search(r"Error running .*benchmark\.py discover", text):
        return False, f"the benchmarks did not import under this release: {_last_error(text)}"
    return True, "" if returncode == 0 else "some benchmarks failed (asv exit 2; see the log)"


#: how many times a release measured above --max-load is measured again before its last run is kept
LOAD_RETRIES = 2


def measured_quietly(runs: AsvRuns, version: str, commit: str, bench: list[str], max_load: float | None,
                     again: bool = False) -> tuple[bool, str]:
    """run_release with the machine's load sampled through it and recorded beside the results
    (results/<machine>/conditions.toml); a run during which other processes used more than `max_load` CPUs
    (util.loadavg.Load.quiet: the run's own use is discounted) is run again, up to
    LOAD_RETRIES times, and the last run's results are kept, its load recorded as it was. `again` (--force)
    measures every selected benchmark on the first run too, where asv would skip those it already has."""
    from jaxci.results import conditions
    from jaxci.util.loadavg import Sampler, cpu_model, cpus_in_use

    attempt = 0
    while True:
        with Sampler() as sampler:
            ok, reason = run_release(runs, commit, bench, again=again or attempt > 0)
        load = sampler.load
        if ok and (runs.results_dir / runs.machine).is_dir():
            conditions.append_run(runs.results_dir, runs.machine, conditions.Run(
                version, commit, dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), cpu_model(),
                load.samples, "rerun" if attempt else "backfill", cpus_in_use(), load.own, load.others))
        if not ok or max_load is None or load.quiet(max_load) or attempt >= LOAD_RETRIES:
            if ok and max_load is not None and not load.quiet(max_load):
                print(f"jaxci history:   warning: jax {version} kept at {load.text()}: above --max-load "
                      f"{max_load:g} after {attempt + 1} runs", file=runs.out, flush=True)
            return ok, reason
        attempt += 1
        print(f"jaxci history:   {load.text()}: above --max-load {max_load:g}: measuring jax {version} again "
              f"({attempt} of {LOAD_RETRIES})", file=runs.out, flush=True)


def run_tree(args: list[str], *, cwd: Path, env: dict, stdout) -> int:
    """Run `args` in a session of its own and wait; if this wait is interrupted (HistoryStopped, KeyboardInterrupt,
    anything), SIGKILL the child's whole process tree (asv, its builds and benchmark servers) before
    re-raising, so no `asv run` is left writing results behind the backfill."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        return proc.wait()
    except BaseException:
        kill_tree(proc.pid)
        with contextlib.suppress(Exception):
            proc.wait(timeout=10)
        raise


def _last_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    hits = [ln for ln in lines if re.search(r"error|Error|ERROR|No matching distribution|conflict", ln)
            and "skipped:" not in ln and not ln.startswith(("·", "[", "=="))]
    return (hits[-1] if hits else lines[-1] if lines else "no output")[:300]


def state_path(machine: str, repo: Path) -> Path:
    return repo / ".jaxci" / "history" / f"{machine}.json"


def load_state(path: Path) -> dict:
    """The state file's records ({} when there is none); HistoryError when it is not one (one line)."""
    if not path.exists():
        return {}
    try:
        data = load_json(path)
    except (OSError, ValueError) as exc:
        raise HistoryError(f"{path}: not a readable history state file ({str(exc)[:120]}); "
                           "move it aside to start a new record") from None
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict) or not all(
            isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("status"), str)
            for k, v in releases.items()):
        raise HistoryError(f"{path}: not a history state file (no 'releases' table of records); "
                           "move it aside to start a new record")
    return data


MAX_EARLIER = 10  # earlier failures kept per release


def merge_records(earlier: dict, outcomes: list[Outcome]) -> dict:
    """The state's release records: the earlier ones, updated by this run's outcomes. A release this run did not
    touch keeps its record; a skipped release (already measured) keeps its earlier record; a failure or
    interruption that a later attempt replaces is kept under "earlier" with its reason."""
    records = {k: dict(v) for k, v in earlier.items()}
    for o in outcomes:
        old = records.get(o.release)
        if o.status == "skipped" and old is not None and old.get("status") == "measured":
            continue
        new = {"commit": o.commit, "status": o.status, "seconds": round(o.seconds, 1), "reason": o.reason}
        if old is not None:
            past = list(old.get("earlier") or [])
            if old.get("status") in ("failed", "interrupted"):
                entry = {k: old.get(k) for k in ("commit", "status", "reason")}
                if entry not in past:
                    past.append(entry)
            if past:
                new["earlier"] = past[-MAX_EARLIER:]
        records[o.release] = new
    return records


def save_state(path: Path, outcomes: list[Outcome], chain: Chain, earlier: dict | None = None) -> None:
    """Write the state file: the earlier records (`earlier`, else what the file holds) merged with `outcomes`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    before = (load_state(path) if earlier is None else earlier).get("releases", {})
    records = merge_records(before, outcomes)
    data = {"base": chain.base, "branch": BRANCH,
            "releases": dict(sorted(records.items(), key=lambda kv: _sort_key(kv[0])))}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def _sort_key(version: str) -> tuple:
    return release_key(version) if RELEASE.fullmatch(version) else (10**9, version)


def backfill(runs: AsvRuns, todo: list[str], chain: Chain, bench: list[str], force: bool = False,
             earlier: dict | None = None, max_load: float | None = None) -> list[Outcome]:
    """Measure `todo` (in the order given), printing progress; never stops at a failed release. `force` measures
    a release again even where its results hold every selected benchmark (asv run without skipping). On
    HistoryStopped or KeyboardInterrupt the release in flight is recorded as interrupted (its asv run killed,
    run_tree) and the state saved before the exception goes on up."""
    out, results_dir, machine = runs.out, runs.results_dir, runs.machine
    earlier = load_state(runs.state) if earlier is None else earlier
    runs.log_path.parent.mkdir(parents=True, exist_ok=True)
    outcomes: list[Outcome] = []
    start = time.monotonic()
    for k, version in enumerate(todo, 1):
        commit = chain.commits[version]
        wanted = selected_benchmarks(results_dir, bench)
        have = measured_keys(results_dir, machine, commit)
        elapsed = time.monotonic() - start
        spent = [o.seconds for o in outcomes if o.status in ("measured", "failed")]  # the releases run so far
        eta = (sum(spent) / len(spent) * (len(todo) - k + 1)) if spent else None
        print(f"jaxci history: release {k} of {len(todo)}: jax {version} ({commit[:8]}); "
              f"elapsed {elapsed:.0f} s" + (f", about {eta:.0f} s left" if eta is not None else ""),
              file=out, flush=True)
        if not force and have and wanted is not None and wanted <= have:
            outcomes.append(Outcome(version, commit, "skipped", 0.0, "already measured"))
            continue
        t0 = time.monotonic()
        try:
            ok, reason = measured_quietly(runs, version, commit, bench, max_load, again=force)
        except (HistoryStopped, KeyboardInterrupt) as exc:
            name = exc.args[0] if isinstance(exc, HistoryStopped) else "SIGINT"
            outcomes.append(Outcome(version, commit, "interrupted", time.monotonic() - t0,
                                    f"interrupted by {name}; its asv run was stopped with its process tree"))
            save_state(runs.state, outcomes, chain, earlier)
            raise
        if ok and not measured_keys(results_dir, machine, commit):
            ok, reason = False, f"no result file written: {reason or _last_error(runs.log_path.read_text(errors='replace'))}"
        elif ok and not any_value(results_dir, machine, commit):
            text = runs.log_path.read_text(errors="replace").rsplit("\n==== ", 1)[-1]
            ok, reason = False, f"every benchmark failed: {_last_error(text)}"
        seconds = time.monotonic() - t0
        outcomes.append(Outcome(version, commit, "measured" if ok else "failed", seconds, reason))
        print(f"jaxci history:   {'measured' if ok else 'FAILED'} in {seconds:.0f} s"
              + (f": {reason}" if reason else ""), file=out, flush=True)
        save_state(runs.state, outcomes, chain, earlier)
    save_state(runs.state, outcomes, chain, earlier)
    return outcomes


def choose(all_releases: list[str], releases: list[str] | None, since: str | None) -> list[str]:
    """The releases to measure, newest first."""
    if releases:
        unknown = [v for v in releases if v not in all_releases]
        if unknown:
            raise HistoryError(f"no installable JAX release {', '.join(unknown)} for this Python/backend "
                               f"(installable: {all_releases[0]} .. {all_releases[-1]})")
        picked = releases
    else:
        picked = list(all_releases)
    if since:
        if not RELEASE.fullmatch(since):
            raise HistoryError(f"--since: {quoted(since, 40)} is not a JAX release like 0.11.1")
        picked = [v for v in picked if release_key(v) >= release_key(since)]
    if not picked:
        raise HistoryError("no release selected (check --releases / --since)")
    return sorted(picked, key=release_key, reverse=True)


def checkout_root() -> Path:
    """The jax-ci-bench checkout to work in: the git top level of the current directory when it is one
    (jaxci installed from a wheel, as in the bench workflow), else the checkout this jaxci comes from."""
    try:
        top = Path(git(Path.cwd(), "rev-parse", "--show-toplevel"))
    except (GitError, OSError):
        return REPO_ROOT
    return top if (top / "asv.conf.json").is_file() and (top / "env_matrix").is_dir() else REPO_ROOT

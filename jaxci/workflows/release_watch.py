"""The JAX release watch (.github/workflows/jax-release-watch.yml): new JAX releases measured and compared.

Daily: ask the package index (`pip index versions jax`) for JAX releases newer than the pin of
env_matrix/cpu/requirements.txt; for each, on each family of the plan, run `jaxci history` for that release
and the one before it (same machine, same run, the release-history chain), `asv compare` the two, and file one
issue per release whose benchmarks stepped beyond the noise rule, with the compare table and the command that
reproduces it. The workflow only calls `jaxci release-watch plan|measure|file`; the logic is here.

The noise rule (hosted runners vary from one VM to the next, so one run is never enough):

1. first run: asv compare --factor 1.5 marks a benchmark '+' (after / before > 1.5 and, where asv has the
   samples, significant by its own test); those are *flagged*;
2. confirmation: only the flagged benchmarks are measured again, on both releases, in the same job (asv run
   without --skip-existing: the results are replaced), and compared again;
3. a regression is *confirmed*, and reported, only when the same benchmark and parameters are '+' with a ratio
   of at least 1.5 again. A flagged benchmark that does not hold is listed as noise in the job summary, never
   filed. (Like a CI benchmarking service's "alert on a sustained change", with the rerun as the second look.)

Families: the CPU families on GitHub-hosted runners always; the GPU families of the scheduled bench (bench =
true) only on trusted events (the schedule, or a dispatch on the default branch), never on anything else.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from jaxci.catalogue import Figure, Machine
from jaxci.policy.jobcost import timeout_minutes
from jaxci.results.asvrun import asv_env, asv_exe
from jaxci.results.upgrade import Row, parse_compare, slower
from jaxci.util.quoting import cell, markdown, shell
from jaxci.util.safeio import UnsafeFile, load_json, parse_json
from jaxci.util.validate import InputError, bench_filter, inside, machine_name, number, one_line
from jaxci.util.versions import RELEASE, release_key
from jaxci.workflows.plan import matrix_entry

FACTOR = 1.5
# the warm benchmarks of the reference history (docs/history.md); asv matches a parameterised benchmark as
# "name(params)", so the end is "(" or the end of the name
WATCH_BENCH = r"^(loops|dense|elementwise|dispatch|kalman)\.[A-Za-z]+\.time_warm(\(|$)"
TITLE = "JAX {release} is slower than {previous} (release watch)"
MARKER = "<!-- jaxci release-watch release={release} -->"
MAX_TIMEOUT = 360  # GitHub's job limit on hosted runners


class WatchError(ValueError):
    """The watch cannot go on: a bad release, no index, nothing to compare."""


def version_key(version: str) -> tuple[int, ...]:
    """release_key, refusing what is not a release (the watch compares releases only)."""
    key = release_key(version)
    if not key:
        raise WatchError(f"{version[:40]!r} is not a JAX release like 0.11.1")
    return key


def newer_releases(pin: str, versions: list[str]) -> list[str]:
    """The releases in `versions` newer than `pin`, oldest first (each is compared with the one before it)."""
    return sorted((v for v in set(versions) if RELEASE.fullmatch(v) and version_key(v) > version_key(pin)),
                  key=version_key)


def previous_release(release: str, versions: list[str]) -> str:
    """The newest release in `versions` older than `release`: what it is compared with."""
    older = [v for v in versions if RELEASE.fullmatch(v) and version_key(v) < version_key(release)]
    if not older:
        raise WatchError(f"no JAX release before {release} to compare it with")
    return max(older, key=version_key)


def find(pin: str, versions: list[str], only: str | None = None) -> list[dict]:
    """[{release, previous}] for every release newer than the pin (or just `only`, a dispatch's choice)."""
    if only:
        version_key(only)
        if only not in versions:
            raise WatchError(f"jax {only} is not on the package index (it has {', '.join(versions[-5:])} ...)")
        todo = [only]
    else:
        todo = newer_releases(pin, versions)
    return [{"release": r, "previous": previous_release(r, versions)} for r in todo]


def families(catalogue: dict[str, Machine], trusted: bool) -> list[Machine]:
    """CPU families on GitHub-hosted runners; with `trusted`, also the scheduled bench's GPU families."""
    cpu = [m for m in catalogue.values() if not m.has_gpu and m.runner == "github"]
    gpu = [m for m in catalogue.values() if m.has_gpu and m.bench] if trusted else []
    return sorted(cpu, key=lambda m: m.name) + sorted(gpu, key=lambda m: m.name)


def plan_matrix(found: list[dict], catalogue: dict[str, Machine], defaults: dict[str, Figure], run_id: str,
                trusted: bool) -> dict:
    """The measure job's matrix: one entry per (release, family), always on-demand (never spot)."""
    include = []
    for item in found:
        for machine in families(catalogue, trusted):
            timeout = min(MAX_TIMEOUT, timeout_minutes(machine, defaults, runs=3))  # two releases + the rerun
            include.append({**matrix_entry(machine, run_id, False, timeout), **item})
    return {"include": include}


def is_trusted(event: str, ref: str, default_branch: str) -> bool:
    """The schedule (it runs the default branch), or a dispatch of the default branch."""
    return event == "schedule" or (event == "workflow_dispatch" and ref == f"refs/heads/{default_branch}")


# ---- measuring one release on one machine ---------------------------------------------------------------

def base_name(row: Row) -> str:
    return row.name.split("(", 1)[0].strip()


def rerun_filter(rows: list[Row]) -> str:
    """An asv --bench regex selecting exactly the benchmarks of `rows` (every parameter set of each)."""
    names = sorted({base_name(r) for r in rows})
    text = "^(" + "|".join(re.escape(n) for n in names) + r")(\(|$)"
    try:
        return bench_filter("rerun filter", text)
    except InputError:  # too many to name one by one: rerun the whole watch selection
        return WATCH_BENCH


def flagged(rows: list[Row], factor: float) -> list[Row]:
    """Rows asv marks '+' with a ratio of at least `factor`."""
    return [r for r in slower(rows) if r.ratio_value is not None and r.ratio_value >= factor]


@dataclass
class WatchReport:
    release: str
    previous: str
    machine: str
    factor: float
    status: str              # regression (confirmed) | noise (flagged, not confirmed) | clean | failed
    table: str               # the first run's compare table (GitHub markdown)
    rerun_table: str = ""
    confirmed: list[dict] = field(default_factory=list)   # name, before, after, ratio, rerun_ratio
    noise: list[str] = field(default_factory=list)
    reason: str = ""
    scale: str = "ci"

    @property
    def reproduce(self) -> str:
        return reproduce_command(self.previous, self.release, self.machine, self.factor, self.scale)


def reproduce_command(previous: str, release: str, machine: str, factor: float = FACTOR, scale: str = "ci") -> str:
    """The commands a maintainer pastes; every value one shell word (quoting.shell), whatever a report held."""
    return (f"jaxci history --releases {shell(f'{previous},{release}')} --scale {shell(scale)} "
            f"--bench {shell(WATCH_BENCH)} --machine {shell(machine)}\n"
            f"asv compare {shell(f'jax-v{previous}')} {shell(f'jax-v{release}')} --machine {shell(machine)} "
            f"--factor {shell(f'{factor:g}')}")


def _table(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.startswith("|"))


def shown(table: str) -> str:
    """A compare table without the rows that are n/a on both sides (cases skipped at this scale or device)."""
    def skipped(line: str) -> bool:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        return len(cells) == 5 and cells[1] == cells[2] == "n/a"
    return "\n".join(line for line in table.splitlines() if not skipped(line))


def measure(release: str, previous: str, machine: str, runner, factor: float = FACTOR) -> WatchReport:
    """First run, compare, confirmation rerun of the flagged benchmarks, compare again: the WatchReport.
    `runner` has history(releases, bench, machine) -> int, compare(old, new, machine, factor) -> text and
    rerun(release, bench, machine) -> int (AsvRunner; a fake in the tests)."""
    scale = getattr(runner, "scale", "ci")
    rc = runner.history([previous, release], WATCH_BENCH, machine)
    text = runner.compare(previous, release, machine, factor)
    rows = parse_compare(text)
    if not rows:
        return WatchReport(release, previous, machine, factor, "failed", _table(text), scale=scale,
                           reason=f"asv compare produced no table (jaxci history exit {rc}); see the job log")
    first = flagged(rows, factor)
    report = WatchReport(release, previous, machine, factor, "clean", _table(text), scale=scale)
    if not first:
        return report
    bench = rerun_filter(first)
    for version in (release, previous):
        runner.rerun(version, bench, machine)
    again_text = runner.compare(previous, release, machine, factor)
    again = {r.name: r for r in flagged(parse_compare(again_text), factor)}
    report.rerun_table = _table(again_text)
    for row in first:
        held = again.get(row.name)
        if held is not None:
            report.confirmed.append({"name": row.name, "before": row.before, "after": row.after,
                                     "ratio": row.ratio, "rerun_ratio": held.ratio})
        else:
            report.noise.append(row.name)
    report.status = "regression" if report.confirmed else "noise"
    return report


class AsvRunner:
    """The real runner: `jaxci history` and stock asv in the checkout `repo`, all at one scale and backend
    (asv_env sets JAXCI_SCALE and JAXCI_BACKEND: a stock `asv run` would otherwise run at full scale)."""

    def __init__(self, repo: Path, scale: str = "ci", backend: str = "cpu", log=None):
        self.repo, self.scale, self.backend, self.log = repo, scale, backend, log or sys.stdout
        self.env = asv_env(scale, backend)

    def _run(self, args: list[str]) -> tuple[int, str]:
        print("$ " + " ".join(args), file=self.log, flush=True)
        proc = subprocess.run(args, cwd=self.repo, env=self.env, capture_output=True, text=True)
        print(proc.stdout[-4000:] + proc.stderr[-4000:], file=self.log, flush=True)
        return proc.returncode, proc.stdout

    def history(self, releases: list[str], bench: str, machine: str) -> int:
        """Both releases on a chain over this checkout (`--base HEAD`): the watch measures this checkout's
        benchmarks, which an older chain's jaxci may not import (jaxci history refuses that chain), and its tags
        live only in the job's own checkout (nothing of the watch is committed)."""
        return self._run([sys.executable, "-m", "jaxci", "history", "--releases", ",".join(releases),
                          "--bench", bench, "--machine", machine, "--scale", self.scale,
                          "--backend", self.backend, "--base", "HEAD"])[0]

    def compare(self, old: str, new: str, machine: str, factor: float) -> str:
        return self._run([asv_exe(), "compare", "--factor", f"{factor:g}", "--machine", machine,
                          f"jax-v{old}", f"jax-v{new}"])[1]

    def rerun(self, release: str, bench: str, machine: str) -> int:
        return self._run([asv_exe(), "run", "--machine", machine, "--show-stderr", "--bench", bench,
                          f"jax-v{release}^!"])[0]


def save_report(report: WatchReport, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"watch-{report.release}-{report.machine}.json"
    from jaxci.util import safewrite

    safewrite.write_text(path, json.dumps(asdict(report), indent=1), option="--out")
    return path


STATUSES = ("regression", "noise", "clean", "failed")
SCALES = ("ci", "full")
ROW_FIELDS = ("name", "before", "after", "ratio", "rerun_ratio")
#: the longest benchmark name and table a report may hold (asv's names are under 200; a table of every
#: watched benchmark is under 20 KiB)
NAME_LIMIT, TABLE_LIMIT = 300, 1024 * 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
REPORT_LIMIT = 4 * 1024 * 1024


def _text(where: str, value, limit: int, *, lines: bool = False) -> str:
    """A string field: a str of at most `limit` characters, one line unless `lines`."""
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a string, got {type(value).__name__}")
    if len(value) > limit:
        raise InputError(f"{where}: {len(value):,} characters, at most {limit:,}")
    bad = None if lines else _CONTROL.search(value)
    if bad:
        raise InputError(f"{where}: control character {bad.group()!r} at position {bad.start()} (one line expected)")
    return value


def _release_field(where: str, value) -> str:
    text = _text(where, value, 40)
    if not RELEASE.fullmatch(text):
        raise InputError(f"{where}: {text!r} is not a JAX release like 0.11.1")
    return text


def _names(where: str, value) -> list[str]:
    if not isinstance(value, list):
        raise InputError(f"{where}: expected a list of benchmark names, got {type(value).__name__}")
    return [_text(f"{where}[{i}]", v, NAME_LIMIT) for i, v in enumerate(value)]


def _rows(where: str, value) -> list[dict]:
    """confirmed: a list of {name, before, after, ratio, rerun_ratio}, every value a one-line string."""
    if not isinstance(value, list):
        raise InputError(f"{where}: expected a list of rows, got {type(value).__name__}")
    rows = []
    for i, row in enumerate(value):
        if not isinstance(row, dict) or set(row) != set(ROW_FIELDS):
            raise InputError(f"{where}[{i}]: expected an object with exactly {', '.join(ROW_FIELDS)}")
        rows.append({k: _text(f"{where}[{i}].{k}", row[k], NAME_LIMIT if k == "name" else 40) for k in ROW_FIELDS})
    return rows


def report_record(data, source: str = "report") -> WatchReport:
    """The one validation of a report read from a file, with the rules of the command line (`release-watch
    measure`'s --release, --previous, --machine, --factor, --scale) and a type and size for every other
    field: what is refused raises InputError naming the field (its value is never needed downstream)."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a JSON object, got {type(data).__name__}")
    names = [f.name for f in fields(WatchReport)]
    unknown = sorted(set(data) - set(names))
    missing = [n for n in ("release", "previous", "machine", "factor", "status", "table") if n not in data]
    if unknown or missing:
        raise InputError(f"{source}: not a release-watch report ("
                         + "; ".join(filter(None, [f"{len(unknown)} unexpected field(s)" if unknown else "",
                                                   "missing " + ", ".join(missing) if missing else ""])) + ")")
    at = lambda name: f"{source}: {name}"  # noqa: E731
    factor = data["factor"]
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise InputError(f"{at('factor')}: expected a number, got {type(factor).__name__}")
    for name, allowed in (("status", STATUSES), ("scale", SCALES)):
        if name in data and data[name] not in allowed:
            raise InputError(f"{at(name)}: expected one of {', '.join(allowed)}")
    return WatchReport(release=_release_field(at("release"), data["release"]),
                       previous=_release_field(at("previous"), data["previous"]),
                       machine=machine_name(at("machine"), data["machine"] if isinstance(data["machine"], str) else ""),
                       factor=number(at("factor"), float(factor), low=1.0, high=1000.0), status=data["status"],
                       table=_table_field(at("table"), data["table"]),
                       rerun_table=_table_field(at("rerun_table"), data.get("rerun_table", "")),
                       confirmed=_rows(at("confirmed"), data.get("confirmed", [])),
                       noise=_names(at("noise"), data.get("noise", [])),
                       reason=_text(at("reason"), data.get("reason", ""), 1000), scale=data.get("scale", "ci"))


def _table_field(where: str, value) -> str:
    """A compare table as `measure` writes it: rows only, each line starting and ending with `|` (a heading, a
    link line or a code fence in a report would reach the issue)."""
    text = _text(where, value, TABLE_LIMIT, lines=True)
    for row, line in enumerate(text.splitlines(), 1):
        if line.strip() and not (line.strip().startswith("|") and line.strip().endswith("|")):
            raise InputError(f"{where}: line {row} is not a table row (| ... |)")
    return text


def table_md(table: str) -> str:
    """A checked compare table for the issue: each cell quoted for Markdown (util.quoting.cell), `[` and `]`
    escaped so that no cell is a link, the n/a rows left out (`shown`)."""
    rows = []
    for line in shown(table).splitlines():
        cells = line.strip().strip("|").split("|")
        rows.append("| " + " | ".join(cell(c.strip()).replace("[", "\\[").replace("]", "\\]") for c in cells)
                    + " |" if line.strip() else "")
    return "\n".join(rows)


def load_reports(directory: Path) -> list[WatchReport]:
    """Every watch-*.json under `directory` (the downloaded artifacts), each through report_record; a missing
    folder, a link leading out of it or a malformed report is a WatchError naming the file."""
    directory = Path(directory)
    if not directory.is_dir():
        raise WatchError(f"--reports {directory}: " + ("not a folder" if directory.exists() else "no such folder"))
    reports = []
    for path in sorted(directory.rglob("watch-*.json")):
        if not inside(path, directory):
            raise WatchError(f"{path}: a symbolic link (or under one) to a file outside --reports {directory}; "
                             "refused, not read")
        try:
            reports.append(report_record(load_json(path, REPORT_LIMIT), str(path)))
        except (UnsafeFile, InputError) as exc:
            raise WatchError(one_line(exc)) from None
    return reports


def summary_md(report: WatchReport) -> str:
    """The job summary of one measure job."""
    head = (f"## JAX {report.release} vs {report.previous} on {report.machine}: {report.status}\n\n"
            f"Rule: asv compare --factor {report.factor:g} ('+'), held on a rerun of the flagged benchmarks.\n")
    if report.reason:
        head += f"\n{report.reason}\n"
    if report.noise:
        head += ("\nFlagged on the first run, not confirmed on the rerun (noise): "
                 + ", ".join(cell(n) for n in report.noise) + "\n")
    return head + "\n" + markdown(shown(report.table)) + "\n"


# ---- the issue ---------------------------------------------------------------------------------------------

def issue_title(release: str, previous: str) -> str:
    return TITLE.format(release=release, previous=previous)


def issue_body(reports: list[WatchReport]) -> str:
    """One issue's text for one release: every machine where a regression was confirmed."""
    first = reports[0]
    lines = [MARKER.format(release=first.release), "",  # the only HTML of the issue: report text is quoted
             f"The release watch measured JAX {first.release} against {first.previous} (the release before it) "
             "on the same machine, in the same job, and found benchmarks slower beyond the noise rule:",
             f"asv compare --factor {first.factor:g} marked them '+' on the first run, and again on a rerun of just "
             "the flagged benchmarks on both releases.", ""]
    for r in reports:
        lines += [f"### {r.machine}", "", "| benchmark | before | after | ratio | ratio on the rerun |",
                  "|---|---|---|---|---|"]
        lines += ["| " + " | ".join(cell(c[k]) for k in ROW_FIELDS) + " |" for c in r.confirmed]
        if r.noise:
            lines += ["", "Flagged but not confirmed (noise): " + ", ".join(cell(n) for n in r.noise)]
        lines += ["", "<details><summary>asv compare, first run (every watched benchmark that ran)</summary>", "",
                  table_md(r.table), "", "</details>", "",
                  "<details><summary>asv compare after the rerun</summary>", "", table_md(r.rerun_table), "",
                  "</details>", "", f"Reproduce (a checkout of this repository, `jaxci machine {shell(r.machine)}` "
                  "or any registered machine):",
                  "", "```bash", r.reproduce, "```", ""]
    lines.append("Filed by .github/workflows/jax-release-watch.yml (jaxci/workflows/release_watch.py); a later run for "
                 "this release updates this issue instead of opening another.")
    return "\n".join(lines) + "\n"


def issues_to_file(reports: list[WatchReport]) -> list[tuple[str, str, str]]:
    """(release, title, body) for each release with a confirmed regression on some machine."""
    by_release: dict[str, list[WatchReport]] = {}
    for r in reports:
        if r.status == "regression":
            by_release.setdefault(r.release, []).append(r)
    out = []
    for release in sorted(by_release, key=version_key):
        group = sorted(by_release[release], key=lambda r: r.machine)
        out.append((release, issue_title(release, group[0].previous), issue_body(group)))
    return out


class GhCli:
    """Issues through the GitHub CLI (`gh`, with GH_TOKEN in the environment) in `repo` (owner/name)."""

    def __init__(self, repo: str, gh: str = "gh"):
        self.repo, self.gh = repo, gh

    def _run(self, *args: str, input: str | None = None) -> str:
        proc = subprocess.run([self.gh, *args, "--repo", self.repo], capture_output=True, text=True, input=input)
        if proc.returncode:
            raise WatchError(f"gh {' '.join(args[:2])}: {one_line(proc.stderr.strip()[-300:])}")
        return proc.stdout

    def find(self, release: str) -> int | None:
        """The open issue this watch filed for `release` (by the marker in its body), else None."""
        marker = MARKER.format(release=release)
        found = issue_list(self._run("issue", "list", "--state", "open", "--search", f"\"{release}\" in:title",
                                     "--json", "number,title,body", "--limit", "50"))
        return next((number for number, body in found if marker in body), None)

    def create(self, title: str, body: str) -> str:
        return one_line(self._run("issue", "create", "--title", title, "--body-file", "-", input=body).strip())

    def edit(self, number: int, title: str, body: str) -> str:
        self._run("issue", "edit", str(number), "--title", title, "--body-file", "-", input=body)
        return f"#{number} updated"


def issue_list(text: str) -> list[tuple[int, str]]:
    """`gh issue list --json number,title,body` output as (number, body) pairs; anything else is a WatchError
    saying what was expected (gh's output itself is not repeated)."""
    expected = "gh issue list: expected a JSON list of {number, body} objects"
    try:
        data = parse_json(text or "[]", "gh issue list")
    except UnsafeFile:
        raise WatchError(f"{expected}, got text that is not JSON") from None
    if not isinstance(data, list):
        raise WatchError(f"{expected}, got a JSON {type(data).__name__}")
    out = []
    for i, item in enumerate(data):
        number, body = (item.get("number"), item.get("body")) if isinstance(item, dict) else (None, None)
        if isinstance(number, bool) or not isinstance(number, int) or not isinstance(body, (str, type(None))):
            raise WatchError(f"{expected}; item {i} is not one")
        out.append((number, body or ""))
    return out


def file_issues(reports: list[WatchReport], gh) -> list[str]:
    """Open or update one issue per release with a confirmed regression; what was done, one line each."""
    done = []
    for release, title, body in issues_to_file(reports):
        number = gh.find(release)
        done.append(f"jax {release}: " + (gh.edit(number, title, body) if number is not None
                                          else f"opened {gh.create(title, body)}"))
    return done

"""The workflows' side of jaxci: validate what a user typed before any label or command is built from it,
turn it into a job matrix from the catalogue, and read back what each family's job did.

`workflow_dispatch` inputs and pull-request data are attacker-reachable text. They reach this module only
through environment variables (never `${{ }}` in a shell line) and leave it only as values that passed a
strict check: a family must be a catalogue name, a benchmark filter a compiling regex of safe characters, a
commit a hex hash or a plain ref. Anything else is refused with an error naming the input and the reason.

Subcommands (`jaxci inputs ...`):
  plan      bench.yml: families/scale/filter/commits -> matrix (runs-on label, spot, timeout per family)
  upgrade   jax-upgrade.yml: base/head SHAs -> matrix of the CPU and GPU family of env_matrix/upgrade.toml
  status    inside a family job: record which suite is running and how each ended (survives a cancel)
  collect   after all families: merge their results into results/ and say what happened to each one,
            a runner that vanished on spot capacity reported as a spot interruption, not a regression
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.catalogue import CatalogueError, Machine, catalogue_defaults, load_catalogue
from jaxci.ci.jobcost import timeout_minutes
from jaxci.results.upgrade import load_config
from jaxci.util.validate import (InputError, bench_filter, full_sha, one_line, plain,
                            quoted)

__all__ = ["InputError", "plan", "upgrade_plan", "collect"]  # InputError lives in jaxci.util.validate

SCALES = ("ci", "full")
SPOT_POLICIES = ("exploratory", "never")
MAX_COMMITS = 10
_SEPARATORS = re.compile(r"[, ]+")
_HASH = re.compile(r"[0-9a-f]{7,40}")
_REF_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_REV_SUFFIX = re.compile(r"(~[0-9]{1,4})?")
_SUITE = re.compile(r"[a-z_][a-z0-9_]*")
_RUN_ID = re.compile(r"[0-9]{1,20}")


_plain = plain  # the shared check of jaxci.util.validate


def _items(name: str, text: str | None) -> list[str]:
    return [item for item in _SEPARATORS.split(_plain(name, text)) if item]


def validate_families(text: str | None, catalogue: dict[str, Machine]) -> list[str]:
    """Catalogue names, comma/space separated; empty means every family with bench = true."""
    items = _items("families", text)
    if not items:
        return [name for name, m in catalogue.items() if m.bench]
    unknown = [item for item in items if item not in catalogue]
    if unknown:
        raise InputError(f"input 'families': {', '.join(map(repr, unknown))} not in env_matrix/machines.toml; "
                         f"known families: {', '.join(catalogue)}")
    return list(dict.fromkeys(items))


def validate_scale(text: str | None) -> str:
    """ci or full; empty (a scheduled run) means full."""
    scale = _plain("scale", text) or "full"
    if scale not in SCALES:
        raise InputError(f"input 'scale': {scale!r} is not one of {', '.join(SCALES)}")
    return scale


def validate_filter(text: str | None) -> str | None:
    """asv --bench regex of a workflow input (None when empty): the shared check, jaxci.util.validate."""
    return bench_filter("input 'bench'", text, allow_empty=True)


def _valid_rev(item: str) -> bool:
    if _HASH.fullmatch(item):
        return True
    suffix = re.search(r"~[0-9]{1,4}$", item)
    ref = item[:suffix.start()] if suffix else item
    parts = ref.split("/")
    return (len(ref) <= 100 and all(_REF_PART.fullmatch(p) and not p.endswith((".", ".lock")) for p in parts)
            and ".." not in ref)


def validate_commits(text: str | None) -> list[str]:
    """Commit hashes or plain refs (branch, tag, HEAD, optionally ~N), comma/space separated; empty: HEAD."""
    items = _items("commits", text)
    if not items:
        return ["HEAD"]
    if len(items) > MAX_COMMITS:
        raise InputError(f"input 'commits': {len(items)} commits, at most {MAX_COMMITS} per run "
                         "(each one is a full suite on every family)")
    bad = [item for item in items if not _valid_rev(item)]
    if bad:
        raise InputError(f"input 'commits': {', '.join(map(repr, bad))} is not a commit hash or a plain ref "
                         "(hex hash of 7-40 characters, or a branch/tag name of letters, digits, . _ - /, "
                         "optionally ~N)")
    return list(dict.fromkeys(items))


validate_sha = full_sha  # the shared check of jaxci.util.validate


def validate_run_id(text: str | None) -> str:
    run_id = _plain("run id", text)
    if not _RUN_ID.fullmatch(run_id):
        raise InputError(f"run id {run_id!r} is not a number (GITHUB_RUN_ID)")
    return run_id


def suites(benchmark_dir: Path = REPO_ROOT / "benchmarks") -> list[str]:
    """Suite modules of benchmarks/ (one asv run each, so an interruption loses one suite, not all)."""
    names = sorted(p.stem for p in benchmark_dir.glob("*.py") if p.stem not in ("__init__", "common"))
    bad = [n for n in names if not _SUITE.fullmatch(n)]
    if bad:
        raise InputError(f"{benchmark_dir}: suite module names {bad} are not plain identifiers")
    return names


def suite_regex(suite: str, bench: str | None) -> str:
    """One asv --bench regex selecting `suite` AND the user's filter (asv ORs repeated --bench flags).

    asv matches with re.search against "module.Class.method(params)"; the lookahead applies the user's
    filter from the start of that name, so anchored (^dispatch) and unanchored (TinyOp) filters both work.
    """
    if not bench:
        return f"^{suite}[.]"
    return f"^(?=.*?(?:{bench})){suite}[.]"


def spot_for(machine: Machine, publish: bool) -> bool:
    """Spot only where the catalogue allows it ("exploratory") and the run is not published."""
    if machine.spot not in SPOT_POLICIES:
        raise CatalogueError(f"machines.{machine.name}.spot = {machine.spot!r}; expected one of {SPOT_POLICIES}")
    return machine.spot == "exploratory" and not publish


def matrix_entry(machine: Machine, run_id: str, spot: bool, timeout: int) -> dict:
    return {
        "family": machine.name,
        "runs_on": machine.runs_on_label(run_id, spot=spot),
        "spot": spot,
        "backend": machine.backend,
        "gpu": machine.has_gpu,
        "timeout_minutes": timeout,
    }


@dataclass(frozen=True)
class Plan:
    families: list[str]
    scale: str
    bench: str | None
    commits: list[str]
    publish: bool
    matrix: dict
    suite_filters: list[str]

    def outputs(self) -> dict[str, str]:
        """GitHub step outputs: one line each, built only from validated values."""
        return {
            "matrix": json.dumps(self.matrix, separators=(",", ":")),
            "scale": self.scale,
            "publish": "true" if self.publish else "false",
            "commits": " ".join(self.commits),
            "suite_filters": " ".join(self.suite_filters),
        }


def plan(families: str | None, scale: str | None, bench: str | None, commits: str | None, run_id: str | None,
         catalogue: dict[str, Machine] | None = None, defaults=None, suite_names: list[str] | None = None) -> Plan:
    catalogue = load_catalogue() if catalogue is None else catalogue
    defaults = catalogue_defaults() if defaults is None else defaults
    names = validate_families(families, catalogue)
    scale = validate_scale(scale)
    regex = validate_filter(bench)
    revs = validate_commits(commits)
    run_id = validate_run_id(run_id)
    publish = scale == "full"
    include = [matrix_entry(catalogue[n], run_id, spot_for(catalogue[n], publish),
                            timeout_minutes(catalogue[n], defaults, runs=len(revs))) for n in names]
    filters = [f"{s}={suite_regex(s, regex)}" for s in (suites() if suite_names is None else suite_names)]
    return Plan(names, scale, regex, revs, publish, {"include": include}, filters)


def upgrade_plan(base: str | None, head: str | None, run_id: str | None,
                 catalogue: dict[str, Machine] | None = None, defaults=None) -> dict[str, str]:
    """jax-upgrade.yml: both families of upgrade.toml, on-demand, timed for two runs (base and head)."""
    catalogue = load_catalogue() if catalogue is None else catalogue
    defaults = catalogue_defaults() if defaults is None else defaults
    config = load_config(catalogue=catalogue)
    base, head = validate_sha("base sha", base), validate_sha("head sha", head)
    run_id = validate_run_id(run_id)
    include = [matrix_entry(catalogue[n], run_id, False, timeout_minutes(catalogue[n], defaults, runs=2))
               for n in (config.cpu_family, config.gpu_family)]
    return {"matrix": json.dumps({"include": include}, separators=(",", ":")), "base": base, "head": head,
            "factor": f"{config.factor:g}", "scale": config.scale}


def write_outputs(outputs: dict[str, str], path: str | None) -> None:
    for key, value in outputs.items():
        if "\n" in value or "\r" in value:
            raise InputError(f"output {key} would span lines")
    text = "".join(f"{k}={v}\n" for k, v in outputs.items())
    if path:
        with open(path, "a") as fh:
            fh.write(text)
    print(text, end="")


# ---- status of one family's job: which suite runs, how each ended -----------------------------------

ASV_EXIT = {0: "ok", 2: "completed; some benchmarks failed or timed out (results saved)"}


def _load_status(path: Path) -> dict:
    """A status file, checked: a cancelled job or a hand edit can leave one that is not what status_init wrote."""
    try:
        status = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"status file {path}: not found (run `jaxci inputs status {path} init` first)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"status file {path}: unreadable: {one_line(exc, 120)}") from None
    if not (isinstance(status, dict) and isinstance(status.get("family"), str)
            and isinstance(status.get("suites"), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in status["suites"].items())
            and (status.get("running") is None or isinstance(status.get("running"), str))):
        raise InputError(f"status file {path}: not a run status (family, suites, running)")
    return status


def _save_status(path: Path, status: dict) -> None:
    """Written to a temporary file and renamed over the old one: a job cancelled mid-write leaves the
    previous status, never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(status, indent=1))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def status_init(path: Path, family: str, spot: bool) -> dict:
    status = {"family": family, "spot": spot, "suites": {}, "running": None, "finished": False}
    _save_status(path, status)
    return status


def status_start(path: Path, suite: str) -> dict:
    status = _load_status(path)
    status["running"] = suite
    status["suites"][suite] = "running"
    _save_status(path, status)
    return status


def status_end(path: Path, suite: str, exit_code: int, log: str = "") -> dict:
    status = _load_status(path)
    if exit_code == 1 and "No benchmarks selected" in log:
        state = "not selected by the filter"
    else:
        state = ASV_EXIT.get(exit_code, f"failed: asv exit {exit_code}")
    status["suites"][suite] = state
    status["running"] = None
    _save_status(path, status)
    return status


def status_finish(path: Path) -> dict:
    """Runs in an always() step: a suite still marked running was cut off (cancelled or timed out)."""
    status = _load_status(path)
    if status["running"]:
        status["suites"][status["running"]] = "interrupted (job cancelled or timed out during this suite)"
        status["interrupted"] = status["running"]
        status["running"] = None
    status["finished"] = True
    _save_status(path, status)
    return status


def family_outcome(entry: dict, status: dict | None) -> tuple[str, str]:
    """(outcome, detail) for one matrix entry, from its status file or the lack of one."""
    if status is None:
        if entry.get("spot"):
            return "spot interruption", ("no status came back from a spot runner: the instance was reclaimed "
                                         "or the runner vanished; not a regression, rerun it")
        return "runner lost", "no status came back from an on-demand runner (never started, or the runner vanished)"
    suites = status.get("suites", {})
    if status.get("interrupted"):
        return "interrupted", f"suite {status['interrupted']} was cut off; earlier suites are saved"
    if not suites:
        return "failed before the suites", "a setup step (install, machine registration) failed"
    failed = {s: v for s, v in suites.items() if v.startswith("failed")}
    if failed:
        return "failed", "; ".join(f"{s}: {v}" for s, v in failed.items())
    partial = [s for s, v in suites.items() if v.startswith("completed")]
    if partial:
        return "complete", "some benchmarks failed or timed out in: " + ", ".join(partial)
    return "complete", "all suites ran"


def collect(matrix: dict, incoming: Path, results: Path, catalogue: dict[str, Machine]) -> list[dict]:
    """Merge each family's artifact into results/ and say what happened to it. Families come from the
    plan's matrix and are checked against the catalogue again before they become paths. A family whose
    status file is unreadable is reported as such; the other families are still collected."""
    if not isinstance(matrix, dict) or not isinstance(matrix.get("include"), list) \
            or not all(isinstance(e, dict) for e in matrix["include"]):
        raise InputError("--matrix: expected the plan's matrix, {\"include\": [{\"family\": ...}, ...]}")
    for entry in matrix["include"]:
        if entry.get("family") not in catalogue:
            raise InputError(f"--matrix: family {quoted(entry.get('family'), 80)} is not in the catalogue")
    rows = []
    for entry in matrix["include"]:
        family = entry["family"]
        root = incoming / f"results-{family}"
        status_path = root / "run-status" / f"{family}.json"
        try:
            status = _load_status(status_path) if status_path.is_file() else None
            outcome, detail = family_outcome(entry, status)
        except InputError as exc:
            outcome, detail = "status unreadable", f"{exc}; results are still merged if present"
        merged = False
        source = root / "results" / family
        if source.is_dir() and any(source.glob("*.json")):
            shutil.copytree(source, results / family, dirs_exist_ok=True)
            merged = True
            if (root / "results" / "benchmarks.json").is_file():
                shutil.copy2(root / "results" / "benchmarks.json", results / "benchmarks.json")
        rows.append({"family": family, "spot": bool(entry.get("spot")), "outcome": outcome, "detail": detail,
                     "results_merged": merged})
    return rows


def outcome_markdown(rows: list[dict]) -> str:
    lines = ["| family | capacity | outcome | results merged | detail |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['family']} | {'spot' if r['spot'] else 'on-demand'} | {r['outcome']} | "
                     f"{'yes' if r['results_merged'] else 'no'} | {r['detail']} |")
    return "\n".join(lines) + "\n"


def status_markdown(status: dict) -> str:
    lines = [f"### {status['family']} ({'spot' if status.get('spot') else 'on-demand'})", "",
             "| suite | outcome |", "|---|---|"]
    lines += [f"| {s} | {v} |" for s, v in status["suites"].items() if _SUITE.fullmatch(s)] \
        or ["| (none) | no suite started |"]
    return "\n".join(lines) + "\n"


# ---- command line ------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxci inputs", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan", help="bench.yml inputs -> matrix")
    for name in ("families", "scale", "bench", "commits"):
        p.add_argument(f"--{name}", default="")
    p.add_argument("--run-id", required=True)
    p.add_argument("--github-output")
    u = sub.add_parser("upgrade", help="jax-upgrade.yml base/head -> matrix")
    u.add_argument("--base", required=True)
    u.add_argument("--head", required=True)
    u.add_argument("--run-id", required=True)
    u.add_argument("--github-output")
    s = sub.add_parser("status", help="record suite progress in a family job")
    s.add_argument("file", type=Path)
    s.add_argument("action", choices=("init", "start", "end", "finish"))
    s.add_argument("--family")
    s.add_argument("--spot", choices=("true", "false"))
    s.add_argument("--suite")
    s.add_argument("--exit", type=int)
    s.add_argument("--log", type=Path)
    c = sub.add_parser("collect", help="merge family artifacts, report each family's outcome")
    c.add_argument("--matrix", required=True, help="the plan's matrix JSON")
    c.add_argument("--incoming", type=Path, required=True)
    c.add_argument("--results", type=Path, default=Path("results"))
    return parser


def _status_command(args) -> int:
    if args.action == "init":
        catalogue = load_catalogue()
        if args.family not in catalogue:
            raise InputError(f"family {args.family!r} is not in the catalogue")
        status_init(args.file, args.family, args.spot == "true")
    elif args.action in ("start", "end"):
        if not args.suite:
            raise InputError(f"status {args.action}: --suite is required (the benchmarks/ module that runs)")
        if not _SUITE.fullmatch(args.suite):
            raise InputError(f"status {args.action}: --suite {quoted(args.suite, 80)} is not a suite name "
                             "(a plain lower-case identifier, as the modules of benchmarks/)")
        if args.action == "start":
            status_start(args.file, args.suite)
            return 0
        if args.exit is None:
            raise InputError("status end: --exit is required (asv's exit status for this suite)")
        log = args.log.read_text(errors="replace") if args.log and args.log.is_file() else ""
        state = status_end(args.file, args.suite, args.exit, log)["suites"][args.suite]
        return 1 if state.startswith("failed") else 0  # the job fails; the other suites still run
    else:
        print(status_markdown(status_finish(args.file)))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "plan":
            result = plan(args.families, args.scale, args.bench, args.commits, args.run_id)
            print(f"jaxci inputs: families {', '.join(result.families)}; scale {result.scale}; "
                  f"filter {result.bench or '(all)'}; commits {' '.join(result.commits)}; "
                  f"publish {result.publish}", file=sys.stderr)
            write_outputs(result.outputs(), args.github_output)
        elif args.command == "upgrade":
            write_outputs(upgrade_plan(args.base, args.head, args.run_id), args.github_output)
        elif args.command == "status":
            return _status_command(args)
        else:
            try:
                matrix = json.loads(args.matrix)
            except json.JSONDecodeError as exc:
                raise InputError(f"--matrix is not JSON: {exc}") from None
            rows = collect(matrix, args.incoming, args.results, load_catalogue())
            print(outcome_markdown(rows))
    except (InputError, CatalogueError) as exc:
        print(f"jaxci inputs: refused: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a status or output path that is a folder, unwritable, on a full disk
        print(f"jaxci inputs: cannot write: {one_line(exc, 200)}", file=sys.stderr)
        return 2
    return 0


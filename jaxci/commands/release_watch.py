"""`jaxci release-watch plan|measure|file`: the JAX release watch (jaxci.workflows.release_watch), step by step.

plan     which JAX releases are newer than the pin (the package index) and the measure job's matrix
measure  jaxci history for a release and the one before it, asv compare, the confirmation rerun; a report
file     open or update one issue per release with a confirmed regression (--dry-run: print them)
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

from jaxci.catalogue import CatalogueError, catalogue_defaults, load_catalogue, read_pins
from jaxci.commands.argtypes import OneLineParser, ascii_float, refuse
from jaxci.results.history import HistoryError, checkout_root, parse_releases
from jaxci.results.release_index import index_versions
from jaxci.util import safewrite
from jaxci.util.validate import SCALES, InputError, machine_name, number, scale
from jaxci.workflows.release_watch import (
    FACTOR,
    AsvRunner,
    GhCli,
    WatchError,
    file_issues,
    find,
    is_trusted,
    issues_to_file,
    load_reports,
    measure,
    plan_matrix,
    save_report,
    summary_md,
)

_REPO = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")


def _release(name: str, text: str) -> str:
    """One JAX release, checked (a 5000-digit or shell-like value is refused in one line)."""
    try:
        values = parse_releases(text)
    except HistoryError as exc:
        raise InputError(str(exc).replace("--releases", name, 1)) from None
    if len(values) != 1:
        raise InputError(f"{name}: one release, not a list")
    return values[0]


#: how long the plan waits for the package index by default: `pip index versions` answers in 1-5 s from PyPI, so
#: twice pip's own per-request timeout (15 s) leaves room for one retry and never holds a job for minutes
INDEX_TIMEOUT_S = 30.0


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="jaxci release-watch", description="The JAX release watch.")
    sub = parser.add_subparsers(dest="step", required=True)
    plan = sub.add_parser("plan", help="new releases and the measure matrix")
    plan.add_argument("--event", default=os.environ.get("GITHUB_EVENT_NAME", ""))
    plan.add_argument("--ref", default=os.environ.get("GITHUB_REF", ""))
    plan.add_argument("--default-branch", default="main")
    plan.add_argument("--release", default="", help="check this release only (a dispatch input)")
    plan.add_argument("--index-url", help="a PEP 503 simple index instead of pip's (tests: a local one)")
    plan.add_argument("--index-timeout", type=ascii_float, default=INDEX_TIMEOUT_S, metavar="SECONDS",
                      help="give up on an index that has not answered after this long (default: "
                           f"{INDEX_TIMEOUT_S:g}; pip answers in a few seconds, and an index that does not answer "
                           "costs the job this long)")
    plan.add_argument("--run-id", default=os.environ.get("GITHUB_RUN_ID", "0"))
    plan.add_argument("--github-output", metavar="FILE", help="append matrix=... and any=... here")
    run = sub.add_parser("measure", help="history + compare + confirmation rerun for one release on one machine")
    run.add_argument("--release", required=True)
    run.add_argument("--previous", required=True)
    run.add_argument("--machine", required=True)
    run.add_argument("--factor", type=ascii_float, default=FACTOR)
    run.add_argument("--scale", choices=SCALES,  # default: validate.scale() reads JAXCI_SCALE, checked
                     help="JAXCI_SCALE of every run (default: $JAXCI_SCALE, else ci)")
    run.add_argument("--backend", choices=("cpu", "cuda13"), default=os.environ.get("JAXCI_BACKEND") or "cpu")
    run.add_argument("--out", type=Path, required=True, help="folder for watch-<release>-<machine>.json")
    run.add_argument("--summary", metavar="FILE", default=os.environ.get("GITHUB_STEP_SUMMARY"))
    issue = sub.add_parser("file", help="open or update one issue per release with a confirmed regression")
    issue.add_argument("--reports", type=Path, required=True, help="folder holding watch-*.json reports")
    issue.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY", ""))
    issue.add_argument("--dry-run", action="store_true", help="print each issue's title and text, file nothing")
    return parser


def _plan(args) -> int:
    only = _release("--release", args.release) if args.release.strip() else None
    if args.github_output:  # before the index is asked
        safewrite.check_target(args.github_output, option="--github-output")
    pin = read_pins("cpu")["jax"]
    from jaxci.util.validate import index_url

    url = index_url("--index-url", args.index_url) if args.index_url is not None else None
    timeout = number("--index-timeout", args.index_timeout, low=0, high=3600, unit="seconds")
    versions = index_versions("jax", index_url=url, timeout=timeout)
    found = find(pin, versions, only)
    trusted = is_trusted(args.event, args.ref, args.default_branch)
    matrix = plan_matrix(found, load_catalogue(), catalogue_defaults(), args.run_id, trusted)
    names = ", ".join(f"{f['release']} (vs {f['previous']})" for f in found) or "none"
    fams = sorted({e["family"] for e in matrix["include"]})
    if args.github_output:  # written before the plan is said: a failed write is the one line said
        safewrite.write_text(args.github_output, f"matrix={json.dumps(matrix, separators=(',', ':'))}\n"
                             f"any={'true' if matrix['include'] else 'false'}\n", append=True,
                             option="--github-output")
    print(f"jaxci release-watch: pin {pin}; newer releases on the index: {names}; "
          f"families: {', '.join(fams) or 'none'}" + ("" if trusted else " (untrusted event: no GPU family)"))
    return 0


def _measure(args) -> int:
    release, previous = _release("--release", args.release), _release("--previous", args.previous)
    args.scale = scale(args.scale, "ci")  # before the checkout is touched or asv started
    machine = machine_name("--machine", args.machine)
    factor = number("--factor", args.factor, low=1.0, high=1000.0)
    if args.summary:  # before the measurement, which takes minutes
        safewrite.check_target(args.summary, option="--summary")
    report = measure(release, previous, machine, AsvRunner(checkout_root(), args.scale, args.backend), factor)
    path = save_report(report, args.out)
    text = summary_md(report)
    print(text)
    if args.summary:
        safewrite.write_text(args.summary, text, append=True, option="--summary")
    print(f"jaxci release-watch: {report.status}; report in {path}")
    return 1 if report.status == "failed" else 0


def _file(args) -> int:
    reports = load_reports(args.reports)
    if args.dry_run:
        todo = issues_to_file(reports)
        for _, title, body in todo:
            print(f"# {title}\n\n{body}")
        print(f"jaxci release-watch: {len(todo)} issue(s) would be opened or updated "
              f"({len(reports)} report(s) read)")
        return 0
    if not _REPO.fullmatch(args.repo):
        raise InputError(f"--repo {args.repo[:80]!r}: expected owner/name")
    for line in file_issues(reports, GhCli(args.repo)) or ["no confirmed regression: no issue"]:
        print(f"jaxci release-watch: {line}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"plan": _plan, "measure": _measure, "file": _file}[args.step](args)
    except (WatchError, HistoryError, InputError, CatalogueError, OSError, safewrite.UnsafeWrite) as exc:
        return refuse("jaxci release-watch", exc)


if __name__ == "__main__":
    raise SystemExit(main())

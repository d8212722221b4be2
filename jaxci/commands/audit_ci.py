"""The CI audit's part of `jaxci audit`: its options, and one call that runs it after the lecture audit.

A helper of jaxci.commands.audit (argument group, files written, what is printed); the audit itself is
jaxci.audit.lecture_ci.

`jaxci audit PATH` audits the CI too when PATH has .github/workflows (`--no-ci` turns it off, `--ci`
forces it). Markdown output gets the CI section appended; JSON gets a "ci" key; CSV stays the lecture
table (use --ci-output). `--ci-patch FILE` writes the unified diff (`git apply FILE` in the repository);
with `--emit-config FILE` the same changes join the lecture audit's patch (`extend_emitted`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from jaxci.audit.lecture_ci.edits import join_emitted


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("CI audit (the repository's workflows, book config, environment file)")
    g.add_argument("--ci", action=argparse.BooleanOptionalAction, default=None,
                   help="audit .github/workflows too (default: on when PATH has .github/workflows)")
    g.add_argument("--ci-output", type=Path, help="write the CI report here (.json for JSON, else Markdown)")
    g.add_argument("--ci-patch", type=Path, help="write the CI fixes as a unified diff here (for git apply)")
    g.add_argument("--results", type=Path, help="asv results directory for build time and cost per family")
    g.add_argument("--builds-per-year", type=_builds_per_year, metavar="N", default=None,
                   help="builds a year (count them from the repository's workflow runs): the tier decision then "
                        "gives GPU-hours a year before and after the recommended pins (needs --execute)")


def _builds_per_year(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of builds, got {text!r}") from None
    if not 1 <= value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"expected 1..1000000 builds a year, got {value}")
    return value


def predictions(args, verdicts) -> dict:
    """Every executed lecture's predicted seconds on each lab machine (shown in the tier decision beside the runner
    families the audit predicted), from the runner model over --results (default: this checkout's results/).
    {} without --execute."""
    if not getattr(args, "execute", False):
        return {}
    from jaxci import REPO_ROOT
    from jaxci.audit.lecture_ci.lectures import predict_lab
    from jaxci.evidence.inputs import reference

    found, why = predict_lab(verdicts, args.results or (REPO_ROOT / "results"), reference())
    if why:
        print(f"jaxci audit: tier decision: {why}", file=sys.stderr)
    return found


def wanted(args) -> bool:
    if getattr(args, "ci", None) is not None:
        return bool(args.ci)
    return Path(args.path).is_dir() and (Path(args.path) / ".github" / "workflows").is_dir()


def whole_builds(args, verdicts) -> dict:
    """family -> the whole build (jaxci.policy.wholebuild) of the executed audit on every catalogue family, the
    function audit.json's `build` block and the report use, so that the tier rows give the same figure; {} without
    --execute or a catalogue."""
    if not getattr(args, "execute", False):
        return {}
    from jaxci.analysis.lecture_record import AuditView
    from jaxci.audit.writing import render
    from jaxci.catalogue import CatalogueError, load_catalogue
    from jaxci.commands.audit_runner import published_record
    from jaxci.policy import wholebuild
    from jaxci.util.validate import InputError

    try:
        catalogue = load_catalogue()
        published = published_record(args)
    except (CatalogueError, InputError):
        return {}
    audit = AuditView.from_dict(json.loads(render.to_json(verdicts, True)))
    name = Path(args.path).resolve().name
    return {family: wholebuild.whole_build(audit, name, family, entry, published, catalogue)
            for family, entry in catalogue.items()}


def summary_target(args) -> tuple[Path | None, str]:
    """Where the audit's short summaries are appended (--summary, else $GITHUB_STEP_SUMMARY when set), and the
    name a refusal gives it."""
    if args.summary:
        return args.summary, "--summary"
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        return Path(os.environ["GITHUB_STEP_SUMMARY"]), "$GITHUB_STEP_SUMMARY"
    return None, ""


def attach(args, verdicts, text: str) -> str:
    """Run the CI audit when wanted; return the lecture output with the CI part added."""
    if not wanted(args):
        return text
    from jaxci.audit.lecture_ci import audit_ci, lectures, render
    from jaxci.util import safewrite

    root = Path(args.path)
    if not root.is_dir():
        print(f"jaxci audit: --ci needs a repository folder, got the file {root}", file=sys.stderr)
        return text
    if args.results is not None and not args.results.is_dir():
        print(f"jaxci audit: --results {args.results}: no such directory (build time not estimated)", file=sys.stderr)
        args.results = None
    facts = lectures.from_verdicts(verdicts, predictions(args, verdicts))
    report = audit_ci(root, facts, results_dir=args.results,
                      builds_per_year=getattr(args, "builds_per_year", None), whole=whole_builds(args, verdicts))
    args.ci_report = report  # --emit-config adds its file changes (extend_emitted)
    patch = report.patch()
    if args.ci_patch:
        safewrite.write_text(args.ci_patch, patch, option="--ci-patch")
    if args.ci_output:
        body = render.to_json(report, patch) if args.ci_output.suffix == ".json" else render.to_markdown(report, patch)
        safewrite.write_text(args.ci_output, body, option="--ci-output")
    summary_path, option = summary_target(args)
    if summary_path:
        safewrite.write_text(summary_path, render.summary(report) + "\n", append=True, option=option)
    from jaxci.util.quoting import log

    for error in report.errors:  # a file name or a YAML problem quoted: one line, never a workflow command
        print(log(f"jaxci audit: {error}", 1000), file=sys.stderr)
    if args.ci_output:
        return text
    if args.format == "md":
        return text + "\n" + render.to_markdown(report, patch)
    if args.format == "json":
        data = json.loads(text)
        data["ci"] = json.loads(render.to_json(report, patch))
        return json.dumps(data, indent=2, default=str)
    print("jaxci audit: the CI report is not part of --format csv; use --ci-output", file=sys.stderr)
    return text


def extend_emitted(args, config) -> None:
    """Add the CI audit's file changes (when it ran) to the lecture audit's --emit-config patch."""
    report = getattr(args, "ci_report", None)
    if report is not None:
        join_emitted(report, config)

"""`jaxci published-score [RESULTS_DIR] [--figures FILE] [--format text|json] [--set FAMILY.KEY=VALUE]`: every
published figure against the runner model, transfer-only and leave-one-out (jaxci.report.figure_score; the
table of docs/runner-model.md "Scored against the published figures"). `--format json` prints
{"figures": [...], "summary": {"transfer": ..., "loo": ...}}. Exit 2: no such results or figures file, a bad --set,
or figures that do not load."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser


def main(argv: list[str] | None = None) -> int:
    from jaxci import REPO_ROOT
    from jaxci.report import figure_score

    parser = OneLineParser(prog="jaxci published-score", description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", nargs="?", type=Path, default=REPO_ROOT / "results")
    parser.add_argument("--figures", type=Path, default=REPO_ROOT / "docs" / "reference" / "published-figures.json")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--set", action="append", default=[], metavar="FAMILY.KEY=VALUE",
                        help="replace one catalogue figure for a sensitivity run (repeatable)")
    args = parser.parse_args(argv)
    for p in (args.results_dir, args.figures):
        if not p.exists():
            print(f"jaxci published-score: {p}: no such file or directory", file=sys.stderr)
            return 2
    if not (args.results_dir / "benchmarks.json").is_file():   # crossover-stability's rule: no silent 'not predicted'
        print(f"jaxci published-score: {args.results_dir}: not an asv results directory (no benchmarks.json)",
              file=sys.stderr)
        return 2
    try:
        out = figure_score.rows(args.results_dir, args.figures, args.set)
    except ValueError as exc:
        print(f"jaxci published-score: {exc}", file=sys.stderr)
        return 2
    sums = {"transfer": figure_score.summary(out, "transfer"), "loo": figure_score.summary(out, "loo")}
    if args.format == "json":
        print(json.dumps({"figures": out, "summary": sums}, indent=1))
    else:
        print(figure_score.render(out, sums, args.results_dir))
    return 0

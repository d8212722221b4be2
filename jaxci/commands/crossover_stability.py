"""`jaxci crossover-stability [RESULTS_DIR] [--families F,G] [--published] [--held-out]`: how far the predicted
CPU/GPU crossovers move when the CPU machines in the results change (jaxci.report.crossover_stability; the
tables of docs/runner-model.md). `--published` gives the model the published inputs, as the report takes them;
`--held-out` checks the CPU op-mix rule below each machine's smallest size instead. Exit 2: no such results
directory, or results that do not load."""

from __future__ import annotations

from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse

PROG = "jaxci crossover-stability"


def main(argv: list[str] | None = None) -> int:
    from jaxci import REPO_ROOT
    from jaxci.report import crossover_stability as cs

    parser = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", nargs="?", type=Path, default=REPO_ROOT / "results")
    parser.add_argument("--families", default=",".join(cs.FAMILIES), help="comma-separated catalogue families")
    parser.add_argument("--held-out", action="store_true", help="check the op-mix rule below the smallest size")
    parser.add_argument("--published", action="store_true",
                        help="give the model the published inputs (docs/reference), as the report takes them")
    args = parser.parse_args(argv)
    if not (args.results_dir / "benchmarks.json").is_file():
        return refuse(PROG, f"{args.results_dir}: not an asv results directory (no benchmarks.json)")
    try:
        if args.held_out:
            print(cs.held_out(args.results_dir))
            return 0
        published = []
        if args.published:
            from jaxci.evidence.inputs import load

            published = load(REPO_ROOT / "docs" / "reference" / "published-figures.json")
        print(cs.compared(args.results_dir, args.families.split(","), published))
    except (OSError, ValueError) as exc:
        return refuse(PROG, exc)
    return 0

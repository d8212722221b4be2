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
    try:
        _families(args.families)
    except ValueError as exc:
        return refuse(PROG, exc)
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
        print(cs.compared(args.results_dir, _families(args.families), published))
    except (OSError, ValueError) as exc:
        return refuse(PROG, exc)
    return 0


def _families(text: str) -> list[str]:
    """--families as catalogue runner families; ValueError naming the first unknown one (a typo gave an empty
    table in silence)."""
    from jaxci.catalogue import load_catalogue
    from jaxci.util.validate import quoted

    known = [n for n, m in load_catalogue().items() if not m.is_lab]
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"--families {quoted(text, 80)}: {quoted(unknown[0], 40) if unknown else 'none given'} is "
                         f"not a catalogue runner family ({', '.join(known)})")
    return names

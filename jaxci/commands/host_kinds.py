"""`jaxci host-kinds [--ref FAMILY] [--results DIR]`: per runner family, how long each kind of host work (the
interpreter, native code on the main thread, other threads) takes there over the reference family, with its band
and sources (jaxci.analysis.host_kind_factors; issue 81 item 2). A Markdown table; docs/host-kinds.md is its
output. Exit 2 with one line when the results or the catalogue cannot be read."""

from __future__ import annotations

from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse


def main(argv: list[str] | None = None) -> int:
    from jaxci import REPO_ROOT

    parser = OneLineParser(prog="jaxci host-kinds", description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="ubuntu-latest", help="the family the factors are over (default: the "
                        "GitHub-hosted CPU runner, whose probe is published)")
    parser.add_argument("--results", default=str(REPO_ROOT / "results"), help="asv results directory")
    args = parser.parse_args(argv)

    from jaxci.analysis.host_kind_factors import KINDS, factors
    from jaxci.catalogue import CatalogueError, load_catalogue
    from jaxci.commands.predict import runner_model
    from jaxci.results.records import ResultsError, load_results
    from jaxci.util.quoting import cell

    try:
        catalogue = load_catalogue(include_lab=True)
        rs = load_results(Path(args.results))
        model = runner_model(rs, catalogue, args.results, [])
    except (ResultsError, CatalogueError, ValueError) as exc:
        return refuse("jaxci host-kinds", " ".join(str(exc).split()))
    if args.ref not in catalogue or catalogue[args.ref].is_lab:
        return refuse("jaxci host-kinds", f"--ref {args.ref[:80]!r} is not a catalogue family")
    print(f"| family | {' | '.join(f'{k} (band)' for k in KINDS)} |")
    print("|---|" + "---|" * len(KINDS))
    notes = []
    for family in (n for n, e in catalogue.items() if not e.is_lab):
        found = factors(model, family, args.ref)
        print(f"| {family} | " + " | ".join(
            f"x{f.value.mid:.2f} ({f.value.low:.2f}-{f.value.high:.2f})" if f.value else "not known"
            for f in found) + " |")
        notes += [f"- {family}, {f.kind}: {cell(f.source)}" for f in found if family != args.ref]
    print(f"\nEach factor: seconds of that kind of host work on the family over {args.ref}'s (above 1: slower "
          "there). Sources:\n")
    print("\n".join(notes))
    return 0

"""`jaxci report RESULTS_DIR [--html HTML_DIR] [--out DIR] [--format md|json|summary]`.

Prints the crossover table and FP64 ratios (md), the whole report (json), or a short summary (summary: the
answer sheets in under 30 lines, what scripts/bench.sh ends with); --out writes findings.md, guidance.md
and report.json; --html writes HTML_DIR/findings/ (run after `asv publish`) and links it from asv's index.html.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from jaxci.catalogue import CatalogueError
from jaxci.results.records import ResultsError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jaxci report", description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", help="asv results directory (results/<machine>/*.json)")
    parser.add_argument("--html", metavar="HTML_DIR", help="asv's html directory: write findings/ there and link it")
    parser.add_argument("--out", metavar="DIR", help="write findings.md, guidance.md and report.json here")
    parser.add_argument("--format", choices=("md", "json", "summary"), default="md", help="what to print (default: md)")
    args = parser.parse_args(argv)

    from jaxci.report.build import build, to_json
    from jaxci.report.findings import crossover_table, findings_md, fp64_table, guidance_md, predicted_crossover_table

    start = time.perf_counter()
    try:
        report = build(Path(args.results_dir))
    except (ResultsError, CatalogueError) as exc:
        print(f"jaxci report: {exc}", file=sys.stderr)
        return 2
    if not report.records:  # an empty or wrong folder is not "all fine" (issue 17)
        print(f"jaxci report: {args.results_dir}: no asv result values in it (expected <machine>/*.json "
              "from asv run)", file=sys.stderr)
        return 2
    findings, guidance, data = findings_md(report), guidance_md(report), to_json(report)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "findings.md").write_text(findings, encoding="utf-8")
        (out / "guidance.md").write_text(guidance, encoding="utf-8")
        (out / "report.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    if args.html:
        from jaxci.report.page import write_page

        page, link = write_page(report, Path(args.html), findings, guidance, data)
        print(f"jaxci report: wrote {page} ({link})", file=sys.stderr)
    for error in report.errors:
        print(f"jaxci report: warning: {error}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(data, indent=1, default=str))
    elif args.format == "summary":
        from jaxci.report.answers import summary_lines

        print("\n".join(summary_lines(report)))
    else:
        print("## Crossovers (measured)\n\n" + crossover_table(report))
        print("\n## Crossovers (predicted)\n\n" + predicted_crossover_table(report))
        print("\n## FP64 / FP32 time ratios\n\n" + fp64_table(report))
    print(f"jaxci report: {len(report.records)} result cells from {len(report.machines)} machine(s) "
          f"in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return 0

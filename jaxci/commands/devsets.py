"""`jaxci devsets`: the runner model's protocol on its two development sets (jaxci.analysis.devsets).

    jaxci devsets --set g4dn.2xlarge=G.json --set ubuntu-latest=A.json [--form both] [--lectures]
        [--format md|json] [--calibrate docs/reference/notebook-calibration.json [--accepts LOW,HIGH]]
    jaxci devsets --table docs/reference/dev-sets.json [--check] [--lectures]

`--set`: the sets' runs (measure/published_builds.py --format json), every calibration fitted again; `--table`: the
committed record re-scored (`--check`: exit 1 when its scoreboard does not hold). Exit 2 on a file that is not
what it claims to be.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxci.analysis import devsets as D
from jaxci.analysis import residual as R
from jaxci.audit.judging.rescaled import MODELLED
from jaxci.util import safeio, safewrite


def family_probe(family: str) -> float:
    """The family's pure-Python probe (seconds at the published n, published or predicted): a residual's unit."""
    from jaxci.audit.judging.host import published_probe
    from jaxci.evidence.inputs import reference

    found = published_probe(reference(), family)
    if found is None:
        raise D.DevSetError(f"{family} has no pure-Python probe, published or predicted: no residual moves to it")
    return found.value.mid


def _json(path: Path):
    try:
        return safeio.load_json(path)
    except (OSError, ValueError) as exc:   # safeio.UnsafeFile and a JSON error are ValueErrors
        raise D.DevSetError(f"{path}: not readable JSON ({str(exc).splitlines()[0]})") from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jaxci devsets", description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--set", action="append", metavar="FAMILY=FILE",
                     help="a family and its published_builds --format json output (twice: the two sets)")
    src.add_argument("--table", type=Path, help="the committed record (docs/reference/dev-sets.json): re-score it")
    p.add_argument("--check", action="store_true", help="with --table: exit 1 if its scoreboard does not hold")
    p.add_argument("--lectures", action="store_true", help="each lecture's row too")
    p.add_argument("--form", choices=R.FORMS, default="both", help="the calibration's form (the model's: both)")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--calibrate", type=Path, metavar="FILE", help="with --set: write the calibration (JSON) to FILE")
    p.add_argument("--accepts", metavar="LOW,HIGH", help="with --calibrate: the probe range (s at 10M) in which a "
                                                         "host cannot be told from the one the sets ran on")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    runs = {}
    try:
        if args.table:
            data = D.parse_table(_json(args.table), str(args.table))
            names, published, preds, dominant = D.from_table(data)
        else:
            for item in args.set:
                family, _, path = item.partition("=")
                runs[family] = D.parse_run(_json(Path(path)), family_probe(family), MODELLED, path)
            sets = {f: r[0] for f, r in runs.items()}
            names = {f: [s.lecture for s in ls] for f, ls in sets.items()}
            published = {f: [s.published_s for s in ls] for f, ls in sets.items()}
            dominant = {f: [rec.get("dominant", "") for rec in r[1]] for f, r in runs.items()}
            preds = D.predictions(sets, args.form)
    except D.DevSetError as exc:
        print(f"devsets: {exc}", file=sys.stderr)
        return 2
    rows = D.board(published, preds)
    if args.format == "json":
        print(json.dumps({"board": rows}, indent=1))
    else:
        text = D.render_board(rows) + (D.render_lectures(names, published, preds, dominant) if args.lectures else "")
        print(text, end="")
    if args.table and args.check:
        wrong = D.check(data)
        for line in wrong:
            print(f"devsets: {line}", file=sys.stderr)
        return 1 if wrong else 0
    if args.calibrate and runs:
        accepts = tuple(float(x) for x in args.accepts.split(",")) if args.accepts else None
        try:
            found = D.calibration(sets, {f: r[2] for f, r in runs.items()}, args.form, accepts)
        except D.DevSetError as exc:
            print(f"devsets: {exc}", file=sys.stderr)
            return 2
        safewrite.write_text(args.calibrate, json.dumps(found, indent=2) + "\n")
        print(f"written: {args.calibrate}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`jaxci accel-score AUDIT ... --family F [--platform tpu]`: the runner model scored where lectures ran on both sides
(an executed audit with `--platforms cpu,ACCEL`, e.g. audits/lab-tpu-v5e/): each lecture's accelerator seconds
predicted again by this checkout's model from its CPU run and the family's results, against the measured ones, and
the accelerator/CPU ratio (jaxci.analysis.accel_score).

Exit status: 0 scored; 2 an audit unreadable or no model for the family (one line)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="jaxci accel-score", description=__doc__.splitlines()[0])
    p.add_argument("audits", type=Path, nargs="+", help="executed audits (JSON) with runs on cpu and the accelerator")
    p.add_argument("--family", required=True, help="the catalogue machine the accelerator runs were made on")
    p.add_argument("--platform", default="tpu", choices=("cuda", "rocm", "tpu"), help="the accelerator's platform")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--margin-record", type=Path, metavar="FILE",
                   help="also write the pin margin the ratios imply, with the lectures it rests on (JSON; "
                        "docs/reference/pin-margin.json is the committed one)")
    return p


def _known_family(family: str, platform: str) -> None:
    """--family is a catalogue machine with the accelerator --platform names (a typo was a KeyError traceback).
    Raises DevSetError naming the machines that have one."""
    from jaxci.accel import DEVICE_OF
    from jaxci.analysis.devsets import DevSetError
    from jaxci.catalogue import load_catalogue
    from jaxci.util.validate import quoted

    catalogue = load_catalogue(include_lab=True)
    kind = DEVICE_OF[platform]
    fits = sorted(n for n, m in catalogue.items() if m.accelerator == kind)
    if family not in fits:
        what = "not a catalogue machine" if family not in catalogue else f"has no {kind}"
        raise DevSetError(f"--family {quoted(family, 60)}: {what}; machines with a {kind}: {', '.join(fits)}")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.analysis import accel_score as A
    from jaxci.analysis.devsets import DevSetError
    from jaxci.audit.writing.record import AuditError, read
    from jaxci.commands.devsets_repredict import repredicted

    lectures: dict = {}
    try:
        _known_family(args.family, args.platform)
        for path in args.audits:
            try:
                audit = read(path)
            except AuditError as exc:
                raise DevSetError(f"{path}: {exc}") from None
            for lec in repredicted(audit, args.family)["lectures"]:
                A.merge_lecture(lectures, lec)
    except DevSetError as exc:
        return refuse("jaxci accel-score", exc)
    rows = A.rows({"lectures": list(lectures.values())}, args.family, args.platform)
    if args.margin_record:
        from jaxci.util import safewrite

        record = A.margin_record(rows, args.family, args.platform, sorted(p.name for p in args.audits))
        try:
            safewrite.write_text(args.margin_record, json.dumps(record, indent=1) + "\n", option="--margin-record")
        except safewrite.UnsafeWrite as exc:
            return refuse("jaxci accel-score", exc)
    if args.format == "json":
        json.dump({"family": args.family, "platform": args.platform, "summary": A.summary(rows),
                   "lectures": [vars(r) | {"error": r.error, "measured_ratio": r.measured_ratio,
                                           "predicted_ratio": r.predicted_ratio} for r in rows]},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(A.markdown(rows, args.family, args.platform))
    return 0

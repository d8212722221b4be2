"""`jaxci devsets`: the runner model's protocol on its two development sets (jaxci.analysis.devsets).

    jaxci devsets --set g4dn.2xlarge=G.json --set ubuntu-latest=A.json [--form F] [--lectures]
        [--format md|json] [--calibrate docs/reference/notebook-calibration.json [--accepts LOW,HIGH]]
    jaxci devsets --table docs/reference/dev-sets.json [--check] [--lectures] [--published PUBLISHED.json ...]
    jaxci devsets --from-audit AUDIT.json [--published PUBLISHED.json] --from-audit ... [--lectures]
        [--record docs/reference/dev-sets-all.json]
    jaxci devsets --table docs/reference/dev-sets-all.json [--check] [--lectures]

`--set`: the sets' runs (measure/published_builds.py --format json), every calibration fitted again; `--table`: the
committed record re-scored (`--check`: exit 1 when its scoreboard does not hold); `--from-audit`: every lecture the
published build timed, from a committed executed audit (jaxci.analysis.devsets_audit; its published build: the
`--published` given in the same order, else the published.json beside it), scored or counted as coverage lost,
with the weighted figures and the lectures of 60 s or more as their own row (jaxci.analysis.devsets_score);
`--published` with a version-1 `--table`: the filtered record's figures against the whole builds. Exit 2 on a
file that is not what it claims to be. `--form`: the calibration's form, by default the committed calibration's
(docs/reference/notebook-calibration.json), so that a record scores the model the audits apply.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxci.analysis import devsets as D
from jaxci.analysis import devsets_audit as A
from jaxci.analysis import devsets_score as S
from jaxci.analysis import residual as R
from jaxci.analysis.prediction import MODELLED
from jaxci.commands.argtypes import OneLineParser, positive_float
from jaxci.commands.devsets_repredict import repredicted
from jaxci.modeldata import fixed_costs
from jaxci.results import published_build
from jaxci.util import safeio, safewrite
from jaxci.util.validate import InputError, quoted, writable_file


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
    p = OneLineParser(prog="jaxci devsets", description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--set", action="append", metavar="FAMILY=FILE",
                     help="a family and its published_builds --format json output (twice: the two sets)")
    src.add_argument("--table", type=Path, help="the committed record (docs/reference/dev-sets.json, version 1; "
                                                "dev-sets-all.json, version 2): re-score it")
    src.add_argument("--from-audit", action="append", type=Path, metavar="AUDIT",
                     help="a committed executed audit's JSON (twice: the two sets); every lecture its published "
                          "build timed is scored or lost")
    p.add_argument("--published", action="append", type=Path, metavar="PUBLISHED",
                   help="the published build (jaxci-published-build JSON) of each --from-audit, in order (default: "
                        "published.json beside it), or of each set of a version-1 --table")
    p.add_argument("--record", type=Path, metavar="FILE",
                   help="with --from-audit: write the scored lectures as data (version 2) to FILE")
    p.add_argument("--check", action="store_true", help="with --table: exit 1 if its scoreboard does not hold")
    p.add_argument("--lectures", action="store_true", help="each lecture's row too")
    p.add_argument("--form", choices=R.FORMS, default=None,
                   help="the calibration's form (default: the committed calibration's, the model the audits apply)")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--calibrate", type=Path, metavar="FILE",
                   help="with --set or --from-audit: write the calibration (JSON) fitted on their lectures to FILE")
    p.add_argument("--accepts", metavar="LOW,HIGH", type=accepts_range,
                   help="with --calibrate: the probe range (s at 10M) in which a host cannot be told from the one the "
                        "sets ran on: two numbers above zero, LOW below HIGH")
    return p


def _build(path: Path):
    try:
        return published_build.read(path)
    except published_build.PublishedError as exc:
        raise D.DevSetError(str(exc)) from None


def _audit_inputs(audits: list[Path], published: list[Path] | None) -> tuple[dict, dict, dict]:
    """(sets, probes, metas) of the committed audits: each set's records and lost lectures against its published
    build (jaxci.analysis.devsets_audit.score's `sets`), its family's probe, and where its runs ran (the probes each
    run recorded, in seconds at 10M: what a calibration fitted on them records as its host)."""
    from jaxci.audit.writing.record import AuditError, read

    if published and len(published) != len(audits):
        raise D.DevSetError(f"{len(audits)} --from-audit but {len(published)} --published: give one each, in order")
    sets, probes, metas = {}, {}, {}
    for i, path in enumerate(audits):
        build = _build(published[i] if published else published_build.beside(path))
        try:
            audit = read(path)
        except AuditError as exc:
            raise D.DevSetError(f"{path}: {exc}") from None
        recs, lost = A.records(repredicted(audit, build.family), build)
        source = f"runs: {path}; published: {build.repository}@{build.commit[:8]} ({build.executed})"
        sets[build.family] = (recs, lost, build.total_s, source)
        probes[build.family] = family_probe(build.family)
        metas[build.family] = {"snapshot": build.repository, "commit": build.commit[:8],
                               "host_probes_s": A.run_probes_10m(audit)}
    return sets, probes, metas


def accepts_range(text: str) -> tuple[float, float]:
    """argparse `type` of --accepts: LOW,HIGH, two finite numbers above zero with LOW below HIGH."""
    parts = text.split(",") if isinstance(text, str) else []
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"{quoted(text, 40)}: expected LOW,HIGH (seconds at 10M), e.g. 0.5,0.9")
    low, high = (positive_float(x.strip()) for x in parts)
    if not low < high:
        raise argparse.ArgumentTypeError(f"{quoted(text, 40)}: LOW must be below HIGH")
    return low, high


def audit_calibration(inputs: tuple[dict, dict, dict], form: str, accepts: tuple[float, float] | None) -> dict:
    """The calibration (jaxci.analysis.devsets.calibration) fitted in `form` on every scored lecture of the
    committed audits' sets (`inputs`: `_audit_inputs`'s, read once), with the probes their runs recorded as its
    host."""
    sets, probes, metas = inputs
    scored = {f: D.scored(recs, probes[f], MODELLED) for f, (recs, *_) in sets.items()}
    return D.calibration(scored, metas, form, accepts)


def _print_scored(sets: list[S.SetScore], args) -> None:
    rows = S.board(sets)
    if args.format == "json":
        band = S.error_band(sets)
        print(json.dumps({"board": rows, "goals": S.goals(rows),
                          "error_band": None if band is None else dict(zip(("low", "high", "lectures"), band))},
                         indent=1))
        return
    text = S.render_board(rows) + "\n" + S.render_goals(S.goals(rows)) + "\n" + S.render_error_band(sets)
    print(text + (S.render_lectures(sets) if args.lectures else ""), end="")


def whole(args, raw) -> int:
    """--from-audit, a version-2 --table (`raw`: its parsed JSON), or a version-1 one with --published: every
    published lecture of each set, scored or lost."""
    data = filtered = inputs = None
    if args.from_audit:
        inputs = _audit_inputs(args.from_audit, args.published)   # read and predicted again once, for every output
        data = D.to_record(A.score(*inputs[:2], MODELLED, args.form), args.form,
                           f"jaxci devsets --from-audit (form {args.form})")
        sets = D.from_record(data)
    elif raw.get("version") == D.ALL_VERSION:
        data = D.parse_record(raw, str(args.table))
        sets = D.from_record(data)
    else:
        filtered = D.parse_table(raw, str(args.table))
        sets = A.from_filtered(*D.from_table(filtered), {b.family: b for b in map(_build, args.published)})
    # the calibration is fitted before anything is written: one refused (DevSetError) leaves no file behind
    fitted = audit_calibration(inputs, args.form, args.accepts) if args.calibrate and inputs is not None else None
    _print_scored(sets, args)
    if args.record:
        safewrite.write_text(args.record, json.dumps(data, indent=1) + "\n")
        print(f"written: {args.record}", file=sys.stderr)
    if fitted is not None:   # with --record too: each file it was asked for is written
        safewrite.write_text(args.calibrate, json.dumps(fitted, indent=2) + "\n")
        print(f"written: {args.calibrate}", file=sys.stderr)
    if args.check:
        wrong = D.check_record(data or {}) if filtered is None else D.check(filtered)
        for line in wrong:
            print(f"devsets: {line}", file=sys.stderr)
        return 1 if wrong else 0
    return 0


def _refused(args) -> str:
    """An option given where it means nothing ('' when none)."""
    if args.record and not args.from_audit:
        return "--record writes what --from-audit scored: give --from-audit"
    if args.published and args.set:
        return "--published goes with --from-audit or a version-1 --table, not --set"
    if args.calibrate and not (args.set or args.from_audit):
        return "--calibrate fits the calibration on --set runs or --from-audit sets"
    if args.check and args.from_audit:
        return "--check re-scores a committed record: give --table"
    return ""


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if _refused(args):
        parser().error(_refused(args))
    try:   # every output checked before anything is read or written: a bad one leaves no other file behind
        for option, target in (("--record", args.record), ("--calibrate", args.calibrate)):
            if target is not None:
                writable_file(option, target)
    except InputError as exc:
        print(f"devsets: {exc}", file=sys.stderr)
        return 2
    try:
        args.form = args.form or fixed_costs.committed_form() or R.FORMS[0]
    except fixed_costs.FixedCostsError as exc:
        print(f"devsets: {exc}", file=sys.stderr)
        return 2
    runs = {}
    try:
        raw = _json(args.table) if args.table else None
        if args.from_audit or args.published or (isinstance(raw, dict) and raw.get("version") == D.ALL_VERSION):
            return whole(args, raw)
        if args.table:
            data = D.parse_table(raw, str(args.table))
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
        try:
            found = D.calibration(sets, {f: r[2] for f, r in runs.items()}, args.form, args.accepts)
        except D.DevSetError as exc:
            print(f"devsets: {exc}", file=sys.stderr)
            return 2
        safewrite.write_text(args.calibrate, json.dumps(found, indent=2) + "\n")
        print(f"written: {args.calibrate}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

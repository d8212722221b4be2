"""The runner model's protocol (docs/runner-model.md, "Scoring a model change"): the two development sets scored
as predicted, leave-one-lecture-out and cross-set, from `measure/published_builds.py --format json` outputs.

    .venv/bin/python measure/published_builds.py SNAPSHOT --commit C --machine FAMILY ... --format json > A.json
    .venv/bin/python measure/dev_sets.py --set g4dn.2xlarge=G.json --set ubuntu-latest=A.json [--lectures]
        [--format md|json] [--calibrate docs/reference/notebook-fixed-costs.md]

Each set is one family's published build held against the executed audit's predictions on it. The per-notebook
calibration (jaxci.analysis.residual, `--form`) is fitted leave-one-lecture-out within a set, and on the other set
for the cross-set score; published_builds' predictions carry none (it host-scales from the unscaled figures). The
goals (issue 53): on each set by cross-set scoring, 85% of lectures within 2x, the summed build within 1.15x, the
median ratio between 0.85 and 1.15. `--lectures` adds each lecture's row (published, predicted, band, ratio under
each scoring, dominant term). `--calibrate FILE` writes the calibration the runner model uses (fitted on both sets'
calibrating lectures; the offset's band: each set's own) with this scoreboard under FILE's "## Calibrated residual".
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jaxci.analysis import residual as R  # noqa: E402
from jaxci.audit.judging.predicted import MODELLED  # noqa: E402

SCORINGS = ("as predicted", "leave-one-lecture-out", "cross-set")


def lectures_of(path: Path, family: str) -> tuple[list[R.Scored], list[dict]]:
    """The set's scored lectures (a published time and a prediction) and their records."""
    from published_builds import published_host  # noqa: PLC0415 (the sibling script)

    found = published_host(family)
    if not found:
        raise SystemExit(f"dev_sets: {family} publishes no pure-Python probe: no residual can move to it")
    data = json.loads(path.read_text(encoding="utf-8"))
    scored, records = [], []
    for rec in data["lectures"]:
        if rec.get("ratio") is None:
            continue
        parts = rec.get("parts") or {}
        base = rec["predicted_s"]
        modelled = sum(v for k, v in parts.items() if k in MODELLED.get(rec["side"], ()))
        scored.append(R.Scored(rec["lecture"], rec["published_s"], base, found[0], not rec.get("raised"),
                               max(base - modelled, 0.0) if parts else None))
        records.append(rec)
    return scored, records


def predictions(sets: dict, form: str = "offset") -> dict:
    """{family: {scoring: [seconds per lecture]}}."""
    out = {}
    for family, (lectures, _) in sets.items():
        others = [s for f, (ls, _) in sets.items() if f != family for s in ls]
        out[family] = {"as predicted": [s.predicted_s for s in lectures],
                       "leave-one-lecture-out": R.leave_one_out(lectures, form),
                       "cross-set": R.cross_set(others, lectures, form) if others else None}
    return out


def render(sets: dict, preds: dict, per_lecture: bool, form: str = "offset") -> str:
    lines = ["| set | scoring | lectures | within 2x | summed | median ratio | offset (probe units), scale |",
             "|---|---|---|---|---|---|---|"]
    for family, (lectures, _) in sets.items():
        others = [s for f, (ls, _) in sets.items() if f != family for s in ls]
        cross = R.fit(others, form)
        residual = {"as predicted": "none", "leave-one-lecture-out": "the set's other lectures",
                    "cross-set": f"{cross.offset:.3g}, x{cross.scale:.3g} (the other set)" if others else ""}
        for scoring in SCORINGS:
            if preds[family][scoring] is None:
                continue
            s = R.score(lectures, preds[family][scoring])
            lines.append(f"| {family} | {scoring} | {s.lectures} | {s.within_2x} ({s.share_within_2x:.0%}) | "
                         f"{s.summed:.2f} | {s.median:.2f} | {residual[scoring]} |")
    if per_lecture:
        for family, (lectures, records) in sets.items():
            lines += ["", f"## {family}", "", "| lecture | published s | predicted s | band | ratio | "
                      "ratio LOLO | ratio cross-set | dominant |", "|---|---|---|---|---|---|---|---|"]
            p = preds[family]
            for i, (s, rec) in enumerate(zip(lectures, records)):
                cross = p["cross-set"][i] / s.published_s if p["cross-set"] else None
                lines.append(f"| {s.lecture} | {s.published_s:.1f} | {s.predicted_s:.1f} | "
                             f"{rec['low_s']:.3g}..{rec['high_s']:.3g} | {s.predicted_s / s.published_s:.2f} | "
                             f"{p['leave-one-lecture-out'][i] / s.published_s:.2f} | "
                             f"{'' if cross is None else f'{cross:.2f}'} | {rec.get('dominant', '')} |")
    return "\n".join(lines) + "\n"


def calibration(sets: dict, board: str, sources: dict, form: str) -> str:
    """The "## Calibrated residual" section: the scoreboard and the JSON line the runner model reads."""
    pooled = [s for lectures, _ in sets.values() for s in lectures]
    each = [R.fit(lectures, form) for lectures, _ in sets.values()]
    mid = R.fit(pooled, form)
    where = "; ".join(f"{family}: {sources[family]}" for family in sets)
    line = {"probe_units": round(mid.offset, 4), "low": round(min(f.offset for f in each + [mid]), 4),
            "high": round(max(f.offset for f in each + [mid]), 4), "scale": round(mid.scale, 4),
            "source": f"form {form}, fitted on {sum(s.calibrates for s in pooled)} lectures of the development sets "
                      f"({where}); band: each set alone; scored leave-one-lecture-out and cross-set "
                      "(docs/runner-model.md)"}
    return "\n".join([f"Calibrated {datetime.now(UTC):%Y-%m-%d} by `measure/dev_sets.py --form {form}`; the "
                      "scores below are each lecture predicted with a calibration not fitted on it.", "",
                      board.strip(), "", f"- per-notebook residual: {json.dumps(line)}"]) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", action="append", required=True, metavar="FAMILY=FILE",
                   help="a family and its published_builds --format json output (twice: the two sets)")
    p.add_argument("--lectures", action="store_true", help="each lecture's row too")
    p.add_argument("--form", choices=R.FORMS, default="offset",
                   help="the calibration's form: the per-notebook offset (the model's), a host scale, or both")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--calibrate", type=Path, metavar="FILE",
                   help="write the pooled residual and this scoreboard under FILE's '## Calibrated residual'")
    args = p.parse_args(argv)
    sets = {}
    for item in args.set:
        family, _, path = item.partition("=")
        sets[family] = lectures_of(Path(path), family)
    preds = predictions(sets, args.form)
    if args.format == "json":
        print(json.dumps({f: {k: (None if v is None else R.score(sets[f][0], v).__dict__)
                              for k, v in preds[f].items()} for f in sets}, indent=1))
    else:
        print(render(sets, preds, args.lectures, args.form), end="")
    if args.calibrate:
        from jaxci.results.fixed_costs import with_section

        metas = {f: json.loads(Path(p).read_text(encoding="utf-8"))["meta"]
                 for f, _, p in (item.partition("=") for item in args.set)}
        sources = {f: f"{m['snapshot']}@{m['commit']}" for f, m in metas.items()}
        old = args.calibrate.read_text(encoding="utf-8") if args.calibrate.is_file() else ""
        body = calibration(sets, render(sets, preds, False, args.form), sources, args.form)
        args.calibrate.write_text(with_section(old, "## Calibrated residual", body), encoding="utf-8")
        print(f"written: {args.calibrate}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

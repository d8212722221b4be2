"""The runner model's protocol on its two development sets (docs/runner-model.md, "Scoring a model change"): each
lecture as the executed audit predicted it, with the calibration fitted on the set's other lectures
(leave-one-lecture-out) and with the one fitted on the other set (cross-set), the scoreboard of each, and the
calibration written as data (docs/reference/notebook-calibration.json) with the host it was fitted on.

Three inputs, one scoring:
- the sets' runs as `measure/published_builds.py --format json` writes them (`--set FAMILY=FILE`): every
  calibration is fitted again (jaxci.analysis.residual) and every lecture re-scored;
- the committed record of those runs (`--table docs/reference/dev-sets.json`): per lecture its published seconds
  and its prediction under each scoring as the last fit left them, re-scored but never refitted (a refit needs each
  lecture's measured-here share, which the record does not hold); `--check` fails on a changed figure;
- since issue 70, every published lecture from the committed executed audits (jaxci.analysis.devsets_audit, scored
  by jaxci.analysis.devsets_score), and its record (`docs/reference/dev-sets-all.json`, version ALL_VERSION).

    jaxci devsets --set g4dn.2xlarge=G.json --set ubuntu-latest=A.json [--form F] [--lectures]
        [--format md|json] [--calibrate docs/reference/notebook-calibration.json [--accepts LOW,HIGH]]
    jaxci devsets --table docs/reference/dev-sets.json [--check] [--lectures]

The goals (issue 53), per set by cross-set scoring: 85% of lectures within 2x, the summed build within 1.15x, the
median ratio between 0.85 and 1.15. They are measured in a change's closing note, never asserted in a test.
"""

from __future__ import annotations

import math
import statistics
from datetime import UTC, datetime

from jaxci.analysis import residual as R
from jaxci.analysis.prediction import MOST_SECONDS
from jaxci.util.quoting import cell

SCORINGS = ("as predicted", "leave-one-lecture-out", "cross-set")
#: the committed record's ratio per scoring (predicted / published)
RATIOS = {"as predicted": "ratio", "leave-one-lecture-out": "ratio_lolo", "cross-set": "ratio_cross"}
TABLE_VERSION = 1
CALIBRATION_VERSION = 1


class DevSetError(ValueError):
    """A set's file cannot be read as what it claims to be (said with the file)."""


# ---- the runs: published_builds' JSON ------------------------------------------------------------------------------

def scored(records: list[dict], probe_s: float, modelled: dict) -> list[R.Scored]:
    """The lectures of one set that have a published time and a prediction, as jaxci.analysis.residual scores them:
    what the host factor moved (every part but the side's `modelled` ones, jaxci.analysis.prediction.MODELLED:
    the GPU's modelled calls, loops, backend, leapfrog) is what a scale corrects."""
    out = []
    for rec in records:
        if rec.get("ratio") is None:
            continue
        parts = rec.get("parts") or {}
        base = float(rec["predicted_s"])
        moved = sum(v for k, v in parts.items() if k in modelled.get(rec.get("side", ""), ()))
        out.append(R.Scored(rec["lecture"], float(rec["published_s"]), base, probe_s, not rec.get("raised"),
                            max(base - moved, 0.0) if parts else None))
    return out


#: the most lectures a development set may hold: a lecture site's build is a few hundred notebooks, and scoring
#: leave-one-lecture-out refits once per lecture (quadratic: 20,000 lectures did not finish)
MAX_LECTURES = 2_000


def parse_run(data, probe_s: float, modelled: dict, source: str = "a run") -> tuple[list[R.Scored], list[dict], dict]:
    """(scored lectures, their records, the run's meta) of one set's published_builds JSON (parsed); `probe_s`: the
    family's pure-Python probe, the unit its residual moves in."""
    lectures = data.get("lectures") if isinstance(data, dict) else None
    if isinstance(lectures, list) and len(lectures) > MAX_LECTURES:
        raise DevSetError(f"{source}: {len(lectures):,} lectures, more than a development set holds "
                          f"(at most {MAX_LECTURES:,})")
    try:
        records = [r for r in data["lectures"] if r.get("ratio") is not None]
        meta = dict(data.get("meta") or {})
        return scored(records, probe_s, modelled), records, meta
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise DevSetError(f"{source}: not a published_builds --format json output ({exc!r})") from None


def predictions(sets: dict, form: str = "both") -> dict:
    """{family: {scoring: [seconds per lecture] or None}} for `sets` = {family: [Scored]}."""
    out = {}
    for family, lectures in sets.items():
        others = [s for f, ls in sets.items() if f != family for s in ls]
        out[family] = {"as predicted": [s.predicted_s for s in lectures],
                       "leave-one-lecture-out": R.leave_one_out(lectures, form),
                       "cross-set": R.cross_set(others, lectures, form) if others else None}
    return out


def board(published: dict, preds: dict) -> list[dict]:
    """The scoreboard rows: per set and scoring, lectures, within 2x, summed (the build, weighted by published
    seconds) and median ratio. `published` = {family: [published seconds per lecture]}."""
    rows = []
    for family, per in preds.items():
        pub = published[family]
        for scoring in SCORINGS:
            got = per.get(scoring)
            if got is None:
                continue
            ratios = [p / q for p, q in zip(got, pub)]
            rows.append({"set": family, "scoring": scoring, "lectures": len(pub),
                         "within_2x": sum(1 for r in ratios if R.within_2x(r)),
                         "summed": round(sum(got) / sum(pub), 2) if pub else None,
                         "median": round(statistics.median(ratios), 2) if ratios else None})
    return rows


def render_board(rows: list[dict]) -> str:
    lines = ["| set | scoring | lectures | within 2x | summed | median ratio |", "|---|---|---|---|---|---|"]
    for r in rows:
        share = r["within_2x"] / r["lectures"] if r["lectures"] else 0.0
        lines.append(f"| {r['set']} | {r['scoring']} | {r['lectures']} | {r['within_2x']} ({share:.0%}) | "
                     f"{r['summed']:.2f} | {r['median']:.2f} |")
    return "\n".join(lines) + "\n"


def render_lectures(names: dict, published: dict, preds: dict, extra: dict | None = None) -> str:
    """Each lecture's row per set: published, predicted, ratio under each scoring (and `extra` columns)."""
    lines = []
    for family, per in preds.items():
        lines += ["", f"## {family}", "", "| lecture | published s | predicted s | ratio | ratio LOLO | "
                  "ratio cross-set | dominant |", "|---|---|---|---|---|---|---|"]
        for i, (name, pub) in enumerate(zip(names[family], published[family])):
            cols = [f"{per[s][i] / pub:.2f}" if per.get(s) is not None else "" for s in SCORINGS]
            dominant = ((extra or {}).get(family) or [""] * (i + 1))[i]
            lines.append(f"| {cell(name)} | {pub:.1f} | {per['as predicted'][i]:.1f} | {' | '.join(cols)} | "
                         f"{cell(dominant)} |")
    return "\n".join(lines) + "\n"


def calibration(sets: dict, metas: dict, form: str, accepts: tuple | None = None) -> dict:
    """The calibration the runner model reads (version CALIBRATION_VERSION): fitted on both sets pooled (the
    offset's band: each set's own), with the host it was fitted on (the probes around each run, and the probe range
    a host cannot be told from it by: `accepts`, default the probes' own range)."""
    pooled = [s for lectures in sets.values() for s in lectures]
    each = [R.fit(lectures, form) for lectures in sets.values()]
    mid = R.fit(pooled, form)
    probes = sorted({float(p) for m in metas.values() for p in (m.get("host_probes_s") or [m.get("host_probe_s")])
                     if p})
    if not probes:
        raise DevSetError("no host probe in the runs' meta (published_builds records host_probe_s): the calibration "
                          "cannot say which host it was fitted on")
    low, high = accepts or (probes[0], probes[-1])
    if not 0 < low <= probes[0] <= probes[-1] <= high:   # the rule its loader applies (modeldata.fixed_costs)
        raise DevSetError(f"--accepts {low:g},{high:g} does not hold the probes the sets ran at "
                          f"({probes[0]:g}..{probes[-1]:g} s): a calibration that its every reader would refuse")
    where = "; ".join(f"{f}: {m.get('snapshot', '?')}@{m.get('commit', '?')}" for f, m in metas.items())
    return {"version": CALIBRATION_VERSION, "form": form, "probe_units": round(mid.offset, 4),
            "low": round(min(f.offset for f in each + [mid]), 4), "high": round(max(f.offset for f in each + [mid]), 4),
            "scale": round(mid.scale, 4),
            "source": f"form {form}, fitted on {sum(s.calibrates for s in pooled)} lectures of the development sets "
                      f"({where}); band: each set alone; scored leave-one-lecture-out and cross-set "
                      "(docs/runner-model.md)",
            "fitted_on": {"host": "the host that ran the development sets", "n": 10_000_000, "probes_s": probes,
                          "accepts_s": [low, high],
                          "why": "the probes taken around the runs" if accepts is None else "given (--accepts)"},
            "calibrated": f"{datetime.now(UTC):%Y-%m-%d}, jaxci devsets --form {form}"}


# ---- the committed record: docs/reference/dev-sets.json ---------------------------------------------------------

def parse_table(data, source: str = "the record") -> dict:
    """The committed record (TABLE_VERSION, parsed JSON): {"sets": {family: {"lectures": [row]}}, "board": [rows]},
    each set's lectures a non-empty list of rows, each named by one printable line, every figure a positive number
    (seconds within 5 days); DevSetError naming the file and the field otherwise."""
    _versioned(data, TABLE_VERSION, source)
    for family, one in data["sets"].items():
        for row in _rows(one, "lectures", f"{source}: {family}", required=True):
            _name(row, f"{source}: {family}")
            if not (_seconds(row.get("published_s")) and all(_ratio(row.get(k)) for k in RATIOS.values())):
                raise DevSetError(f"{source}: {family} {row.get('lecture')!r}: a figure is missing or not positive")
    board = data.get("board", [])
    if not isinstance(board, list) or not all(isinstance(r, dict) and isinstance(r.get("set"), str)
                                              and isinstance(r.get("scoring"), str) for r in board):
        raise DevSetError(f"{source}: 'board' is not a list of rows with a set and a scoring")
    return data


def _versioned(data, version: int, source: str) -> None:
    """A development-set record of `version` (an int: `true` is no version 1) whose sets are objects."""
    found = data.get("version") if isinstance(data, dict) else None
    sets = data.get("sets") if isinstance(data, dict) else None
    if type(found) is not int or found != version or not isinstance(sets, dict) \
            or not all(isinstance(one, dict) for one in sets.values()):
        raise DevSetError(f"{source}: not a version {version} development-set record")


def _rows(one: dict, key: str, where: str, required: bool = False) -> list[dict]:
    """A set's rows under `key`: a list of objects (non-empty where `required`)."""
    rows = one.get(key, None if required else [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows) or (required and not rows):
        raise DevSetError(f"{where}: {key!r} is not a {'non-empty ' if required else ''}list of rows")
    return rows


def _name(row: dict, where: str) -> None:
    """A row's lecture: one printable line (it heads a Markdown row)."""
    name = row.get("lecture")
    if not isinstance(name, str) or not name or not name.isprintable():
        raise DevSetError(f"{where}: a lecture name is missing or not one printable line")


def _seconds(value) -> bool:
    """Seconds of one lecture: above 0, at most 5 days (prediction.MOST_SECONDS: 1e308 sums to inf)."""
    return _positive(value) and value <= MOST_SECONDS


def _ratio(value) -> bool:
    """A predicted/published ratio: above 0 and at most 1e6 (no model is that far off; nan and inf are no ratio)."""
    return _positive(value) and value <= 1e6


def from_table(data: dict) -> tuple[dict, dict, dict, dict]:
    """(names, published, predictions, dominant) per set, from the committed record: each scoring's prediction is
    its recorded ratio x the published seconds (the ratios were printed from the unrounded seconds)."""
    names, published, preds, dominant = {}, {}, {}, {}
    for family, one in data["sets"].items():
        rows = one["lectures"]
        names[family] = [r["lecture"] for r in rows]
        published[family] = [float(r["published_s"]) for r in rows]
        dominant[family] = [r.get("dominant", "") for r in rows]
        preds[family] = {s: [float(r[key]) * float(r["published_s"]) for r in rows] for s, key in RATIOS.items()}
    return names, published, preds, dominant


def check(data: dict) -> list[str]:
    """Where the record's scoreboard differs from its lectures re-scored (empty: it holds)."""
    _, published, preds, _ = from_table(data)
    got = {(r["set"], r["scoring"]): r for r in board(published, preds)}
    out = []
    for want in data.get("board") or []:
        have = got.get((want["set"], want["scoring"]))
        if have != want:
            out.append(f"{want['set']} {want['scoring']}: recorded {want}, re-scored {have}")
    return out


# ---- the committed record of every lecture: docs/reference/dev-sets-all.json -------------------------------------

#: the record of every published lecture of each set (scored or lost), jaxci.analysis.devsets_score's figures
ALL_VERSION = 2


def to_record(sets: list, form: str, made: str) -> dict:
    """The record (version ALL_VERSION) of scored sets (jaxci.analysis.devsets_score.SetScore), rounded as kept, with
    the board re-scored from the rounded figures, so that `check_record` holds on what is written."""
    from jaxci.analysis import devsets_score as S

    data: dict = {"version": ALL_VERSION, "form": form, "made": made, "sets": {}}
    for one in sets:
        data["sets"][one.family] = {
            "source": one.source, "build_s": round(one.build_s, 2),
            "lectures": [{"lecture": x.lecture, "published_s": round(x.published_s, 2),
                          "predicted_s": round(x.predicted_s, 3),
                          "low_s": None if x.low_s is None else round(x.low_s, 3),
                          "high_s": None if x.high_s is None else round(x.high_s, 3),
                          **{key: round(x.ratios[s], 4) for s, key in RATIOS.items() if s in x.ratios},
                          "weight": round(one.weight(x.published_s), 5), "dominant": x.dominant,
                          "calibrates": x.calibrates} for x in one.lectures],
            "lost": [{"lecture": x.lecture, "published_s": round(x.published_s, 2), "cause": x.cause}
                     for x in one.lost]}
    data["board"] = S.board(from_record(data))
    return data


def parse_record(data, source: str = "the record") -> dict:
    """The committed record of every lecture (ALL_VERSION, parsed JSON): each figure a finite positive number
    (seconds within 5 days, a band's ends absent or seconds too), each name one printable line; DevSetError naming
    the file and the field otherwise."""
    _versioned(data, ALL_VERSION, source)
    for family, one in data["sets"].items():
        where = f"{source}: {family}"
        if not _seconds(one.get("build_s")):
            raise DevSetError(f"{where}: build_s is missing or not positive")
        for row in _rows(one, "lectures", where, required=True):
            _name(row, where)
            if not (all(_seconds(row.get(k)) for k in ("published_s", "predicted_s"))
                    and all(_ratio(row.get(k)) for k in RATIOS.values())
                    and all(row.get(k) is None or _seconds(row.get(k)) for k in ("low_s", "high_s"))):
                raise DevSetError(f"{where} {row.get('lecture')!r}: a figure is missing or not positive")
            if not isinstance(row.get("dominant", ""), str) or not isinstance(row.get("calibrates", True), bool):
                raise DevSetError(f"{where} {row.get('lecture')!r}: 'dominant' is no text or 'calibrates' no bool")
        for row in _rows(one, "lost", where):
            _name(row, f"{where} lost")
            if not _seconds(row.get("published_s")) or not isinstance(row.get("cause"), str):
                raise DevSetError(f"{where} lost {row.get('lecture')!r}: no seconds or no cause")
    return data


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def from_record(data: dict) -> list:
    """The sets (jaxci.analysis.devsets_score.SetScore) of a version ALL_VERSION record."""
    from jaxci.analysis import devsets_score as S

    out = []
    for family, one in data["sets"].items():
        lectures = [S.Lecture(r["lecture"], float(r["published_s"]), float(r["predicted_s"]), r.get("low_s"),
                              r.get("high_s"), {s: float(r[k]) for s, k in RATIOS.items() if k in r},
                              r.get("dominant", ""), bool(r.get("calibrates", True))) for r in one["lectures"]]
        lost = [S.Lost(r["lecture"], float(r["published_s"]), r["cause"]) for r in one.get("lost") or []]
        out.append(S.SetScore(family, one.get("source", ""), float(one["build_s"]), lectures, lost))
    return out


def check_record(data: dict) -> list[str]:
    """Where the record's board differs from its lectures re-scored, or its lectures and lost ones do not add up to
    its build's seconds (empty: it holds)."""
    from jaxci.analysis import devsets_score as S

    sets = from_record(data)
    got = {(r["set"], r["scoring"], r["of"]): r for r in S.board(sets)}
    out = []
    for want in data.get("board") or []:
        have = got.pop((want.get("set"), want.get("scoring"), want.get("of")), None)
        if have != want:
            out.append(f"{want.get('set')} {want.get('scoring')} ({want.get('of')}): recorded {want}, re-scored {have}")
    out += [f"{k[0]} {k[1]} ({k[2]}): re-scored {v}, not recorded" for k, v in got.items()]
    for one in sets:
        held = sum(x.published_s for x in one.lectures) + sum(x.published_s for x in one.lost)
        if abs(held - one.build_s) > 0.01 * max(1, len(one.lectures) + len(one.lost)):
            out.append(f"{one.family}: lectures and lost hold {held:.2f} s, the build {one.build_s:.2f} s")
    return out

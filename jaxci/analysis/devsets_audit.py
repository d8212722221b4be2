"""A development set read from a committed executed audit and its published build (issue 70, item 1): every
lecture the build published a time for is scored or counted as coverage lost, none chosen by its outcome.

A lecture is scored from its runs predicted again by this checkout's model through the audit's own step
(jaxci.commands.devsets_repredict: jaxci.audit.judging.every_family.predict_all, each run moved by the host
factor of the probe recorded when it ran), from the audit JSON alone (no lecture source, nothing executed),
without the calibration: the protocol fits the calibration again, leave-one-lecture-out and cross-set. On an
unchanged model this is the audit's own record (`uncalibrated`), so a model change is scored on the committed
runs. No published second enters a prediction. A lecture with no prediction for the family is lost, with its
cause: the audit's failure label (whose, and why), why it was not executed, or that the audit does not hold it.
"""

from __future__ import annotations

from pathlib import Path

from jaxci.analysis import devsets as D
from jaxci.analysis import devsets_score as S
from jaxci.analysis.prediction import CPU, GPU, LecturePrediction, of_lecture


def uncalibrated(pred: LecturePrediction) -> LecturePrediction:
    """The audit's prediction before the calibration (as jaxci.audit.judging.rescaled.with_residual keeps it)."""
    return pred.restored(pred.uncalibrated, basis=False)


def dominant(parts: dict, top: int = 2) -> str:
    """The prediction's largest parts with their shares ('compile 60%, calls 25%')."""
    total = sum(parts.values())
    ranked = sorted(parts.items(), key=lambda kv: -kv[1])[:top]
    return ", ".join(f"{k} {v / total:.0%}" for k, v in ranked if v > 0) if total > 0 else ""


def raised(lec: dict) -> bool:
    """A lecture whose run did not end ok or had a cell that raised: scored, never calibrated on (its time may be
    short for a cause of the environment here)."""
    if lec.get("status") != "ok":
        return True
    return any(c.get("status") not in (None, "ok") or c.get("expected_error")
               for run in (lec.get("runs") or {}).values() for c in run.get("cells") or [])


def cause(lec: dict | None) -> str:
    """Why a published lecture has no prediction: the audit's failure label, why it was not run, or its absence."""
    if lec is None:
        return "not in the audit"
    failure = lec.get("failure") or {}
    if failure:
        where = "".join(f"{sep}{failure[k]}" for k, sep in (("cell", ", cell "), ("error", ": ")) if failure.get(k))
        return f"{failure.get('by', '?')}: {failure.get('cause', '?')}{where}"
    if lec.get("not_executed"):
        return f"not executed: {lec['not_executed']}"
    return f"no prediction (status {lec.get('status', '?')})"


def records(audit: dict, build, family: str | None = None) -> tuple[list[dict], list[S.Lost]]:
    """(records in the form jaxci.analysis.devsets.scored reads, lost lectures) for every lecture `build`
    (jaxci.results.published_build.PublishedBuild) published a time for, predicted on `family` (default: the
    build's)."""
    family = family or build.family
    by_name = {Path(lec.get("path", "")).stem: lec for lec in audit.get("lectures", [])}
    out, lost = [], []
    for name, seconds in sorted(build.seconds.items()):
        if seconds <= 0:
            continue
        lec = by_name.get(name)
        pred = of_lecture(lec, family) if lec is not None else None
        side = CPU if pred is None or pred.family_kind in (None, CPU) else GPU   # an accelerator (gpu or tpu)
        got = uncalibrated(pred).side(side) if pred is not None else None
        if got is None:
            lost.append(S.Lost(name, seconds, cause(lec)))
            continue
        parts = dict(got.parts or {})
        out.append({"lecture": name, "published_s": seconds, "predicted_s": got.seconds, "low_s": got.low,
                    "high_s": got.high, "side": side, "parts": parts, "ratio": got.seconds / seconds,
                    "raised": raised(lec or {}), "dominant": dominant(parts)})
    return out, lost


def score(sets: dict, probes: dict, modelled: dict, form: str = "both") -> list[S.SetScore]:
    """Each set scored as predicted, leave-one-lecture-out and cross-set. `sets`: {family: (records, lost, build_s,
    source)}; `probes`: {family: its pure-Python probe, the residual's unit}."""
    scored = {f: D.scored(recs, probes[f], modelled) for f, (recs, *_) in sets.items()}
    preds = D.predictions(scored, form)
    out = []
    for family, (recs, lost, build_s, source) in sets.items():
        one = S.SetScore(family, source, build_s, lost=list(lost))
        for i, (rec, s) in enumerate(zip(recs, scored[family])):
            ratios = {k: got[i] / s.published_s for k, got in preds[family].items() if got is not None}
            one.lectures.append(S.Lecture(rec["lecture"], s.published_s, s.predicted_s, rec.get("low_s"),
                                          rec.get("high_s"), ratios, rec.get("dominant", ""), s.calibrates))
        out.append(one)
    return out


def from_filtered(names: dict, published: dict, preds: dict, dominant_of: dict, builds: dict) -> list[S.SetScore]:
    """The committed filtered record (jaxci.analysis.devsets.from_table) as sets against the whole published builds
    (`builds`: {family: PublishedBuild}): every lecture the record does not hold is lost, "not in the set"."""
    out = []
    for family, lectures in names.items():
        build = builds.get(family)
        held = set(lectures)
        lost = [S.Lost(n, s, "not in the set (filtered out)") for n, s in sorted((build.seconds if build else {})
                                                                                  .items()) if n not in held and s > 0]
        source = f"{build.repository}@{build.commit[:8]}" if build else "no published build given"
        one = S.SetScore(family, f"the committed filtered set; published {source}",
                         build.total_s if build else sum(published[family]), lost=lost)
        for i, (name, pub) in enumerate(zip(lectures, published[family])):
            ratios = {k: v[i] / pub for k, v in preds[family].items() if v is not None}
            one.lectures.append(S.Lecture(name, pub, preds[family]["as predicted"][i], None, None, ratios,
                                          dominant_of[family][i]))
        out.append(one)
    return out


def run_probes_10m(audit: dict) -> list[float]:
    """The host probes an audit's runs recorded (each run's, else the audit's own), in seconds at 10M trips (a
    pure-Python loop is linear in its trips): the host a calibration fitted on these runs records."""
    found = [p for lec in audit.get("lectures", []) for run in (lec.get("runs") or {}).values()
             if (p := _at_10m(run.get("host_probe") if isinstance(run, dict) else None)) is not None]
    if not found and (top := _at_10m(audit.get("host_probe"))) is not None:
        found.append(top)
    return sorted({round(p, 3) for p in found})


def _at_10m(probe) -> float | None:
    """A recorded host probe's seconds at 10M trips (None: no usable record)."""
    if isinstance(probe, dict) and isinstance(probe.get("seconds"), (int, float)) and probe.get("n"):
        return float(probe["seconds"]) * 10_000_000 / float(probe["n"])
    return None

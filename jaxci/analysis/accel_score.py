"""The runner model scored where a lecture ran on both sides: its predicted accelerator seconds and accelerator/CPU
ratio against the measured ones (issue 70 item 3; on the lent TPU, issue 71 item 5).

A lecture's measured seconds on one side are what the prediction models: its kernel's start plus its cells
(`kernel_start_s + cells_s` of a run that completed). The prediction is the audit's own for the family, made from the
lecture's CPU run and the family's results (re-predicted by `jaxci accel-score`, no seconds of the accelerator run
used). A lecture the accelerator refused or that ran past the call's deadline is listed with why, never scored.

The pin rule's margin (jaxci.policy.placement: pin at 1.2x, keep at 0.8x) is sized here from the ratio's error: the
factor by which the predicted ratio missed the measured one on 80% of the lectures."""

from __future__ import annotations

import math
from dataclasses import dataclass

from jaxci.analysis.prediction import of_lecture
from jaxci.analysis.residual import within_2x
from jaxci.util.quoting import cell

#: the goals of issue 70/71 this table reports against
#: (within 2x is the scoreboard's one rule: jaxci.analysis.residual.within_2x)
SUM_WITHIN, RATIO_WITHIN, SHARE = 1.25, 1.5, 0.8


@dataclass(frozen=True)
class Row:
    """One lecture: measured seconds per side (None: not completed, `status` says why), predicted seconds."""

    lecture: str
    cpu_s: float | None
    accel_s: float | None
    predicted_cpu_s: float | None
    predicted_accel_s: float | None
    low_s: float | None
    high_s: float | None
    status: str  # "both" | why the accelerator side has no measurement

    @property
    def scored(self) -> bool:
        return self.status == "both" and None not in (self.cpu_s, self.accel_s, self.predicted_cpu_s,
                                                      self.predicted_accel_s)

    @property
    def error(self) -> float | None:
        """Predicted over measured accelerator seconds."""
        return _ratio(self.predicted_accel_s, self.accel_s) if self.scored else None

    @property
    def measured_ratio(self) -> float | None:
        return _ratio(self.accel_s, self.cpu_s) if self.scored else None

    @property
    def predicted_ratio(self) -> float | None:
        return _ratio(self.predicted_accel_s, self.predicted_cpu_s) if self.scored else None

    @property
    def ratio_error(self) -> float | None:
        return _ratio(self.predicted_ratio, self.measured_ratio)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def measured_s(run: dict | None) -> float | None:
    """A completed run's seconds as the model predicts them: its kernel's start plus its cells."""
    if not isinstance(run, dict) or run.get("status") != "ok":
        return None
    cells, start = run.get("cells_s"), run.get("kernel_start_s") or 0.0
    return float(cells) + float(start) if isinstance(cells, (int, float)) else None


def accel_status(runs: dict, platform: str) -> str:
    """"both" when both sides completed, else why the accelerator side did not."""
    run = runs.get(platform)
    if measured_s(runs.get("cpu")) is None:
        return "no completed CPU run"
    if not isinstance(run, dict):
        return f"not run on {platform}"
    if run.get("status") == "ok":
        return "both"
    return f"{run.get('status')}: {str(run.get('error') or '')[:120]}".rstrip(": ")


def merge_lecture(into: dict, lec: dict) -> None:
    """One lecture's record folded into `into` (path -> record): its runs from every audit (one side may have run
    in an audit of its own: one lecture per process, one platform each; a side that failed in one call and
    completed in another keeps the completed run), its prediction from the first that has one."""
    path = lec.get("path")
    if not isinstance(path, str):
        return
    have = into.setdefault(path, {"path": path, "runs": {}, "predicted": {}})
    for platform, run in (lec.get("runs") or {}).items():
        if platform not in have["runs"] or (measured_s(run) is not None and measured_s(have["runs"][platform]) is None):
            have["runs"][platform] = run   # the first completed run of a side, else its first record
    have["predicted"] = have["predicted"] or (lec.get("predicted") or {})


def rows(audit: dict, family: str, platform: str) -> list[Row]:
    """One row per lecture of a re-predicted audit that ran on the CPU."""
    out = []
    for lec in audit.get("lectures", []):
        runs = lec.get("runs") or {}
        if "cpu" not in runs:
            continue
        pred = of_lecture(lec, family)
        cpu, gpu = (pred.cpu, pred.gpu) if pred is not None else (None, None)
        out.append(Row(lec.get("path", "?").rsplit("/", 1)[-1].removesuffix(".md"), measured_s(runs.get("cpu")),
                       measured_s(runs.get(platform)), cpu.seconds if cpu else None, gpu.seconds if gpu else None,
                       gpu.low if gpu else None, gpu.high if gpu else None, accel_status(runs, platform)))
    return out


def _fold(v: float) -> float:
    """An error factor either way: 0.5 and 2 are both x2."""
    return max(v, 1 / v)


def _share(values, limit: float) -> int:
    return sum(1 for v in values if v and _fold(v) <= limit)


def implied_margin(rows_: list[Row], share: float = SHARE) -> float | None:
    """The factor within which the predicted ratio met the measured one on `share` of the scored lectures."""
    errs = sorted(_fold(e) for e in (r.ratio_error for r in rows_) if e)
    if not errs:
        return None
    return errs[min(len(errs) - 1, math.ceil(share * len(errs)) - 1)]


def summary(rows_: list[Row]) -> dict:
    """The goals' figures over the scored lectures."""
    scored = [r for r in rows_ if r.scored]
    n = len(scored)
    if not n:
        return {"scored": 0}
    same_side = sum(1 for r in scored if ((r.measured_ratio or 0) > 1) == ((r.predicted_ratio or 0) > 1))
    return {"scored": n, "within_2x": sum(1 for r in scored if r.error and within_2x(r.error)),
            "summed": sum(r.predicted_accel_s or 0 for r in scored) / sum(r.accel_s or 0 for r in scored),
            "same_side": same_side, "ratio_within_1_5x": _share([r.ratio_error for r in scored], RATIO_WITHIN),
            "margin_80": implied_margin(scored), "not_scored": len(rows_) - n}


def _f(x, fmt: str = "{:.1f}") -> str:
    return "n/a" if x is None else fmt.format(x)


def markdown(rows_: list[Row], family: str, platform: str) -> str:
    """The per-lecture table and the goals' line."""
    acc = platform.upper()
    lines = [f"| lecture | CPU measured s | {acc} measured s | {acc} predicted s (band) | predicted / measured | "
             f"{acc}/CPU measured | {acc}/CPU predicted | ratio error |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows_, key=lambda r: (not r.scored, r.lecture)):
        band = f" ({_f(r.low_s)}-{_f(r.high_s)})" if r.low_s is not None else ""
        measured = _f(r.accel_s) if r.scored else r.status
        lines.append(f"| {cell(r.lecture)} | {_f(r.cpu_s)} | {cell(measured)} | {_f(r.predicted_accel_s)}{band} | "
                     f"{_f(r.error, '{:.2f}')} | {_f(r.measured_ratio, '{:.2f}')} | "
                     f"{_f(r.predicted_ratio, '{:.2f}')} | {_f(r.ratio_error, '{:.2f}')} |")
    s = summary(rows_)
    if s["scored"]:
        n = s["scored"]
        lines += ["", f"{family}: {n} lecture(s) measured on both sides ({s['not_scored']} not scored, listed with "
                      f"why); {acc} seconds within 2x: {s['within_2x']} of {n} (goal {SHARE:.0%}); summed predicted / "
                      f"measured {s['summed']:.2f} (goal within {SUM_WITHIN}x); {acc}/CPU ratio on the same side of 1: "
                      f"{s['same_side']} of {n} (goal 90%); ratio within 1.5x: {s['ratio_within_1_5x']} of {n} (goal "
                      f"{SHARE:.0%}); the ratio's error on 80% of them: x{s['margin_80']:.2f} (the pin margin it "
                      "implies: pin at that factor above the CPU, keep at its inverse)"]
    return "\n".join(lines) + "\n"


#: the committed record of the pin margin's evidence (docs/reference/pin-margin.json), written by
#: `jaxci accel-score AUDIT... --family F --margin-record FILE`; jaxci.policy.margins holds its figure (a test
#: keeps the two equal)
MARGIN_FORMAT, MARGIN_VERSION = "jaxci-pin-margin", 1


def margin_record(rows_: list[Row], family: str, platform: str, sources: list[str]) -> dict:
    """The pin margin the measured ratios imply, with every lecture it rests on (its ratio error) and every one it
    could not use (why): the figure is the factor within which the predicted accelerator/CPU ratio met the
    measured one on SHARE of the lectures measured on both sides."""
    scored = [r for r in rows_ if r.scored]
    return {"format": MARGIN_FORMAT, "version": MARGIN_VERSION, "family": family, "platform": platform,
            "share": SHARE, "margin": implied_margin(rows_),
            "lectures": [{"lecture": r.lecture, "ratio_measured": r.measured_ratio,
                          "ratio_predicted": r.predicted_ratio, "ratio_error": r.ratio_error} for r in scored],
            "not_scored": [{"lecture": r.lecture, "why": r.status} for r in rows_ if not r.scored],
            "sources": sources}

"""Published incident figures (docs/reference/incidents.md): one parser (`figures`), read once per report
(jaxci.report.build), held against the runner model (`check`) and drawn beside our measured lines (`points`).

They never enter any number the report computes. The page's reference points are the figures whose workload is
a suite kernel at a stated size: the compiled (warm) rows of the direct-timings table, and the scalar loops of
incident 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jaxci.analysis.provenance import as_json

# incidents.md: the "CPU runner" is GitHub-hosted (AMD EPYC, 4 cores), the "T4 runner" a g4dn.2xlarge
COLUMNS = ("CPU runner", "T4 runner")
_SCAN_LONG = re.compile(r"about ([\d.]+) s on CPU and about ([\d.]+) s on the T4 at n = ([\d,]+)")
_SCAN_SHORT = re.compile(r"at n = ([\d,]+): ([\d.]+) s GPU vs ([\d.]+) s CPU")
SCAN = ("loops.Scan.time_warm", (("unroll", 1),))


@dataclass(frozen=True)
class PublishedPoint:
    benchmark: str
    case: tuple
    dtype: str          # "float32", or "unstated" where the incident does not say
    column: str         # "CPU runner" | "T4 runner"
    n: int
    seconds: float
    what: str


#: the suite benchmark (and case) each model kernel of a published figure is drawn on
_DRAWN = {"matmul": ("dense.Dense.time_warm", (("op", "matmul"),)),
          "elementwise": ("elementwise.Elementwise.time_warm", ()), "scan": SCAN}
_COLUMN = {"ubuntu-latest": COLUMNS[0], "g4dn.2xlarge": COLUMNS[1]}


def points(figs: list) -> list[PublishedPoint]:
    """The page's reference points, from `figures` (the one parse): warm suite kernels at a stated size; the
    scalar loops' dtype is unstated in the incident."""
    out = []
    for f in figs:
        if f.kernel not in _DRAWN or f.first_call or f.compile_only or f.per_step or f.n is None \
                or f.family not in _COLUMN:
            continue
        bench, case = _DRAWN[f.kernel]
        scan = f.kernel == "scan"
        out.append(PublishedPoint(bench, case, "unstated" if scan else f.dtype, _COLUMN[f.family], f.n, f.published_s,
                                  "incident 1: scalar lax.scan" if scan else f.case.replace(", compiled", "")))
    return out


def for_kernel(pts, benchmark: str, case: tuple) -> list[PublishedPoint]:
    """Published points of one figure's kernel (a case matches when its stated params agree)."""
    have = dict(case)
    return [p for p in pts if p.benchmark == benchmark and all(have.get(k) == v for k, v in p.case)]


# ---- every published figure, held against the runner model (measure/predict_vs_published.py, findings) ----

@dataclass(frozen=True)
class PublishedFigure:
    """One published figure and the model question that predicts it (kernel None: the model cannot, `why`)."""
    case: str
    family: str
    device: str
    published_s: float
    kernel: str | None = None
    n: int | None = None
    dtype: str = "float32"
    first_call: bool = False
    compile_only: bool = False
    per_step: bool = False     # published as seconds per step: compared with the model's per-step slope
    why: str = ""
    resolution_s: float = 0.0  # half a unit of the last printed digit: the published value is +- this
    bound: str = ""            # "lower" (> value) / "upper" (the whole lecture bounds its cell): inside or outside


def _resolution(text: str) -> float:
    """Half a unit of the last printed digit of a figure as the incidents file writes it ("0.001" -> 0.0005)."""
    text = text.replace(",", "")
    return 0.5 * 10 ** -(len(text.split(".")[1]) if "." in text else 0)


_FAMILY = {"CPU runner": "ubuntu-latest", "T4 runner": "g4dn.2xlarge"}
_DIRECT = re.compile(r"^\|\s*(?P<what>[^|]+?)\s*\|\s*(?P<cpu>[\d.]+)\s*s\s*\|\s*(?P<gpu>[\d.]+)\s*s\s*\|")


def _direct(what: str) -> dict:
    """Model question for a direct-timings row (device cpu on the CPU runner, gpu on the T4 runner)."""
    first = "first call" in what
    for pattern, kernel, size in ((r"(\d+)x\1 matmul", "matmul", lambda m: int(m[1])),
                                  (r"(\d+)M-element elementwise", "elementwise", lambda m: int(m[1]) * 1_000_000)):
        m = re.search(pattern, what)
        if m and not what.startswith("NumPy"):
            return {"kernel": kernel, "n": size(m), "first_call": first}
    m = re.search(r"NumPy (\d+)x\1 matmul", what)
    if m:   # NumPy's default dtype: the row states none
        return {"kernel": "numpy_matmul", "n": int(m[1]), "dtype": "float64"}
    m = re.search(r"pure-Python integer sum \((\d+)M\)", what)
    if m:
        return {"kernel": "pure_python", "n": int(m[1]) * 1_000_000}
    return {"why": "not a suite kernel"}


def _both(case: str, cpu: str, gpu: str, **kw) -> list[PublishedFigure]:
    """One published case on the CPU runner and on the T4 runner, each to its printed resolution."""
    return [PublishedFigure(case, "ubuntu-latest", "cpu", float(cpu), resolution_s=_resolution(cpu), **kw),
            PublishedFigure(case, "g4dn.2xlarge", "gpu", float(gpu), resolution_s=_resolution(gpu), **kw)]


def figures(text: str) -> list[PublishedFigure]:
    """Every figure of docs/reference/incidents.md the runner model is held against, in the file's order."""
    out: list[PublishedFigure] = []
    for line in text.splitlines():
        m = _DIRECT.match(line.strip())
        if not m or m["what"] == "benchmark":
            continue
        q = _direct(m["what"])
        for col, value, device in (("CPU runner", m["cpu"], "cpu"), ("T4 runner", m["gpu"], "gpu")):
            dev = device if q.get("kernel") not in (None, "numpy_matmul", "pure_python") else "cpu"
            out.append(PublishedFigure(m["what"], _FAMILY[col], dev, float(value), resolution_s=_resolution(value),
                                       **q))
    flat = " ".join(text.split())
    s = re.search(r"fresh jits at sizes [\d, ]+ \(each compile included\): CPU ([\d.]+) s in total, "
                  r"T4 ([\d.]+) s", flat)
    if s:
        out += _both("fresh-jit series 100-3000", s[1], s[2], kernel="series")
    for m in _SCAN_LONG.finditer(flat):
        n = int(m[3].replace(",", ""))
        out += _both(f"scalar scan n={n:,}", m[1], m[2], kernel="scan", n=n)
    for m in _SCAN_SHORT.finditer(flat):
        n = int(m[1].replace(",", ""))
        out += _both(f"scalar scan n={n:,}", m[3], m[2], kernel="scan", n=n)
    c = re.search(r"compile ([\d.]+) s GPU vs ([\d.]+) s CPU", flat)
    if c:
        out += _both("scalar scan compile", c[2], c[1], kernel="scan", n=100_000, compile_only=True)
    p = re.search(r"about (\d+) microseconds per iteration on the GPU", flat)
    if p:
        out.append(PublishedFigure("scalar scan per step", "g4dn.2xlarge", "gpu", float(p[1]) * 1e-6, kernel="scan",
                                   n=1, per_step=True, resolution_s=0.5e-6))
    w = re.search(r"25x25 matrix iterated in a `while_loop` for (\d+) iterations.*?about ([\d.]+) s compile", flat)
    if w:
        out += [PublishedFigure(f"25x25 while_loop, {w[1]} iterations (GPU 5-6x NumPy: a ratio)", "g4dn.2xlarge",
                                "gpu", float("nan"), kernel="while", n=int(w[1]),
                                why="published as a ratio to NumPy on the CPU, not in seconds, and NumPy's 25x25 loop "
                                    "on the runner is not measured: nothing in seconds to hold the prediction against"),
                PublishedFigure("25x25 while_loop compile", "g4dn.2xlarge", "gpu", float(w[2]),
                                why="no compile timing of the while loop on a GPU in these results "
                                    "(loops.LoopsCompile / LoopsColdStart ran on no GPU)")]
    t = re.search(r"exceeded the ([\d,]+) s per-cell timeout on the T4; the whole lecture pinned to the runner's CPU "
                  r"took (\d+) min (\d+) s", flat)
    if t:
        out += [PublishedFigure("NUTS state-space cell (> timeout, a bound)", "g4dn.2xlarge", "gpu",
                                float(t[1].replace(",", "")), kernel="nuts", n=4 * 800, dtype="float64", bound="lower"),
                PublishedFigure("NUTS lecture pinned to CPU (whole lecture: the cell and the rest)", "g4dn.2xlarge",
                                "cpu", int(t[2]) * 60 + float(t[3]), kernel="nuts", n=4 * 800, dtype="float64",
                                resolution_s=0.5, bound="upper")]
    lec = re.search(r"A lecture took ([\d.]+) s on the CPU runner and ([\d.]+) s on the T4", flat)
    if lec:
        why = ("the lecture's workload (its kernels, sizes and loop steps) is not stated: nothing to put through "
               "the model (jaxci audit --execute measures a lecture's own cells)")
        out += [PublishedFigure("whole lecture", "ubuntu-latest", "cpu", float(lec[1]), why=why),
                PublishedFigure("whole lecture", "g4dn.2xlarge", "gpu", float(lec[2]), why=why)]
    return out


def _interval_ratio(pred: float, f: PublishedFigure) -> float:
    """Predicted over the published value's rounding interval (value +- resolution): 1 inside it, else the ratio
    to its nearer end."""
    lo, hi = f.published_s - f.resolution_s, f.published_s + f.resolution_s
    return pred / lo if pred < lo and lo > 0 else (pred / hi if pred > hi else 1.0)


def _ask(model, f: PublishedFigure, row: dict):
    """Fill row with the model's answer to one figure; the Prediction that says why when it cannot."""
    if f.per_step:
        a = model.predict(f.family, f.kernel, 1_000_000, f.dtype, f.device)
        b = model.predict(f.family, f.kernel, 2_000_000, f.dtype, f.device)
        if a and b:
            row.update(predicted_s=(b.seconds - a.seconds) / 1e6, low_s=(b.low - a.low) / 1e6,
                       high_s=(b.high - a.high) / 1e6, inputs=a.inputs, sources=as_json(a.sources | b.sources))
            return None
        return a if not a else b
    p = model.predict(f.family, f.kernel, f.n, f.dtype, f.device, first_call=f.first_call,
                      compile_only=f.compile_only)
    if p:
        row.update(predicted_s=p.seconds, low_s=min(p.low, p.high), high_s=max(p.low, p.high), inputs=p.inputs,
                   sources=as_json(p.sources))
        return None
    return p


def bound_ends(f: PublishedFigure, low: float, high: float) -> int:
    """How many ends of the predicted band keep a published bound (0: the bound refutes the band)."""
    if f.bound == "lower":
        return sum(x > f.published_s for x in (low, high))
    return sum(x <= f.published_s for x in (low, high))


def bound_verdict(f: PublishedFigure, low: float, high: float) -> str:
    """A published bound scored as a bound: where the band lies against it, never a ratio."""
    ends = bound_ends(f, low, high)
    if f.bound == "lower":
        where = ("above it at both ends of the band" if ends == 2 else
                 "above it at the high end only" if ends == 1 else "below it")
        return f"published is a bound (> {f.published_s:,.0f} s): predicted {where}"
    where = ("inside it at both ends of the band" if ends == 2 else
             "inside it at the low end only" if ends == 1 else "outside it at both ends of the band")
    return f"published is an upper bound (the whole lecture, <= {f.published_s:,.0f} s): predicted {where}"


def check(figs: list[PublishedFigure], model) -> list[dict]:
    """One row per figure: case, family, device, the model question it asks (kernel, n, first_call, compile_only:
    how a decision row finds its checks, jaxci.report.question.Term), published_s, predicted_s, low_s, high_s,
    ratio, why, inputs, sources (what the inputs rest on: jaxci.analysis.provenance.as_json), ratio_interval (to the
    published value's rounding interval) and, for a published bound, `verdict` and `bound_ends` (bound_ends)."""
    import math

    rows = []
    for f in figs:
        row = {"case": f.case, "family": f.family, "device": f.device, "kernel": f.kernel, "n": f.n,
               "first_call": f.first_call, "compile_only": f.compile_only,  # the check's identity, as data
               "published_s": None if math.isnan(f.published_s) else f.published_s,
               "predicted_s": None, "low_s": None, "high_s": None, "ratio": None, "why": f.why, "inputs": "",
               "sources": [], "ratio_interval": None, "verdict": "", "bound_ends": None}
        if f.kernel is not None:
            p = _ask(model, f, row)
            if p is not None:
                row["why"] = p.reason
        pred = row["predicted_s"]
        if pred is not None and f.bound:
            row["verdict"] = bound_verdict(f, row["low_s"], row["high_s"])
            row["bound_ends"] = bound_ends(f, row["low_s"], row["high_s"])
        elif pred is not None and row["published_s"]:
            row["ratio"] = pred / row["published_s"]
            row["ratio_interval"] = _interval_ratio(pred, f)
        elif pred is not None and f.why:
            row["verdict"] = f.why
        rows.append(row)
    return rows

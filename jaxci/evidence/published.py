"""docs/reference/published-figures.json: the published figures, typed, versioned, each with its source.

The file is kept by hand (a figure is added where it is cited in incidents.md or published-measurements.md, which
link here); `read` is its one loader and refuses a file of another format or version, naming the command that
restores the version this jaxci reads. Three kinds of figure:

- `PublishedFigure`: a timing on a runner family (the incidents' figures), with the model question that predicts
  it (kernel None: the model cannot, `why`) and half a unit of its printed last digit (`resolution_s`);
- `Rate`: an achieved rate of a GPU model (GEMM TFLOP/s or copy GB/s), a printed value or a published range;
- `HostRatio`: how much longer one runner family's host took than another's for the same lecture work (same code,
  same environment), a published range (`host_ratios`, optional).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

FORMAT = "jaxci-published-figures"
VERSION = 1
#: the file is data kept in git: this restores the version the checked-out jaxci reads
RESTORE = "git checkout HEAD -- docs/reference/published-figures.json"
LIMIT = 1024 * 1024
DEVICES = ("cpu", "gpu")
BOUNDS = ("", "lower", "upper")
#: a rate's printed unit, in SI
UNITS = {"TFLOP/s": 1e12, "GB/s": 1e9}
RATE_TERMS = {"TFLOP/s": "gemm_rate", "GB/s": "bandwidth"}


class FiguresError(ValueError):
    """The figures file cannot be used: one line naming the file and the cause."""


@dataclass(frozen=True)
class Source:
    document: str   # the page that tells the figure's story (docs/reference/...)
    section: str
    cited: str      # who published it, and how it was measured


@dataclass(frozen=True)
class PublishedFigure:
    """One published figure and the model question that predicts it (kernel None: the model cannot, `why`)."""
    case: str
    family: str
    device: str
    published_s: float         # NaN: published as a ratio, not in seconds
    kernel: str | None = None
    n: int | None = None
    dtype: str = "float32"
    first_call: bool = False
    compile_only: bool = False
    per_step: bool = False     # published as seconds per step: compared with the model's per-step slope
    why: str = ""
    resolution_s: float = 0.0  # half a unit of the last printed digit: the published value is +- this
    bound: str = ""            # "lower" (> value) / "upper" (the whole lecture bounds its cell): inside or outside
    source: str = ""           # its key in PublishedFigures.sources
    runner: str = ""           # the name its family's runner has in the sources (the file's `runners`; else the family)


@dataclass(frozen=True)
class Rate:
    """An achieved rate of a GPU model: `value` as printed (one value, or the two ends of a published range)."""
    where: str                 # the GPU model (the catalogue's gpu_model)
    key: str                   # the GEMM path ("fp32", "tf32"); "" for a copy rate
    value: tuple[float, ...]
    unit: str                  # "TFLOP/s" | "GB/s"
    what: str
    source: str                # the citation

    @property
    def term(self) -> str:
        return RATE_TERMS[self.unit]


@dataclass(frozen=True)
class HostRatio:
    """Seconds on `family`'s host over seconds on `over`'s for the same host work, low and high ends as published."""
    family: str
    over: str
    low: float
    high: float
    what: str
    source: str                # the citation

    @property
    def name(self) -> str:
        return f"host ratio {self.family} / {self.over}"


@dataclass(frozen=True)
class PublishedFigures:
    incidents: tuple[PublishedFigure, ...] = ()
    rates: tuple[Rate, ...] = ()
    sources: dict = field(default_factory=dict)   # key -> Source
    rates_document: str = ""   # the page that tells the rates' story (each rate's source is its citation)
    host_ratios: tuple[HostRatio, ...] = ()


def default_path() -> Path:
    from jaxci import REPO_ROOT

    return REPO_ROOT / "docs" / "reference" / "published-figures.json"


def read(path: str | Path | None = None) -> PublishedFigures:
    """The record at `path` (the checkout's file by default); FiguresError (one line) for anything but this format's
    current version, or a figure whose fields are not what they must be."""
    from jaxci.util import versioned

    path = Path(path) if path is not None else default_path()
    doc = versioned.load(path, FORMAT, VERSION, LIMIT, FiguresError,
                         f"restore the file this jaxci reads with `{RESTORE}`")
    try:
        sources = {str(k): Source(**_texts(v, ("document", "section", "cited"))) for k, v in doc["sources"].items()}
        runners = _runners(doc.get("runners", {}))
        incidents = tuple(replace(f, runner=runners.get(f.family, f.family))
                          for f in (_figure(f, sources) for f in doc["incidents"]))
        rates = tuple(_rate(r) for r in doc["rates"])
        document = _text(doc["rates_document"], "rates_document")
        ratios = tuple(_host_ratio(r) for r in doc.get("host_ratios", []))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FiguresError(f"{path}: {exc.args[0] if exc.args else exc}") from None
    return PublishedFigures(incidents, rates, sources, document, ratios)


def _text(value, what: str) -> str:
    if not isinstance(value, str) or not value.isprintable():
        raise ValueError(f"{what} is not one printable line")
    return value


def _texts(doc: dict, keys: tuple) -> dict:
    if not isinstance(doc, dict) or set(doc) != set(keys):
        raise ValueError(f"a source has fields {sorted(doc) if isinstance(doc, dict) else doc!r}, not {list(keys)}")
    return {k: _text(doc[k], k) for k in keys}


def _optional(doc: dict, key: str, case: str) -> str:
    """An optional text field ('' when absent)."""
    return _text(doc[key], f"{case!r}: {key}") if key in doc else ""


def _number(value, what: str, *, nan: bool = False) -> float:
    if value is None and nan:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} is {value!r}, not a finite, non-negative number")
    return float(value)


_FIGURE_FIELDS = {f.name for f in fields(PublishedFigure)} - {"runner"}   # `runner` comes from the file's `runners`


def _runners(doc) -> dict[str, str]:
    """family -> the name its runner has in the sources' tables (the registry a family with published figures adds
    itself to; `about` says what the map is)."""
    if not isinstance(doc, dict):
        raise ValueError("runners is not an object of family -> name")
    return {str(k): _text(v, f"runners.{k}") for k, v in doc.items() if k != "about"}


def _figure(doc: dict, sources: dict) -> PublishedFigure:
    unknown = set(doc) - _FIGURE_FIELDS
    if unknown:
        raise ValueError(f"figure {doc.get('case')!r}: unknown field {sorted(unknown)[0]!r}")
    case = _text(doc["case"], "a figure's case")
    f = PublishedFigure(
        case, _text(doc["family"], f"{case!r}: family"), _text(doc["device"], f"{case!r}: device"),
        _number(doc["published_s"], f"{case!r}: published_s", nan=True),
        kernel=None if doc.get("kernel") is None else _text(doc["kernel"], f"{case!r}: kernel"),
        n=_count(doc.get("n"), case), dtype=_text(doc.get("dtype", "float32"), f"{case!r}: dtype"),
        first_call=_flag(doc, "first_call", case), compile_only=_flag(doc, "compile_only", case),
        per_step=_flag(doc, "per_step", case), why=_optional(doc, "why", case),
        resolution_s=_number(doc.get("resolution_s", 0.0), f"{case!r}: resolution_s"),
        bound=_optional(doc, "bound", case), source=_text(doc["source"], f"{case!r}: source"))
    if f.device not in DEVICES or f.bound not in BOUNDS:
        raise ValueError(f"figure {case!r}: device {f.device!r} or bound {f.bound!r} unknown")
    if f.source not in sources:
        raise ValueError(f"figure {case!r}: source {f.source!r} is not among the file's sources")
    return f


def _count(value, case: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise ValueError(f"figure {case!r}: n is {value!r}, not a positive integer")
    return value


def _flag(doc: dict, key: str, case: str) -> bool:
    value = doc.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"figure {case!r}: {key} is {value!r}, not true or false")
    return value


def _rate(doc: dict) -> Rate:
    where = _text(doc["where"], "a rate's where")
    unit = doc["unit"]
    if unit not in UNITS:
        raise ValueError(f"rate of {where!r}: unit {unit!r} is not one of {sorted(UNITS)}")
    value = doc["value"]
    if not isinstance(value, list) or len(value) not in (1, 2):
        raise ValueError(f"rate of {where!r}: value is {value!r}, not one number or a range of two")
    r = Rate(where, _text(doc["key"], "key") if doc["key"] != "" else "",
             tuple(_number(v, f"rate of {where!r}") for v in value), unit, _text(doc["what"], "what"),
             _text(doc["source"], "source"))
    if doc.get("term", r.term) != r.term:
        raise ValueError(f"rate of {where!r}: term {doc['term']!r} is not the term of {unit}")
    return r


def _host_ratio(doc: dict) -> HostRatio:
    family, over = _text(doc["family"], "a host ratio's family"), _text(doc["over"], "a host ratio's over")
    value = doc["ratio"]
    if family == over or not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"host ratio {family!r} / {over!r}: two families and a range of two numbers are due")
    low, high = (_number(v, f"host ratio {family!r} / {over!r}") for v in value)
    if not 0 < low <= high:
        raise ValueError(f"host ratio {family!r} / {over!r}: {value!r} is not a positive range, low first")
    return HostRatio(family, over, low, high, _text(doc["what"], "what"), _text(doc["source"], "source"))


def printed(f: PublishedFigure) -> str:
    """The figure as its document prints it: as many decimals as its resolution says ("0.030" for 0.03 +- 0.0005)."""
    if not f.resolution_s:
        return f"{f.published_s:g}"
    decimals = max(0, round(-math.log10(2 * f.resolution_s)))
    return f"{f.published_s:,.{decimals}f}"

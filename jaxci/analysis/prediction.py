"""One executed lecture's predicted seconds on one runner family: the record the audit's judging makes
(jaxci.audit.judging.predicted, moved to the family's host by jaxci.audit.judging.rescaled), the policy decides on
(jaxci.policy: placement, builds, timeouts, the whole build) and the reports read.

`LecturePrediction` is frozen: each step that moves it (the host factor, the calibration) makes a new one. Its
JSON form, a lecture's `predicted[family]` in audit.json, is written by `as_dict` and read by `from_dict`, the only
code that knows its keys; the key order is the one every audit has written (a record with a GPU side, and a
CPU-only family's), so an audit written through it is the audit written before it. A key it does not know is kept
(`extra`) and written back last.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from jaxci.util.bounds import JOB_S

CPU, GPU = "cpu", "gpu"
SIDES = (CPU, GPU)
#: the largest figure of seconds a prediction may hold: 5 days, the longest a self-hosted runner's job may run
#: (jaxci.audit.reading.runrecord.LECTURE_S); beyond it (1e308, inf) is not a run time
MOST_SECONDS = JOB_S


@dataclass(frozen=True)
class Part:
    """One part of a side's predicted seconds. `modelled_on`: the sides on which the runner model gives its seconds
    (never this host's measured time), so the host factor never moves them there."""
    name: str
    why: str
    modelled_on: tuple[str, ...] = ()


#: the registry of a prediction's parts, in a record's order: adding a part is one row here
PART_TABLE = (
    Part("start-up", "the kernel's start and `import jax`: measured here, moved by the host factor"),
    Part("backend", "the accelerator client's start-up, once per process: from a capture's probed process starts",
         (GPU,)),
    Part("compile", "tracing and XLA compilation: this run's seconds per compilation"),
    Part("calls", "jitted calls: on the accelerator from XLA's cost analysis and the model's terms", (GPU,)),
    Part("loops", "traced lax loops: the model's per-step cost on the accelerator", (GPU,)),
    Part("sampler", "a library sampler's run (numpyro MCMC.run) outside its leapfrog steps"),
    Part("leapfrog", "a sampler's leapfrog steps as loop turns: the model's rule on the accelerator", (GPU,)),
    Part("eager", "un-jitted JAX operations"),
    Part("host", "host code no device speeds up"),
    Part("residual", "the calibrated per-notebook residual (jaxci.analysis.residual)"),
)
PARTS = tuple(p.name for p in PART_TABLE)
#: per side, the parts the runner model gives rather than this host's measured time (derived from PART_TABLE)
MODELLED = {side: tuple(p.name for p in PART_TABLE if side in p.modelled_on) for side in SIDES}


def side_keys(side: str) -> tuple[str, str, str]:
    """The JSON keys of a side's middle and band ends (a family's build totals sum them under the same keys)."""
    return f"{side}_s", f"{side}_low_s", f"{side}_high_s"


#: the seconds of a record in its JSON form: each side's middle and band ends
SECONDS = (*side_keys(CPU), *side_keys(GPU))
_PARTS, _BASIS, _INPUTS, _MISSING, _LABEL = "parts", "basis", "inputs", "missing", "label"
_UNEXPLAINED, _FLOAT64, _OVERHEAD = "unexplained", "float64", "overhead_s"
_UNSCALED, _UNCALIBRATED = "unscaled", "uncalibrated"
_KIND, _HOST, _CALIBRATION = "family_kind", "host_factor", "calibration"
#: the key order of a record with a GPU side (jaxci.audit.judging.predicted.gpu_family, Colab's) ...
_GPU_ORDER = (*SECONDS, _BASIS, _MISSING, _PARTS, _LABEL, _INPUTS, _UNEXPLAINED, _FLOAT64, _OVERHEAD, _UNSCALED,
              _UNCALIBRATED, _KIND, _HOST, _CALIBRATION)
#: ... of a CPU-only family's (cpu_family) ...
_CPU_ORDER = (*side_keys(CPU), _PARTS, _MISSING, _OVERHEAD, _LABEL, _BASIS, _UNSCALED, _UNCALIBRATED, _INPUTS, _KIND,
              _HOST, _CALIBRATION)
#: ... and of the figures kept before a move (`unscaled`, `uncalibrated`)
_SNAPSHOT_ORDER = (*SECONDS, _PARTS, _BASIS, _INPUTS)
#: the one-line texts of a record's JSON form (the audit's reader checks them: jaxci.audit.writing.record)
TEXTS = (_BASIS, _LABEL)
LABEL = "predicted"


def number(value) -> float | None:
    """A figure of an audit record as a float; None for anything else (a bool, text, NaN, an infinity, anything
    beyond MOST_SECONDS either way, which no run time or timeout reaches): one rule for every reader."""
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
          and -MOST_SECONDS <= value <= MOST_SECONDS)
    return float(value) if ok else None


@dataclass(frozen=True)
class PredictedSide:
    """One device's predicted seconds for the whole lecture: the middle, the band's ends (None: not given, read as
    the middle) and the seconds per part (PART_TABLE; None: not given)."""

    seconds: float
    low: float | None = None
    high: float | None = None
    parts: Mapping[str, float] | None = None

    def band(self) -> tuple[float, float, float]:
        """(mid, low, high): a missing band end is the middle."""
        return (self.seconds, self.seconds if self.low is None else self.low,
                self.seconds if self.high is None else self.high)


@dataclass(frozen=True)
class Snapshot:
    """The figures a record had before a move (the host factor's `unscaled`, the calibration's `uncalibrated`), so
    a move is always made from them, never twice."""

    cpu: PredictedSide | None = None
    gpu: PredictedSide | None = None
    basis: str | None = None
    inputs: tuple[str, ...] | None = None

    def side(self, name: str) -> PredictedSide | None:
        return self.cpu if name == CPU else self.gpu if name == GPU else None

    def as_dict(self) -> dict:
        return _ordered(_figures(self.cpu, self.gpu) | _given({_BASIS: self.basis, _INPUTS: _list(self.inputs)}),
                        _SNAPSHOT_ORDER, {})

    @classmethod
    def from_dict(cls, data) -> Snapshot | None:
        if not isinstance(data, Mapping):
            return None
        cpu, gpu = _side_of(data, CPU), _side_of(data, GPU)
        return cls(cpu, gpu, _text(data.get(_BASIS)), _texts(data.get(_INPUTS)))


@dataclass(frozen=True)
class LecturePrediction:
    """A lecture's predicted seconds on one family, each side with its band and parts, and their provenance: what
    they rest on (`basis`, `inputs`), what could not be priced (`missing`), a slow cell the model does not explain,
    the dtype, the seconds both devices pay (`overhead_s`, a fresh kernel's start), and once moved to the family:
    its kind, the host factor and the calibration applied, with the figures before each move. None: not given."""

    cpu: PredictedSide | None
    gpu: PredictedSide | None = None
    basis: str = ""
    missing: tuple[str, ...] | None = ()
    inputs: tuple[str, ...] | None = None
    label: str | None = LABEL
    unexplained: str | None = None
    float64: bool | None = None
    overhead_s: float | None = None
    unscaled: Snapshot | None = None
    uncalibrated: Snapshot | None = None
    family_kind: str | None = None
    host_factor: Mapping | None = None   # jaxci.analysis.host_speed.HostFactor.as_dict()
    calibration: str | None = None
    extra: Mapping = field(default_factory=dict)  # keys this record does not know, written back as they were

    def side(self, name: str) -> PredictedSide | None:
        """The side on `name` ("cpu" | "gpu"), None where it has none."""
        return self.cpu if name == CPU else self.gpu if name == GPU else None

    def snapshot(self, basis: bool = True) -> Snapshot:
        """The figures a move starts from (with its basis or without)."""
        return Snapshot(self.cpu, self.gpu, self.basis if basis else None, self.inputs)

    def restored(self, snapshot: Snapshot | None, basis: bool = True) -> LecturePrediction:
        """The record with the figures of `snapshot` (a move made again from them); itself without one."""
        if snapshot is None:
            return self
        out = replace(self, cpu=snapshot.cpu if snapshot.cpu is not None else self.cpu,
                      gpu=snapshot.gpu if snapshot.gpu is not None else self.gpu)
        if basis and snapshot.basis is not None:
            out = replace(out, basis=snapshot.basis)
        return replace(out, inputs=snapshot.inputs) if snapshot.inputs is not None else out

    # ---- the JSON form: the only place that knows its keys -----------------------------------------------------

    def as_dict(self) -> dict:
        """The record as audit.json holds it (`predicted[family]`), in the order every audit has written it."""
        given = _given({_BASIS: self.basis or None, _MISSING: _list(self.missing), _LABEL: self.label,
                        _INPUTS: _list(self.inputs), _UNEXPLAINED: self.unexplained, _FLOAT64: self.float64,
                        _OVERHEAD: self.overhead_s,
                        _UNSCALED: self.unscaled.as_dict() if self.unscaled else None,
                        _UNCALIBRATED: self.uncalibrated.as_dict() if self.uncalibrated else None,
                        _KIND: self.family_kind, _HOST: dict(self.host_factor) if self.host_factor else None,
                        _CALIBRATION: self.calibration})
        order = _GPU_ORDER if self.gpu is not None else _CPU_ORDER
        return _ordered(_figures(self.cpu, self.gpu) | given, order, self.extra)

    @classmethod
    def from_dict(cls, data) -> LecturePrediction | None:
        """The record from its JSON form; None for anything but a mapping. A figure that is no number of seconds
        (text, NaN, beyond MOST_SECONDS) is read as not given; a side without its middle is no side."""
        if not isinstance(data, Mapping):
            return None
        known = {*_GPU_ORDER, *_CPU_ORDER}
        overhead = number(data.get(_OVERHEAD))
        float64 = data.get(_FLOAT64)
        host = data.get(_HOST)
        return cls(cpu=_side_of(data, CPU), gpu=_side_of(data, GPU), basis=_text(data.get(_BASIS)) or "",
                   missing=_texts(data.get(_MISSING)), inputs=_texts(data.get(_INPUTS)),
                   label=_text(data.get(_LABEL)), unexplained=_text(data.get(_UNEXPLAINED)),
                   float64=float64 if isinstance(float64, bool) else None, overhead_s=overhead,
                   unscaled=Snapshot.from_dict(data.get(_UNSCALED)),
                   uncalibrated=Snapshot.from_dict(data.get(_UNCALIBRATED)),
                   family_kind=_text(data.get(_KIND)), host_factor=dict(host) if isinstance(host, Mapping) else None,
                   calibration=_text(data.get(_CALIBRATION)),
                   extra={k: v for k, v in data.items() if k not in known})


def of_lecture(lecture, family: str) -> LecturePrediction | None:
    """A lecture's prediction on `family` from its audit JSON record (`predicted`), None where it has none."""
    predicted = lecture.get("predicted") if isinstance(lecture, Mapping) else None
    return LecturePrediction.from_dict(predicted.get(family)) if isinstance(predicted, Mapping) else None


def families(lecture) -> list[str]:
    """The families a lecture's audit JSON record has predictions for."""
    predicted = lecture.get("predicted") if isinstance(lecture, Mapping) else None
    return [str(f) for f in predicted] if isinstance(predicted, Mapping) else []


def _figures(cpu: PredictedSide | None, gpu: PredictedSide | None) -> dict:
    out: dict = {}
    parts: dict = {}
    for name, side in ((CPU, cpu), (GPU, gpu)):
        if side is None:
            continue
        mid, low, high = side_keys(name)
        out |= _given({mid: side.seconds, low: side.low, high: side.high})
        if side.parts is not None:
            parts[name] = dict(side.parts)
    return out | ({_PARTS: parts} if parts else {})


def _side_of(data: Mapping, name: str) -> PredictedSide | None:
    mid, low, high = (number(data.get(k)) for k in side_keys(name))
    if mid is None:
        return None
    parts = data.get(_PARTS)
    mine = parts.get(name) if isinstance(parts, Mapping) else None
    return PredictedSide(mid, low, high, dict(mine) if isinstance(mine, Mapping) else None)


def _ordered(values: dict, order: tuple, extra: Mapping) -> dict:
    return {**{k: values[k] for k in order if k in values}, **{k: v for k, v in extra.items() if k not in values}}


def _given(values: dict) -> dict:
    return {k: v for k, v in values.items() if v is not None}


def _list(values: tuple | None) -> list | None:
    return None if values is None else list(values)


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def _texts(value) -> tuple[str, ...] | None:
    return tuple(str(x) for x in value) if isinstance(value, (list, tuple)) else None

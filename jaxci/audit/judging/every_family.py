"""Every catalogue runner family predicted from one execution: the lectures run once here (on the CPU, and on the GPU
where one is present), and each family's seconds are the runner model's answer for that family from those runs.

The execution is the expensive part; the predictions are cheap, so the audit gives them all. Per family:
- a family with a GPU: both sides, as the judged family's (jaxci.audit.judging.predicted.gpu_family);
- a CPU-only family (ubuntu-latest, c7i.*): its CPU side, every lecture on its CPU (`cpu_family`);
- then this host's measured parts moved to the family's host by its host factor h (jaxci.audit.judging.host), with
  h's source, label (measured or predicted ratio) and band in the record; only a family with no probe at all (no
  published inputs, or no sourced CPU) keeps this host's seconds, said.
Every executed lecture is predicted, with or without JAX: a lecture without JAX is host time (its cells as measured
here, x h). The judged family's (`--machine`) record is the same host-scaled one as every other family's, and its
verdict is decided again from it (jaxci.audit.judging.judge.decide_on_record): one prediction per lecture and family.

One runner model per audit (one results load, the published inputs given once), asked per family; never per lecture.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from jaxci.analysis.prediction import GPU, SECONDS, SIDES, LecturePrediction, side_keys
from jaxci.audit.judging import host as hostf
from jaxci.audit.judging import predicted, rescaled

if TYPE_CHECKING:
    from jaxci.analysis.fixed_costs import FixedCosts


@dataclass
class Families:
    """The catalogue's runner families with the runner model asked for each, and what h needs."""

    views: dict = field(default_factory=dict)   # family -> RunnerView
    has_gpu: dict = field(default_factory=dict)  # family -> bool: it has an accelerator side (a GPU or a TPU)
    kind: dict = field(default_factory=dict)  # family -> its accelerator's platform (gpu, tpu) or "cpu"
    published: list = field(default_factory=list)  # jaxci.analysis.evidence.Evidence (the host probes among them)
    notes: list = field(default_factory=list)  # families left out, and why
    factors: dict = field(default_factory=dict)  # family -> HostFactor, once measured (`predict_all`)
    residual: dict = field(default_factory=dict)  # family -> (Band of s per notebook, source, scale): calibrated
    fixed: FixedCosts | None = None  # the fixed costs the residuals came from (its fitted host checked)
    calibration: str = ""  # why the calibration applies on this executing host, or why it was refused


def runner_families(catalogue: dict) -> list[str]:
    """The families CI can ask for (catalogue kind "runner"), in the catalogue's order; lab machines never."""
    return [name for name, entry in catalogue.items() if not entry.is_lab]


def build(results_dir, catalogue: dict | None = None, published=(), judged=None, fixed=None,
          names: list[str] | None = None) -> Families:
    """The runner model once for every runner family, or for `names` (the judged FamilyModel's own view reused for
    its family), and each family's per-notebook residual where `fixed` (jaxci.analysis.fixed_costs.FixedCosts)
    calibrates one and the family publishes a probe. Raises jaxci.audit.judging.family.FamilyError for unreadable
    results."""
    from jaxci.analysis.model import RunnerModel
    from jaxci.audit.judging.family import RunnerView, results_and_catalogue

    rs, catalogue = results_and_catalogue(results_dir, catalogue)
    records = rs.latest()
    out = Families(published=list(published), fixed=fixed)
    try:
        model = RunnerModel.from_results(records, rs.machines, catalogue, list(published))
    except Exception as exc:  # a model that cannot be built predicts nothing, never a crash
        out.notes.append(f"runner model not built: {type(exc).__name__}: {exc}")
        return out
    mine = getattr(judged, "runner", None)
    for name in runner_families(catalogue) if names is None else names:
        out.views[name] = mine if mine is not None and mine.family == name else RunnerView(model, name, records)
        out.has_gpu[name] = catalogue[name].accelerator is not None
        out.kind[name] = catalogue[name].accelerator or "cpu"
        out.residual.update(residuals(name, out.published, fixed))
    return out


def residuals(family: str, published, fixed) -> dict:
    """{family: (seconds per notebook, source, scale)} from the calibrated residual in probe units x the family's
    probe (published, or predicted: jaxci.analysis.host_speed) and the calibrated scale of the host factor; {}
    without either."""
    probe = hostf.published_probe(published, family)
    band = fixed.residual_s(probe.value.mid) if fixed is not None and probe is not None else None
    if band is None:
        return {}
    scaled = f", measured-here seconds x {fixed.scale:.3g}" if fixed.scale != 1.0 else ""
    return {family: (band, f"per-notebook residual {fixed.residual.mid:.3g} x the {probe.kind} probe "
                           f"{probe.value.mid:.3g} s{scaled}: calibrated ({fixed.residual_source})", fixed.scale)}


def measure_host(families: Families, here) -> dict:
    """h for every family from one probe of this host (jaxci.audit.runner.host_probe.Probe); the calibration kept
    only where this host's probe cannot be told from the host it was fitted on (else refused, said, with the
    command that refits it: jaxci.analysis.fixed_costs.FittedHost)."""
    families.factors = {name: hostf.factor(name, families.published, here) for name in families.views}
    if families.fixed is not None and families.residual:
        kept, why = families.fixed.on_host(here.seconds, here.n)
        families.calibration = why
        if kept.residual is None:
            families.residual = {}
            families.notes.append(why)
    return families.factors


def predict_lecture(verdict, families: Families) -> dict[str, LecturePrediction]:
    """{family: host-scaled record} for one executed lecture (its first run that finished, CPU first, errors the
    book allows included; a notebook without code cells is its kernel's start); {} when no run finished (a failed
    run is no build time)."""
    from jaxci.audit.judging.classify import lecture_dtype

    run = next((r for _, r in sorted(verdict.runs.items())
                if (r.ok or verdict.errors_allowed(r)) and (r.cells or r.kernel_start_s)), None)
    if run is None:
        return {}
    float64 = lecture_dtype(verdict.scan) == "float64"
    out = {}
    for name, view in families.views.items():
        if families.has_gpu[name]:
            rec = predicted.gpu_family(run, view, float64, verdict.scan.loops, verdict.scan.pins)
        else:
            rec = predicted.cpu_family(run, view, float64, verdict.scan.loops)
        if rec is None:
            continue
        h = families.factors.get(name) or hostf.HostFactor(1.0, 1.0, 1.0, hostf.NOT_MEASURED, "host not probed")
        h = hostf.with_own_core(h, run.own_core_share)
        rec = rescaled.host_scaled(rec, h.value, h.source, h.low, h.high)
        if name in families.residual:
            rec = rescaled.with_residual(rec, *families.residual[name])
        out[name] = replace(rec, family_kind=families.kind.get(name) or ("gpu" if families.has_gpu[name] else "cpu"),
                            host_factor=h.as_dict(),
                            # applied on this host, or refused (with the command that refits it)
                            calibration=families.calibration or None)
    return out


def predict_all(verdicts: list, families: Families, here, probes: dict | None = None) -> None:
    """Every executed lecture's prediction on every family, into its `predicted` (Colab's record, when the judged
    family made one, is left as it is). Each lecture is moved by the host factor of its own run's probe (`probes`:
    lecture path -> the probe of the host when it ran, jaxci.audit.repo), else by `here`, this audit's probe."""
    if not any(v.runs for v in verdicts) or not families.views:
        return
    calibrated, measured = dict(families.residual), {}
    for verdict in verdicts:
        if not verdict.runs:
            continue
        probe = (probes or {}).get(verdict.path) or here
        key = (probe.seconds, probe.n) if probe is not None else None
        if key not in measured:
            families.residual = dict(calibrated)  # a refusal on one host never clears another's calibration
            measured[key] = (measure_host(families, probe), families.residual, families.calibration)
        families.factors, families.residual, families.calibration = measured[key]
        verdict.predicted.update(predict_lecture(verdict, families))


def build_totals(verdicts: list) -> dict:
    """Per family: the summed predicted seconds of every lecture on its CPU and (a GPU family) on its GPU, with the
    band ends summed, the lectures counted, and h. What a build of the whole repository costs there, predicted."""
    out: dict = {}
    for v in verdicts:
        for name, rec in (v.predicted or {}).items():
            if rec.family_kind is None:  # Colab's record, or an older audit's: not a catalogue family's build
                continue
            t = out.setdefault(name, {"kind": rec.family_kind, "lectures": 0, "host_factor": rec.host_factor,
                                      **dict.fromkeys(SECONDS, 0.0)})
            t["lectures"] += 1
            for side in SIDES:
                got = rec.side(side)
                for key, value in zip(side_keys(side), (got.seconds, got.low, got.high) if got else ()):
                    if value is not None:
                        t[key] += value
    for t in out.values():
        if t["kind"] == "cpu":
            for key in side_keys(GPU):
                t[key] = None
    return out

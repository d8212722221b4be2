"""Everything the report says, computed once from an asv results directory and the catalogue."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

from jaxci.analysis import (
    coldstart,
    concurrency,
    crossover,
    finite_or_none,
    peak,
    penalty,
    predict,
    releases,
    sampler,
)
from jaxci.catalogue import catalogue_defaults, load_catalogue, upgrade_factor
from jaxci.evidence import inputs as published_inputs
from jaxci.evidence.published import PublishedFigures
from jaxci.evidence.published import default_path as figures_path
from jaxci.evidence.published import read as read_figures
from jaxci.policy import cost
from jaxci.report import published
from jaxci.results.records import load_results

#: the published figures (data: jaxci.evidence.published): `incidents` takes its incidents' figures from this file,
#: `measurements` its achieved rates; either None takes none of them
INCIDENTS = MEASUREMENTS = figures_path()


@dataclass
class Report:
    results_dir: str
    generated: str
    machines: dict
    errors: list
    records: list            # latest record per machine x benchmark x params
    catalogue: dict
    crossovers: list
    device_ratios: list
    fp64: list
    fp64_summary: list
    cold: list
    nuts: list
    concurrency: list
    safe_n: dict
    achieved: list
    costs: list
    runtimes: list
    predicted_crossovers: list
    incidents: list = field(default_factory=list)
    published: list = field(default_factory=list)         # the incidents' figures, read once (evidence.published)
    release_steps: list = field(default_factory=list)     # analysis.releases.ReleaseStep, all history
    releases_measured: dict = field(default_factory=dict)  # machine -> JAX releases with results
    upgrade_factor: float = 1.3
    model: object = None                                  # analysis.model.RunnerModel: the one prediction interface
    model_checks: list = field(default_factory=list)      # every published figure against the model (outside check)
    families: list = field(default_factory=list)          # decision sheets asked for (--family); empty: the default
    audit: dict | None = None                             # an audit JSON (jaxci audit --execute --format json)
    audits: list = field(default_factory=list)  # committed audits of real repositories (report.committed_audits)

    def suite_records(self, suite: str) -> list:
        return [r for r in self.records if r.suite == suite]

    @property
    def suites(self) -> list[str]:
        return sorted({r.suite for r in self.records})


def build(results_dir, catalogue_dir: Path | None = None, incidents: Path | None = INCIDENTS, families=None,
          audit: dict | None = None, measurements: Path | None = MEASUREMENTS, audits: list | None = None,
          model_inputs=()) -> Report:
    """The report of `results_dir`; `model_inputs`: local machines whose results the runner model reads as well
    (by default it reads the committed kinds only: jaxci.analysis.model.INPUT_KINDS)."""
    rs = load_results(results_dir)
    records = rs.latest()
    catalogue = load_catalogue(catalogue_dir)
    defaults = catalogue_defaults(catalogue_dir)
    # one catalogue with the lab machines for every model input: their sourced peaks calibrate the GPU terms
    with_lab = load_catalogue(catalogue_dir, include_lab=True)
    # a machine with a TPU is no CPU-only machine: its CPU line is never paired with another machine's GPU
    cpu_only = [m for m, f in rs.machines.items()
                if not f.has_gpu and (m not in with_lab or with_lab[m].accelerator is None)]
    cx = crossover.crossovers(records, cpu_only_machines=cpu_only)
    ratios = penalty.fp64_ratios(records)
    cells = concurrency.grid(records)
    given = _figures(incidents, measurements)  # the one read of each file given
    figs = list(given[0].incidents) if given[0] else []
    # the runner model, built once, with the nearest evidence: published on a family's hardware (the incidents'
    # figures and the achieved rates), as the audit and `jaxci predict` take it
    predictor = predict.Predictor(records, rs.machines, with_lab, _evidence(*given), named=model_inputs)
    runtimes, pcx = predict.predictions(records, rs.machines, with_lab, cx, predictor=predictor)
    report = Report(
        results_dir=str(results_dir),
        generated=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        machines=rs.machines, errors=rs.errors, records=records, catalogue=catalogue,
        crossovers=cx, device_ratios=crossover.device_ratios(records), fp64=ratios,
        fp64_summary=penalty.summarize(ratios),
        cold=coldstart.compile_shares(records), nuts=sampler.nuts_table(records),
        concurrency=cells, safe_n=concurrency.safe_n(cells),
        achieved=peak.achieved(records, with_lab),
        costs=cost.family_costs(records, rs.runs, rs.machines, catalogue, defaults),
        runtimes=runtimes, predicted_crossovers=pcx)
    report.model = predictor.model
    report.families, report.audit, report.audits = list(families or []), audit, list(audits or [])
    report.upgrade_factor = upgrade_factor(catalogue_dir)
    report.release_steps = _judged_steps(rs, results_dir, report.upgrade_factor)
    report.releases_measured = releases.releases_measured(rs.records)
    if given[0] is not None:
        report.published = figs
        # transfer-only: no figure held against itself
        outside = predict.Predictor(records, rs.machines, with_lab, named=model_inputs)
        report.incidents = incident_checks(figs, outside)
        report.model_checks = published.check(figs, outside.model)  # every figure, none of them an input
    return report


def _figures(incidents, measurements) -> tuple[PublishedFigures | None, PublishedFigures | None]:
    """The figures files given for the incidents' figures and for the rates (None: not given, or no such file),
    each read once (the same file once for both)."""
    def one(path):
        return read_figures(path) if path is not None and Path(path).is_file() else None

    first = one(incidents)
    same = incidents is not None and measurements is not None and Path(incidents) == Path(measurements)
    return first, (first if same else one(measurements))


def _evidence(incidents: PublishedFigures | None, measurements: PublishedFigures | None) -> list:
    """The runner model's published inputs: the incidents' figures of one file and the achieved rates of the other
    (jaxci.evidence.inputs), with the host probes derived from them, as `reference()` gives them."""
    found = (published_inputs.of(incidents, rates=False) if incidents else []) + (
        published_inputs.of(measurements, incidents=False) if measurements else [])
    return published_inputs.with_host_probes(found)


def _judged_steps(rs, results_dir, factor: float) -> list:
    """The release steps with their confirmation and load from each machine's results/<machine>/conditions.toml
    (analysis.releases.judge); a bad record there is one more error line, the rest kept."""
    from jaxci.results import conditions

    steps = releases.release_steps(rs.records, factor)
    runs, confirmations, cores = {}, {}, {}
    for machine in {s.machine for s in steps}:
        runs[machine], confirmations[machine] = conditions.load(results_dir, machine, rs.errors)
        try:
            cores[machine] = int(rs.machines[machine].get("num_cpu") or 1)
        except (KeyError, TypeError, ValueError):
            cores[machine] = 1
    return releases.judge(steps, runs, confirmations, factor, cores)


# The published incident table held against the transfer-only model (the report's predictions take the figures as
# inputs, nearest evidence; this check is given none of them).


def incident_checks(figs: list, predictor) -> list[dict]:
    """The published suite-kernel points (jaxci.report.published.points over the one parse) beside the model."""
    out = []
    for pt in published.points(figs):
        if pt.dtype != "float32":
            continue  # the table's warm rows (float32, its heading says); the scalar loops' dtype is unstated
        family, device = pt.family, pt.device   # the figure's own family and device (the file's data)
        seconds, inputs, low, high = predictor.predict_band(family, pt.benchmark, pt.case, "float32", device, pt.n)
        out.append({"what": pt.what, "family": family, "device": device, "n": pt.n, "incident_s": pt.seconds,
                    "predicted_s": seconds, "inputs": inputs, "low_s": low, "high_s": high})
    return out


def _plain(obj):
    if dataclasses.is_dataclass(obj):
        d = {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        for prop in ("kernel", "ratio", "share", "compile", "fraction", "error", "suite_seconds", "job_seconds",
                     "job_dollars", "verdict", "note"):
            if hasattr(type(obj), prop):
                d[prop] = _plain(getattr(obj, prop))
        return d
    if isinstance(obj, dict):
        return {str(k) if not isinstance(k, tuple) else " ".join(map(str, k)): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return [_plain(v) for v in sorted(obj)]
    if hasattr(obj, "info") and hasattr(obj, "name"):  # MachineFacts
        return obj.info
    return obj


def to_json(report: Report) -> dict:
    out = {k: _plain(getattr(report, k)) for k in (
        "results_dir", "generated", "errors", "crossovers", "device_ratios", "fp64_summary", "fp64", "cold", "nuts",
        "concurrency", "safe_n", "achieved", "costs", "predicted_crossovers", "runtimes", "incidents", "model_checks")}
    out["machines"] = {name: facts.info for name, facts in report.machines.items()}
    for row in out["predicted_crossovers"] + out["runtimes"]:
        row["label"] = "predicted"
    return finite_or_none(out)  # strict JSON: NaN / inf become null

"""The free Colab tier's prediction beside the families': its Tesla T4 as the T4 family's GPU (runner model), its
host (2 vCPUs, not in the catalogue) taken as that family's host, so the GPU's host-side costs carry over.
"""

from __future__ import annotations

from dataclasses import replace

from jaxci.analysis.prediction import LecturePrediction
from jaxci.audit.judging.predicted import cpu_cells, device_time, prediction_record, starts_cuda, static_work

#: the free Colab GPU is a Tesla T4, the GPU of AWS g4dn: its GPU side is predicted as this catalogue family's
COLAB, COLAB_T4 = "colab-free-t4", "g4dn.xlarge"


def colab(run, model, float64: bool = False, loops=(), judged: LecturePrediction | None = None,
          pins=()) -> dict[str, LecturePrediction]:
    """{COLAB: record} for the free Colab tier: the GPU side is the T4 family's prediction; Colab's host (2 vCPUs,
    not in the catalogue) is taken as that family's host, so the GPU's host-side costs carry over. {} without a
    runner model. `judged`: gpu_family's record for the model's family, reused (not computed again) when
    that family is a g4dn."""
    from jaxci.audit.judging.family import RunnerView

    view = getattr(model, "runner", None)
    if view is None or run is None or not run.cells or not getattr(model, "crossover", None):
        return {}
    family = view.family if view.family.startswith("g4dn.") else COLAB_T4
    basis = (f"predicted for Colab's free tier: its Tesla T4 as {family}'s (same GPU, runner model), with the GPU's "
             f"host-side costs (dispatch, loop steps, compile) carried from {family}'s host: Colab's host (2 vCPUs) is "
             f"not in the catalogue; CPU side as for {family}: this run's own times where it measured them, the model "
             "elsewhere")
    if judged is not None and family == view.family:
        return {COLAB: replace(judged, unexplained=None, float64=None, basis=basis)}
    t4 = RunnerView(view.model, family)
    static = static_work(loops)
    cpu = device_time(t4, run, "cpu", float64, static)
    gpu = device_time(t4, run, "gpu", float64, static, cpu_cells(pins, run.cells), starts_cuda(run, pins))
    return {COLAB: prediction_record(cpu, gpu, basis)}

"""A notebook's fixed costs in a build: what a fresh kernel pays before and around the lecture's own work.

Two kinds of input, each labelled:
- measured here (measure/notebook_fixed_costs.py, committed in docs/reference/notebook-fixed-costs.json): the
  kernel's start, the lecture stack's imports by package, JAX's CPU client and the first figure, cold (page cache
  evicted: a build's first notebook) and warm (every later one), with this host's pure-Python probe, so that they
  move to a family's host by its published probe over this one;
- calibrated (jaxci.analysis.residual): the per-notebook residual in probe units and the scale of the host factor's
  measured-here seconds, fitted on the published builds of the two development sets and scored only where they
  were not fitted (docs/runner-model.md, "Scoring a model change"). The calibration records the host it was
  fitted on by its pure-Python probe (`FittedHost`): on an executing host the probe cannot tell from it, it
  applies; on another it is refused, with the command that fits it again there (`REFIT`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from jaxci.analysis import provenance as pv
from jaxci.analysis.primitives import Band

#: how the calibration is fitted again on the executing host (docs/runner-model.md, "Scoring a model change")
REFIT = ("run the development sets on this host (measure/published_builds.py ... --let-errors --save-audit FILE), "
         "then `.venv/bin/python -m jaxci devsets --set g4dn.2xlarge=G.json --set ubuntu-latest=A.json "
         "--calibrate docs/reference/notebook-calibration.json` (in the committed form; --form F to change it)")


@dataclass(frozen=True)
class FittedHost:
    """The host a calibration was fitted on, by the pure-Python probe (int_sum at `n`): the probes taken around
    its runs, and the probe range in which another host cannot be told from it (`accepts`, with why)."""

    host: str
    n: int
    probes_s: tuple
    accepts: tuple   # (low, high) seconds at n
    why: str

    def check(self, probe_s: float | None, n: int) -> tuple[bool, str]:
        """Whether the calibration applies on a host whose probe took `probe_s` at `n`, and the sentence why."""
        if not probe_s:
            return False, "the executing host's probe was not measured: the calibration is not applied"
        at = probe_s * self.n / n
        low, high = self.accepts
        if low <= at <= high:
            return True, (f"the executing host's probe {at:.3g} s lies within the fitted host's {low:.3g}-{high:.3g} s "
                          f"({self.host}; {self.why})")
        return False, (f"calibration refused: the executing host's probe {at:.3g} s (int_sum n={self.n:,}) lies "
                       f"outside the {low:.3g}-{high:.3g} s of the host it was fitted on ({self.host}); the scale and "
                       f"residual say how that host's lectures move, not this one's. Refit here: {REFIT}")


@dataclass(frozen=True)
class FixedCosts:
    """Seconds here per term (cold and warm), the probe they were taken beside, and the calibrated residual."""

    warm: dict
    cold: dict
    probes_s: tuple
    source: str
    residual: Band | None = None  # probe units: x the family's probe = seconds per notebook there
    residual_source: str = ""
    scale: float = 1.0            # calibrated with the residual: what the host factor's moved seconds are x
    fitted_on: FittedHost | None = None   # the host the calibration was fitted on; None: no calibration

    @property
    def probe_s(self) -> float:
        """The geometric middle of the probes taken before and after the measurement."""
        return math.prod(self.probes_s) ** (1 / len(self.probes_s))

    def terms(self, cold: bool) -> dict:
        """The terms of one notebook (the build's first: `cold`), seconds here."""
        return dict(self.cold if cold else self.warm)

    def on_host(self, probe_s: float | None, n: int) -> tuple[FixedCosts, str]:
        """The costs as they apply on a host whose probe took `probe_s` at `n`: the calibration kept where that host
        cannot be told from the one it was fitted on, else dropped (scale 1, no residual) and said why."""
        if self.residual is None or self.fitted_on is None:
            return self, ""
        ok, why = self.fitted_on.check(probe_s, n)
        return (self, why) if ok else (replace(self, residual=None, scale=1.0), why)

    def residual_s(self, family_probe: float) -> Band | None:
        """The residual's seconds per notebook on a family with this published probe."""
        return None if self.residual is None else self.residual.scale(family_probe)


def notebook_start(fixed: FixedCosts, family: str, family_probe, backend, cold: bool) -> tuple[Band, list, str]:
    """One notebook's fixed costs on a family: the measured terms x h (the family's published probe over the one
    taken beside them; unscaled where the family publishes none), the CUDA client's start on a GPU (`backend`: the
    model's backend_start estimate, or None on the CPU), and the calibrated residual x the family's probe.
    `family_probe`: (seconds, its labelled input) or None."""
    fixed, why = fixed.on_host(fixed.probe_s, fixed.fitted_on.n if fixed.fitted_on else 1)
    terms = fixed.terms(cold)
    here = sum(terms.values())
    which = "cold page cache (the build's first notebook)" if cold else "warm page cache"
    inputs = [pv.measured(fixed.source, f"{fixed.source}, {which}: "
                          + ", ".join(f"{k} {v:.3g} s" for k, v in terms.items()))]
    if family_probe:
        h = Band(family_probe[0] / fixed.probe_s, family_probe[0] / max(fixed.probes_s),
                 family_probe[0] / min(fixed.probes_s))
        inputs.append(pv.cite(f"host ratio {h.mid:.3g} ({h.low:.3g}-{h.high:.3g}): {family_probe[1]} "
                              f"{family_probe[0]:.3g} s over the probes beside the measurement "
                              + ", ".join(f"{p:.3g}" for p in fixed.probes_s) + " s", family_probe[1]))
    else:
        h = Band.of(1.0)
        inputs.append(pv.Input(f"{family}: no published pure-Python probe: the terms carried unscaled (not measured "
                               "there)"))
    scale = fixed.scale if family_probe else 1.0   # it corrects the host ratio: none without the family's probe
    band = h.scale(here * scale)
    basis = "kernel start + imports + JAX CPU client + first figure, measured here x host ratio"
    if scale != 1.0:
        inputs.append(pv.cite(f"x {fixed.scale:.3g}: the host ratio's calibrated scale ({fixed.residual_source})",
                              pv.Source(pv.CALIBRATED, fixed.residual_source)))
        basis += " x calibrated scale"
    if why and fixed.residual is None:
        inputs.append(pv.Input(why) if isinstance(why, str) else why)
    if backend is not None:
        band = band + backend.band
        inputs += backend.inputs
        basis += " + the CUDA client's start"
    r = fixed.residual_s(family_probe[0]) if family_probe else None
    if fixed.residual is not None and r is not None and family_probe:
        band = band + r
        inputs.append(pv.cite(f"per-notebook residual {fixed.residual.mid:.3g} probe units ({fixed.residual.low:.3g}"
                              f"..{fixed.residual.high:.3g}) x {family_probe[0]:.3g} s = {r.mid:.3g} s: calibrated "
                              f"({fixed.residual_source})", pv.Source(pv.CALIBRATED, fixed.residual_source),
                              family_probe[1]))
        basis += " + calibrated per-notebook residual"
    return band, inputs, basis

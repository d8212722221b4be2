"""The host factor h of a family: how much faster (h < 1) or slower its host runs single-threaded Python than the
host that executed the lectures, so that what was measured here (host code, compile, the CPU side) can be moved to
the family's host.

    h(family) = the family's published pure-Python probe / the same probe here

"The same probe here" is jaxci.audit.runner.host_probe's measurement, passed in (a Probe: seconds, low, high, n,
text). The family's probe is its runner's published one, one carried from a family with the same CPU model, or one
predicted through sourced single-thread scores (jaxci.analysis.host_speed, given with the published inputs); the
label says which ("measured ratio" or "predicted ratio"). Only where no probe exists at all (a transfer-only
model, a family with no sourced CPU) are the measured-here parts carried unscaled, and the record says "not
measured".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

MEASURED, PREDICTED, NOT_MEASURED = "measured ratio", "predicted ratio", "not measured"
SCALED = (MEASURED, PREDICTED)   # labels of an h that moves the seconds


@dataclass(frozen=True)
class HostFactor:
    """h with its band and source; value 1.0 and label "not measured" where the family publishes no probe."""

    value: float
    low: float
    high: float
    label: str
    source: str

    def as_dict(self) -> dict:
        return asdict(self)


def with_own_core(h: HostFactor, share: float | None) -> HostFactor:
    """h for one run that waited for a core: its measured parts are wall seconds, of which the run had a core for
    `share` (jaxci.audit.runner.outcome.NotebookRun.own_core_share); the rest was another process's, on no family's
    runner. Unchanged where the run recorded no wait or waited under 1%."""
    if share is None or share >= 0.99:
        return h
    said = (f"; x {share:.2f}: the run had a core for {share:.0%} of its cells' wall time (it waited for one the "
            "rest: schedstat run_delay of the kernel's main thread)")
    return HostFactor(h.value * share, h.low * share, h.high * share, h.label, h.source + said)


def published_probe(published, family: str):
    """The family's pure-Python probe (jaxci.analysis.evidence.Evidence: published, or predicted), or None: the one
    function of jaxci.analysis.host_speed."""
    from jaxci.analysis.host_speed import family_probe

    return family_probe(published, family)


def factor(family: str, published, here) -> HostFactor:
    """h for `family` from its published probe over this host's (scaled to the published n), band from both ends;
    1.0 "not measured" (said why) where either side is missing."""
    pub = published_probe(published, family)
    if pub is None:
        return HostFactor(1.0, 1.0, 1.0, NOT_MEASURED,
                          f"no published or predicted single-thread probe for {family}: this host's measured parts "
                          "carried unscaled (this host taken as the family's host)")
    if not here.seconds:
        return HostFactor(1.0, 1.0, 1.0, NOT_MEASURED, f"{here.text}: this host's measured parts carried unscaled")
    per = pub.n / here.n  # this host's seconds at the published n
    mid, low, high = here.seconds * per, here.low * per, here.high * per
    v = pub.value
    return HostFactor(v.mid / mid, v.low / high, v.high / low, MEASURED if pub.kind == "published" else PREDICTED,
                      f"h = {pub.label()} {v.mid:.3g} s at n={pub.n:,} / {mid:.3g} s here ({here.text}, x {per:g} "
                      "to the published n)")

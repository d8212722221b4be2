"""What the runner model's term mixins (`model_warm`, `model_compile`, `model_host`) read from the model: its
records, catalogue and published inputs, and the methods that jaxci.analysis.model.RunnerModel or a sibling mixin
defines. Declared once here, so the type checker holds each mixin to the model's own signatures."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxci.analysis import provenance as pv
    from jaxci.analysis.estimate import Estimate
    from jaxci.analysis.fixed_costs import FixedCosts
    from jaxci.analysis.primitives import Band


class ModelReads:
    records: list            # the ok records (jaxci.results.records.Record)
    machines: dict           # machine -> its facts
    catalogue: dict          # family -> jaxci.catalogue.Machine
    published: list          # jaxci.analysis.evidence.Evidence
    fixed: FixedCosts | None
    gpu_refs: list[str]
    cpu_refs: list[str]

    def _where(self, family, term: str | None = None) -> tuple:
        raise NotImplementedError

    def _pub(self, family, device, term, key="", dtype=None) -> list:
        raise NotImplementedError

    def _pub_rate(self, family, device, term, key="", dtype=None) -> tuple[Band | None, list]:
        raise NotImplementedError

    def _refs(self, family, device) -> tuple[list[str], str]:
        raise NotImplementedError

    def _floor(self, refs, device, dtype) -> Estimate:
        raise NotImplementedError

    def _host_ratio(self, ref: str, family: str) -> tuple[float | Band, pv.Input]:
        raise NotImplementedError

    def _cores(self, machine: str, target: bool) -> tuple[Band, pv.Input]:
        raise NotImplementedError

    def _warm(self, family, kernel, n, dtype, device, precision="default") -> Estimate:
        raise NotImplementedError  # model_warm

    def _cpu_scale(self, ref: str, target, dtype) -> tuple[Band, pv.Input]:
        raise NotImplementedError  # model_warm

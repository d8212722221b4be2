"""NUTS effective samples per second by chain method and chain count (the nuts suite's track_ess_per_s)."""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis import group

CONFIG = ("chain_method", "num_chains")


@dataclass
class SamplerRow:
    machine: str
    setting: tuple     # every param but chain_method / num_chains (model, dtype, device, ...)
    configs: dict      # (chain_method, num_chains) -> ESS/s, or None where not measured (skipped/failed)
    extras: dict       # (chain_method, num_chains) -> {"leapfrog_per_s": .., "wall_s": ..}
    provenance: str

    @property
    def best(self):
        measured = {k: v for k, v in self.configs.items() if v is not None}
        return max(measured.items(), key=lambda kv: kv[1]) if measured else None


def nuts_table(records) -> list[SamplerRow]:
    nuts = [r for r in records if r.suite == "nuts" and set(CONFIG) <= r.params.keys()]
    key = lambda r: (r.machine, r.cls, tuple(sorted((k, v) for k, v in r.params.items() if k not in CONFIG)))
    out = []
    for (machine, _cls, setting), recs in sorted(group(nuts, key).items(), key=lambda kv: str(kv[0])):
        ess = [r for r in recs if r.method.endswith("ess_per_s")]
        if not ess:
            continue
        configs: dict = {}
        extras: dict = {}
        for r in ess:
            configs[(r.params["chain_method"], r.params["num_chains"])] = r.value if r.ok else None
        for r in recs:
            if r.ok and not r.method.endswith("ess_per_s"):
                chains = (r.params["chain_method"], r.params["num_chains"])
                extras.setdefault(chains, {})[r.method.removeprefix("track_")] = r.value
        prov = next((r.provenance() for r in ess if r.ok), ess[0].provenance())
        out.append(SamplerRow(machine, setting, configs, extras, prov))
    return out

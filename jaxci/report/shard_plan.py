"""What a sharded executed audit of a real lecture repository would take (`jaxci audit shard-plan`): its published
per-notebook seconds (a published build's record, jaxci.results.published_build) split over N shards by the
audit's own assignment (jaxci.audit.runner.shard.assign, greedy longest-first), and each shard's predicted wall.

The model, labelled in the output: a shard's wall time = setup_s (checkout, environment, jax-env: not measured
here, given) + overhead x the summed published seconds of its notebooks (each a fresh-kernel run, the same unit
the audit's runs are; overhead: the audit's instrumentation, docs/decisions/2026-12-01-runner-overhead.md). One
execution per notebook, i.e. the audit run with one platform on the runner the times come from; a run on every
platform adds each platform's own time, which a GPU runner's table does not publish.
"""

from __future__ import annotations

from jaxci.audit.runner.shard import assign, loads


def plan(seconds: dict[str, float], count: int, setup_s: float, overhead: float) -> dict:
    """One N: the shards' summed published seconds, slowest over mean, and the predicted wall (the slowest)."""
    shards = assign(seconds, count)
    load = loads(seconds, shards)
    mean = sum(load) / count
    return {"shards": count, "notebooks": len(seconds), "summed_s": sum(seconds.values()),
            "longest": max(seconds.items(), key=lambda kv: kv[1]), "loads_s": load,
            "slowest_over_mean": max(load) / mean if mean else None,
            "predicted_wall_s": setup_s + overhead * max(load), "label": "predicted",
            "model": f"setup {setup_s:g} s + {overhead:g} x the slowest shard's summed published seconds"}


def render(plans: list[dict], refused: dict[str, str]) -> str:
    """Each N on two lines, then the published rows that are not run times."""
    lines = []
    for p in plans:
        name, longest = p["longest"]
        ratio = "—" if p["slowest_over_mean"] is None else f"{p['slowest_over_mean']:.2f}"
        lines.append(f"{p['notebooks']} notebooks, {p['summed_s']:,.0f} s summed; the longest {name} {longest:,.0f} s")
        lines.append(f"  {p['shards']} shards: " + ", ".join(f"{x:,.0f}" for x in p["loads_s"]) + " s; slowest / "
                     f"mean {ratio}; predicted wall {p['predicted_wall_s'] / 60:.1f} min ({p['model']})")
    lines += [f"  not a time: {name}: {why}" for name, why in refused.items()]
    return "\n".join(lines)

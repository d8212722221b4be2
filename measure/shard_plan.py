"""What a sharded executed audit of a real lecture repository would take: its published per-notebook seconds
(a QuantEcon `*.notebooks` snapshot's status.ipynb) split over N shards by the audit's own assignment
(jaxci.audit.runner.shard.assign, greedy longest-first), and each shard's predicted wall time.

    .venv/bin/python measure/shard_plan.py SNAPSHOT --commit C [--shards 8] [--setup-s S] [--overhead F] [--cap S]

The model, labelled in the output: a shard's wall time = setup_s (checkout, environment, jax-env: not measured
here, give it) + overhead x the summed published seconds of its notebooks (each a fresh-kernel run, the same unit
the audit's runs are; overhead: the audit's instrumentation, docs/audit.md "Measured overhead"). One execution per
notebook, i.e. the audit run with one platform (`--platforms cuda` on the GPU runner the times come from); a run
on every platform adds each platform's own time, which a GPU runner's table does not publish.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from published_builds import parse_status, read_file  # noqa: E402

from jaxci.audit.runner.shard import assign, loads  # noqa: E402


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("snapshot", type=Path, help="a *.notebooks snapshot (git directory or working tree)")
    p.add_argument("--commit", default=None, help="the commit whose status.ipynb is read")
    p.add_argument("--shards", type=int, nargs="+", default=[8], help="N to simulate (default 8)")
    p.add_argument("--setup-s", type=float, default=0.0, help="per-shard set-up seconds (default 0: not counted)")
    p.add_argument("--overhead", type=float, default=1.0, help="the audit's time per published second (default 1)")
    p.add_argument("--cap", type=float, default=None, help="the series' cell timeout: rows at it are not times")
    p.add_argument("--format", choices=["text", "json"], default="text")
    return p


def plan(seconds: dict[str, float], count: int, setup_s: float, overhead: float) -> dict:
    shards = assign(seconds, count)
    load = loads(seconds, shards)
    mean = sum(load) / count
    return {"shards": count, "notebooks": len(seconds), "summed_s": sum(seconds.values()),
            "longest": max(seconds.items(), key=lambda kv: kv[1]), "loads_s": load,
            "slowest_over_mean": max(load) / mean if mean else None,
            "predicted_wall_s": setup_s + overhead * max(load), "label": "predicted",
            "model": f"setup {setup_s:g} s + {overhead:g} x the slowest shard's summed published seconds"}


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    rows = parse_status(read_file(args.snapshot, args.commit, "status.ipynb"), args.cap)
    seconds = {r.document: r.seconds for r in rows if not r.refused}
    refused = [f"{r.document}: {r.refused}" for r in rows if r.refused]
    out = [plan(seconds, n, args.setup_s, args.overhead) for n in args.shards]
    if args.format == "json":
        print(json.dumps({"plans": out, "refused": refused}, indent=2))
        return 0
    for p in out:
        name, longest = p["longest"]
        print(f"{p['notebooks']} notebooks, {p['summed_s']:,.0f} s summed; the longest {name} {longest:,.0f} s")
        print(f"  {p['shards']} shards: " + ", ".join(f"{x:,.0f}" for x in p["loads_s"]) + " s; slowest / mean "
              f"{p['slowest_over_mean']:.2f}; predicted wall {p['predicted_wall_s'] / 60:.1f} min ({p['model']})")
    for line in refused:
        print(f"  not a time: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Do the compile and cold-start tracks mean the same under asv's forkserver as under spawn?

usage: .venv/bin/python measure/launch_fidelity.py [--suites dense,loops] [--bench 'Dense(Compile|ColdStart)']
                                                   [--repeat 3]

Runs the chosen benchmarks twice at CI scale through measure/suite_cost.py, once with
`launch_method: spawn` (every benchmark process a new interpreter, the earlier launch) and once with
`forkserver` (a fork of a server that imported JAX and never started a backend), and prints asv's value of
every measured combination side by side with the ratio. A first compile or cold first call that
depended on the launch would show as a ratio far from 1 (run-to-run noise of these tracks is about 10-30%).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite_cost  # noqa: E402


def values(results: Path) -> dict:
    """{benchmark(params): value} of every measured combination in a kept results directory."""
    out = {}
    for path in (results / "results" / "suite-cost").glob("*.json"):
        if path.name == "machine.json":
            continue
        data = json.loads(path.read_text())
        cols = data["result_columns"]
        for key, row in data["results"].items():
            get = dict(zip(cols, row))
            params = get.get("params") or []
            vals = get["result"] if isinstance(get["result"], list) else [get["result"]]
            for combo, v in zip(itertools.product(*params) if params else [()], vals):
                if isinstance(v, (int, float)) and not math.isnan(v):
                    out[f"{key}({', '.join(combo)})"] = v
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suites", default="dense")
    ap.add_argument("--bench", default="Dense(Compile|ColdStart)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per launch method, interleaved; the table shows each combination's median")
    args = ap.parse_args()
    suite_cost.check_bench(args.bench)
    got = {"spawn": {}, "forkserver": {}}
    with tempfile.TemporaryDirectory(prefix="launch-fidelity-") as tmp:
        for i, launch in itertools.product(range(args.repeat), ("spawn", "forkserver")):
            keep = Path(tmp) / f"{launch}-{i}"
            suite_cost.run("ci", args.suites.split(","), launch, keep, args.bench)
            for name, value in values(keep).items():
                got[launch].setdefault(name, []).append(value)
    print(f"| benchmark (params) | spawn | forkserver | forkserver / spawn |  (median of {args.repeat} runs each)")
    print("|---|---|---|---|")
    for name in sorted(set(got["spawn"]) & set(got["forkserver"])):
        a, b = statistics.median(got["spawn"][name]), statistics.median(got["forkserver"][name])
        print(f"| {name} | {a:.4g} | {b:.4g} | {b / a:.2f} |" if a else f"| {name} | {a} | {b} | — |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which lectures the published history holds on both a CPU runner and a GPU runner with unchanged code (issue 70,
item 3: the GPU/CPU ratio validated directly, where both sides were measured).

    .venv/bin/python measure/gpu_cpu_pairs.py SNAPSHOT --cpu COMMIT --gpu COMMIT [--gpu COMMIT ...]
        [--other SNAPSHOT@COMMIT] [--format md|json]

SNAPSHOT is a QuantEcon `*.notebooks` repository (git directory). Each commit's `status.ipynb` gives one published
run time per lecture (measure/published_builds.parse_status: failed, capped and non-numeric rows refused). A pair
is a lecture with a time at the CPU commit and at a GPU commit whose code cells are identical at both (outputs and
markdown may differ); `--other` compares a second repository's commit the same way (the same lecture published
by two series). Which runner built which commit is not in the snapshot: the series' own workflow history says it
(docs/tuning-log.md names the eras found). The script lists the pairs and their measured ratio GPU-era / CPU-era
seconds; it predicts nothing: a pair across eras differs in host CPU and software too, and says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from published_builds import parse_status, read_file, snapshot_name, uses_jax  # noqa: E402


def code_cells(text: str | None) -> list[str] | None:
    """The sources of a notebook's code cells (None: no notebook, or not JSON)."""
    try:
        cells = json.loads(text or "").get("cells", [])
    except (json.JSONDecodeError, AttributeError):
        return None
    return ["".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source", ""))
            for c in cells if c.get("cell_type") == "code"]


def times(snapshot: Path, commit: str) -> dict[str, float]:
    rows = parse_status(read_file(snapshot, commit, "status.ipynb"), 7200)
    return {r.document: r.seconds for r in rows if not r.refused and r.seconds}


def _read(snapshot: Path, commit: str, name: str) -> str | None:
    try:
        return read_file(snapshot, commit, f"{name}.ipynb")
    except (OSError, ValueError):
        return None


def pairs(cpu: tuple, gpu: tuple) -> list[dict]:
    """(snapshot, commit) of each side: every lecture timed at both with identical code cells."""
    tc, tg = times(*cpu), times(*gpu)
    out = []
    for name in sorted(set(tc) & set(tg)):
        a, b = _read(*cpu, name), _read(*gpu, name)
        ca = code_cells(a)
        if ca is None or ca != code_cells(b):
            continue
        out.append({"lecture": name, "cpu_s": tc[name], "gpu_s": tg[name], "ratio": tg[name] / tc[name],
                    "jax": uses_jax(b or ""), "code_cells": len(ca)})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("snapshot", type=Path)
    p.add_argument("--cpu", required=True, help="a commit published by a CPU runner")
    p.add_argument("--gpu", action="append", default=[], help="a commit published by a GPU runner")
    p.add_argument("--other", action="append", default=[], metavar="SNAPSHOT@COMMIT",
                   help="another series' commit: its lectures held against the --cpu commit's")
    p.add_argument("--format", choices=("md", "json"), default="md")
    args = p.parse_args(argv)
    sides = [(args.snapshot, c) for c in args.gpu]
    sides += [(Path(o.rpartition("@")[0]), o.rpartition("@")[2]) for o in args.other]
    found = {f"{snapshot_name(s)}@{c}": pairs((args.snapshot, args.cpu), (s, c)) for s, c in sides}
    if args.format == "json":
        print(json.dumps(found, indent=1))
        return 0
    for side, rows in found.items():
        jax = [r for r in rows if r["jax"]]
        print(f"\n{snapshot_name(args.snapshot)}@{args.cpu} (CPU) vs {side}: {len(rows)} lectures with identical code "
              f"cells, {len(jax)} import JAX or numpyro\n")
        print("| lecture | code cells | JAX | CPU-era s | GPU-era s | ratio |\n|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['lecture']} | {r['code_cells']} | {'yes' if r['jax'] else 'no'} | {r['cpu_s']:.1f} | "
                  f"{r['gpu_s']:.1f} | {r['ratio']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

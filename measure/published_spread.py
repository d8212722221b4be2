"""How much a runner's own published run time of one lecture moves between builds of unchanged code: the noise floor
a prediction of that lecture is held against (issue 70: is the model's gap on the long lectures the runner's noise?).

    .venv/bin/python measure/published_spread.py SNAPSHOT --since YYYY-MM-DD [--lecture NAME ...] [--format md|json]

SNAPSHOT is a QuantEcon `*.notebooks` repository (git directory). Every commit since the date that changed
`status.ipynb` gives one published run time per lecture (measure/published_builds.parse_status: failed, capped and
non-numeric rows refused). A lecture's builds are grouped by its notebook's code cells (outputs and markdown may
differ): per group, the builds, and the smallest, median and largest published seconds. A commit re-publishing a
cached notebook repeats its time, so only distinct times are counted. It predicts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_cpu_pairs import code_cells, times  # noqa: E402
from published_builds import git_dir, read_file  # noqa: E402


def commits(snapshot: Path, since: str) -> list[tuple[str, str]]:
    """(commit, date) of every commit since `since` that changed status.ipynb, oldest first."""
    out = subprocess.run(["git", f"--git-dir={git_dir(snapshot)}", "log", "--format=%H %ad", "--date=short",
                          f"--since={since}", "--", "status.ipynb"], capture_output=True, text=True, check=True)
    return [tuple(line.split()) for line in reversed(out.stdout.splitlines()) if line.strip()]


def spread(snapshot: Path, since: str, names: list[str] | None) -> dict:
    """{lecture: [{"first", "last", "times": distinct published seconds}]}, one entry per version of its code."""
    found: dict = {}
    for commit, day in commits(snapshot, since):
        for name, seconds in times(snapshot, commit).items():
            if names and name not in names:
                continue
            try:
                code = code_cells(read_file(snapshot, commit, f"{name}.ipynb"))
            except (OSError, ValueError):
                continue
            versions = found.setdefault(name, [])
            if not versions or versions[-1]["code"] != code:
                versions.append({"code": code, "first": day, "times": []})
            versions[-1]["last"] = day
            if seconds not in versions[-1]["times"]:
                versions[-1]["times"].append(seconds)
    return {n: [{k: v for k, v in one.items() if k != "code"} for one in vs] for n, vs in found.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("snapshot", type=Path)
    p.add_argument("--since", required=True)
    p.add_argument("--lecture", action="append", default=[])
    p.add_argument("--format", choices=("md", "json"), default="md")
    args = p.parse_args(argv)
    found = spread(args.snapshot, args.since, args.lecture or None)
    if args.format == "json":
        print(json.dumps(found, indent=1))
        return 0
    print("| lecture | code since | until | distinct times | smallest s | median s | largest s | largest / smallest |")
    print("|---|---|---|---|---|---|---|---|")
    for name, versions in sorted(found.items()):
        for v in versions:
            t = v["times"]
            print(f"| {name} | {v['first']} | {v['last']} | {len(t)} | {min(t):.1f} | {statistics.median(t):.1f} | "
                  f"{max(t):.1f} | {max(t) / min(t):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

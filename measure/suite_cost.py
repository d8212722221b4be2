"""Where the suite's own time goes: per suite, seconds spent starting processes, importing JAX, starting its
backend, in setup + compile, and in timed calls, from asv's own durations and a profile of one process.

usage: .venv/bin/python measure/suite_cost.py [--scale ci|full] [--suites dense,loops] [--launch spawn|forkserver]
                                              [--bench RE] [--out FILE.json] [--keep DIR]

Each suite runs as `scripts/run-suites.sh` runs it: one stock `asv run` per suite (here `-E existing` on this
interpreter, results in a temporary directory, default sampling, no --quick). The account per suite:

- wall: the `asv run` process, discovery and saving included; asv: wall minus the sum of asv's per-benchmark
  durations (discovery, environment checks, writing results);
- start: every benchmark process asv launched x the profiled start of an interpreter with asv's runner
  (spawn), or of a fork of a JAX-imported process (forkserver); a skipped combination costs only this;
- jax import, backend: every process that ran a measured combination of a suite that starts JAX in-process
  x the profiled JAX import and CPU backend start (under forkserver JAX is imported once per asv run, in
  the server and in discovery: that is in the asv column);
- timed: for time_* benchmarks, number x repeat x median of each measured combination (asv's stats);
- setup + compile: what remains of asv's durations (setup, jit compiles, warm-up and calibration calls,
  track_* work, which is measured inside setup).

Process counts follow asv 0.6: a measured time/timeraw combination runs in `rounds` processes, any other
combination (and a skipped one) in one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jaxci.machines.asvconf import write_redirected_conf  # noqa: E402
from jaxci.util.git import git  # noqa: E402
from jaxci.util.validate import InputError, bounded_regex  # noqa: E402
from jaxci.workflows.suites import suites  # noqa: E402  (the one list of suites, as scripts/run-suites.sh runs them)

ASV = str(Path(sys.executable).with_name("asv"))
JAX_SUITES = {"compile", "dense", "dispatch", "elementwise", "kalman", "loops", "nuts"}  # start JAX in-process
PROBES = {  # what a benchmark process pays before its own work, each in a fresh interpreter
    "start": "import asv_runner.run",
    "jax_import": "import asv_runner.run, jax",
    "backend": "import asv_runner.run, jax; jax.devices('cpu')",
}
FORK_PROBE = """
import os, time, jax
t0 = time.perf_counter()
for _ in range(20):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print((time.perf_counter() - t0) / 20)
"""


def profile(repeat: int = 9) -> dict:
    """Median seconds of each probe in a fresh interpreter (probes interleaved, so drift hits all alike);
    jax_import and backend as increments; fork: one fork + wait of a JAX-imported process."""
    raw: dict = {name: [] for name in PROBES}
    for _ in range(repeat):
        for name, code in PROBES.items():
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True,
                           env={**os.environ, "JAX_PLATFORMS": "cpu"})
            raw[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(times) for name, times in raw.items()}
    fork = subprocess.run([sys.executable, "-c", FORK_PROBE], capture_output=True, text=True, check=True)
    return {"start": med["start"], "jax_import": max(med["jax_import"] - med["start"], 0.0),
            "backend": max(med["backend"] - med["jax_import"], 0.0), "fork": float(fork.stdout.strip())}


def get_duration(key, values, cols) -> float:
    i = cols.index("duration")
    return round(values[i] or 0.0, 1) if i < len(values) else 0.0


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not math.isnan(v)


def account(results_file: Path, benchmarks: dict, suite: str, wall: float, probe: dict, launch: str) -> dict:
    data = json.loads(results_file.read_text())
    cols = data["result_columns"]
    row = {"suite": suite, "wall": wall, "measured": 0, "skipped": 0, "failed": 0, "processes": 0,
           "measured_processes": 0, "timed": 0.0, "durations": 0.0}
    for key, values in data["results"].items():
        if not key.startswith(suite + "."):
            continue
        values = values + [None] * (len(cols) - len(values))
        get = dict(zip(cols, values))
        results = get["result"] if isinstance(get["result"], list) else [get["result"]]
        meta = benchmarks.get(key, {})
        rounds = meta.get("rounds", 1) if meta.get("type") in ("time", "timeraw") else 1
        row["durations"] += get["duration"] or 0.0
        for j, value in enumerate(results):
            if is_number(value):
                row["measured"] += 1
                row["processes"] += rounds
                row["measured_processes"] += rounds
                if meta.get("type") == "time":
                    number = (get["stats_number"] or [None] * len(results))[j] or 1
                    rep = (get["stats_repeat"] or [None] * len(results))[j] or 1
                    row["timed"] += number * rep * value
            else:
                row["skipped" if value is not None else "failed"] += 1
                row["processes"] += 1
    for name, seconds in data.get("durations", {}).items():   # setup_cache runs: work, not asv's overhead
        if name.startswith("<setup_cache") and f" {suite}:" in name:
            row["durations"] += seconds
    forked = launch == "forkserver"   # a fork per process; JAX imported once, in the server (asv's share)
    row["start"] = row["processes"] * (probe["fork"] if forked else probe["start"])
    starts_jax = suite in JAX_SUITES
    row["jax_import"] = 0.0 if forked or not starts_jax else row["measured_processes"] * probe["jax_import"]
    row["backend"] = row["measured_processes"] * probe["backend"] if starts_jax else 0.0
    row["slowest"] = sorted(((get_duration(k, v, cols), k) for k, v in data["results"].items()
                             if k.startswith(suite + ".")), reverse=True)[:3]
    row["asv"] = max(wall - row["durations"], 0.0)
    row["setup_compile"] = max(row["durations"] - row["start"] - row["jax_import"] - row["backend"] - row["timed"], 0.0)
    return row


def check_bench(bench: str) -> None:
    """--bench bounded like every user regex (jaxci.util.validate.bounded_regex), before asv starts."""
    if bench:
        try:
            bounded_regex("--bench", bench, "benchmark")
        except InputError as exc:
            print(f"{Path(sys.argv[0]).name}: {exc}", file=sys.stderr)
            raise SystemExit(2) from None


def run(scale: str, names: list[str], launch: str | None, keep: Path | None = None,
        bench: str = "") -> tuple[list[dict], dict]:
    probe = profile()
    rows = []
    with tempfile.TemporaryDirectory(prefix="suite-cost-") as tmp:
        root = Path(tmp)
        write_redirected_conf(root, REPO)
        conf = json.loads((root / "asv.conf.json").read_text())
        if launch:
            conf["launch_method"] = launch
            (root / "asv.conf.json").write_text(json.dumps(conf))
        env = {**os.environ, "HOME": str(root), "JAXCI_SCALE": scale}
        env.pop("JAX_PLATFORMS", None)
        from jaxci.machines.register import register

        register("suite-cost", local=True, machine_file=str(root / ".asv-machine.json"))
        commit = git(REPO, "rev-parse", "HEAD")
        for suite in names:
            t0 = time.perf_counter()
            proc = subprocess.run([ASV, "--config", str(root / "asv.conf.json"), "run",
                                   "-E", f"existing:{sys.executable}", "--set-commit-hash", commit,
                                   "--machine", "suite-cost", "--bench", f"^{suite}\\.{bench}"],
                                  cwd=REPO, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            files = [p for p in (root / "results" / "suite-cost").glob("*.json") if p.name != "machine.json"]
            if not files:
                print(f"suite_cost: {suite}: asv wrote no results (exit {proc.returncode})\n{proc.stderr[-2000:]}",
                      file=sys.stderr)
                continue
            benchmarks = json.loads((root / "results" / "benchmarks.json").read_text())
            row = account(files[0], benchmarks, suite, wall, probe, launch or conf.get("launch_method", "spawn"))
            row["asv_exit"] = proc.returncode
            rows.append(row)
            print(f"suite_cost: {suite}: {wall:.0f} s", file=sys.stderr)
        if keep:   # e.g. for `jaxci report KEEP/results`: the cost table priced from these suite times
            shutil.copytree(root / "results", keep / "results", dirs_exist_ok=True)
    return rows, probe


COLUMNS = ["suite", "wall", "asv", "start", "jax_import", "backend", "setup_compile", "timed", "measured",
           "skipped", "failed", "processes"]


def markdown(rows: list[dict]) -> str:
    total = {c: sum(r[c] for r in rows) for c in COLUMNS[1:]}
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in sorted(rows, key=lambda r: -r["wall"]) + [{"suite": "**total**", **total}]:
        cells = (str(r[c]) if isinstance(r[c], (int, str)) else f"{r[c]:.0f}" for c in COLUMNS)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", choices=["ci", "full"], default="ci")
    ap.add_argument("--suites", help="comma-separated suite names (default: every suite)")
    ap.add_argument("--launch", choices=["spawn", "forkserver"],
                    help="override asv.conf.json's launch_method (default: as configured)")
    ap.add_argument("--out", type=Path, help="write the rows and the profile as JSON here")
    ap.add_argument("--bench", default="", help="regex after 'SUITE.' (e.g. 'DenseColdStart'): part of a suite")
    ap.add_argument("--keep", type=Path, help="copy asv's results directory to KEEP/results (machine suite-cost)")
    args = ap.parse_args()
    check_bench(args.bench)
    names = args.suites.split(",") if args.suites else suites()
    rows, probe = run(args.scale, names, args.launch, args.keep, args.bench)
    print(f"profile of one process (s): start {probe['start']:.2f}, JAX import {probe['jax_import']:.2f}, "
          f"CPU backend {probe['backend']:.2f}, fork of a JAX-imported process {probe['fork']:.4f}")
    print(markdown(rows))
    if args.out:
        args.out.write_text(json.dumps({"scale": args.scale, "launch": args.launch, "profile": probe, "rows": rows},
                                       indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

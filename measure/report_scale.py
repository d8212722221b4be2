"""How long `jaxci report` takes over many result files, next to `asv publish` on the same files.

usage: .venv/bin/python measure/report_scale.py [--n 10000] [--machines 10] [--keep DIR]

Writes N synthetic asv result files (asv's own Results writer, as tests/synth.py does): spread over
--machines machine folders, each file one environment of this checkout's HEAD commit with the suite's shape
(dense 2 ops x 5 sizes x 2 dtypes x 2 devices, elementwise, dispatch, each suite's track_scale run fact),
plus machine.json and benchmarks.json. Then, in one run, times `asv publish` (a copy of asv.conf.json whose
results_dir and html_dir point at the scratch folder) and `jaxci report --format summary` on the same folder,
each a fresh process, and prints both wall times and their ratio. jaxci report's progress lines (stderr)
pass through.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jaxci.util.git import GitError, git  # noqa: E402

BENCHMARKS = {  # name -> (param names, param values)
    "dense.Dense.time_warm": (["op", "n", "dtype", "device"],
                              [["matmul", "solve"], [64, 256, 1024, 2048, 4096], ["float32", "float64"],
                               ["cpu", "gpu"]]),
    "elementwise.Elementwise.time_warm": (["n", "dtype", "device"],
                                          [[1_000, 100_000, 10_000_000], ["float32", "float64"], ["cpu", "gpu"]]),
    "dispatch.TinyOp.time_warm": (["dtype", "device"], [["float32", "float64"], ["cpu", "gpu"]]),
    "dense.track_scale": ([], []),
    "elementwise.track_scale": ([], []),
    "dispatch.track_scale": ([], []),
}


def head() -> str:
    return git(REPO, "rev-parse", "HEAD")


def generate(root: Path, n: int, machines: int) -> Path:
    from asv import util
    from asv.results import Results
    from asv.runner import BenchmarkResult

    results, commit = root / "results", head()
    results.mkdir(parents=True)
    meta = {}
    for name, (param_names, values) in BENCHMARKS.items():
        reprs = [[repr(v) for v in axis] for axis in values]
        unit = "seconds" if ".time_" in name else "scale (0 = ci, 1 = full)"
        meta[name] = {"name": name, "param_names": param_names, "params": reprs, "unit": unit, "version": "1",
                      "type": "time" if unit == "seconds" else "track"}
    util.write_json(str(results / "benchmarks.json"), meta, api_version=2)
    for m in range(machines):
        name = f"synth-{m:02d}"
        gpu = "1 x NVIDIA L4" if m % 2 else "no GPU"
        info = {"machine": name, "arch": "x86_64", "cpu": "synthetic", "num_cpu": "8", "os": "Linux", "ram": "1",
                "gpu": gpu, "jaxci_backend": "cuda13" if m % 2 else "cpu", "jaxci_kind": "local", "cpu_cores": "8"}
        (results / name).mkdir()
        util.write_json(str(results / name / "machine.json"), info, api_version=1)
        for i in range(m, n, machines):
            res = Results(info, {}, commit, 1_795_000_000_000 + i * 60_000, "3.12", f"existing-py_env{i}", {})
            for bench, (_names, values) in BENCHMARKS.items():
                combos = list(itertools.product(*values))
                if bench.endswith("track_scale"):
                    vals = [1.0]
                else:
                    vals = [(1e-5 + 1e-9 * (k + 1) * (1 + i % 7)) if (c[-1] == "cpu" or m % 2) else float("nan")
                            for k, c in enumerate(combos)]
                k = len(vals)
                result = BenchmarkResult(result=vals, samples=[None] * k, number=[None] * k, errcode=0, stderr="",
                                         profile=None)
                reprs = [[repr(v) for v in axis] for axis in values]
                res.add_result({"name": bench, "version": "1", "params": reprs}, result, duration=1.0)
            res.save(str(results))
        print(f"report_scale: wrote {name}", file=sys.stderr)
    return results


def asv_conf(root: Path, results: Path) -> Path:
    text = (REPO / "asv.conf.json").read_text()
    data = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))
    data.update(repo=str(REPO), results_dir=str(results), html_dir=str(root / "html"),
                env_dir=str(root / "env"), branches=[_branch()])
    path = root / "asv.conf.json"
    path.write_text(json.dumps(data, indent=1))
    return path


def _branch() -> str:
    try:
        branch = git(REPO, "rev-parse", "--abbrev-ref", "HEAD")
    except GitError:
        return "main"
    return branch if branch != "HEAD" else "main"


def timed(cmd: list[str], cwd: Path, show_stderr: bool) -> tuple[float, int, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=None if show_stderr else subprocess.PIPE,
                          text=True)
    return time.perf_counter() - start, proc.returncode, (proc.stderr or "")[-500:]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000, help="result files (default 10,000)")
    p.add_argument("--machines", type=int, default=10, help="machine folders they are spread over (default 10)")
    p.add_argument("--keep", type=Path, help="write into this folder and keep it (default: a temporary one)")
    args = p.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="report-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        results = generate(root, args.n, args.machines)
        print(f"report_scale: {args.n:,} result files in {args.machines} machine folders written in "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
        conf = asv_conf(root, results)
        asv = str(Path(sys.executable).with_name("asv"))
        publish_s, publish_rc, publish_err = timed([asv, "publish", "--config", str(conf)], root, False)
        report_s, report_rc, _ = timed([sys.executable, "-m", "jaxci", "report", str(results), "--format", "summary"],
                                       REPO, True)
        print(f"| files | asv publish | jaxci report | ratio |\n|---|---|---|---|\n"
              f"| {args.n:,} | {publish_s:.1f} s (exit {publish_rc}) | {report_s:.1f} s (exit {report_rc}) | "
              f"{report_s / publish_s:.2f} |")
        if publish_rc:
            print(f"asv publish: {publish_err}", file=sys.stderr)
        return 0 if publish_rc == 0 and report_rc == 0 else 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

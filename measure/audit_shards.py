"""The sharded and incremental executed audit, measured: a folder audited as N = 1, 2, 4 local shard processes
(started together), each N's shards merged and compared with N = 1 apart from timings, then a full and an
incremental re-audit with a run cache.

    .venv/bin/python measure/audit_shards.py [FOLDER] [--shards 1 2 4] [--kernel K] [--cell-timeout S]

FOLDER defaults to tests/fixtures/shards20. Prints, per N: the wall time, each shard process's wall and summed run
seconds, the slowest shard over the mean, and whether the merged audit equals N = 1's; then the cache's full,
unchanged and one-changed-notebook runs (what each executed). The load average is printed before and after each
step: on a shared 2-core machine every time here is inflated by whatever else runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def audit_cmd(folder: Path, out: Path, extra: list[str], kernel: str | None, timeout: float) -> list[str]:
    cmd = [sys.executable, "-m", "jaxci", "audit", str(folder), "--execute", "--platforms", "cpu", "--format",
           "json", "--no-progress", "--output", str(out), "--cell-timeout", str(timeout), *extra]
    return cmd + (["--kernel", kernel] if kernel else [])


def run_shards(folder: Path, n: int, work: Path, kernel, timeout) -> tuple[float, list[dict], list[float]]:
    """N shard processes started together: (wall, their JSONs, each process's wall)."""
    t0 = time.perf_counter()
    procs = []
    for i in range(1, n + 1):
        out = work / f"n{n}_{i}.json"
        extra = [] if n == 1 else ["--shard", f"{i}/{n}"]
        procs.append((out, time.perf_counter(), subprocess.Popen(audit_cmd(folder, out, extra, kernel, timeout),
                                                                  cwd=ROOT, stdout=subprocess.DEVNULL,
                                                                  stderr=subprocess.PIPE, text=True)))
    docs, walls = [], []
    for out, started, proc in procs:
        _, err = proc.communicate()
        walls.append(time.perf_counter() - started)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"audit_shards: a shard failed: {err.strip().splitlines()[-1:]}")
        docs.append(json.loads(out.read_text()))
    return time.perf_counter() - t0, docs, walls


def run_seconds(doc: dict) -> float:
    """Summed wall seconds of the runs this shard executed."""
    return sum(r.get("wall_s") or 0 for lec in doc["lectures"] for r in (lec.get("runs") or {}).values())


def change_first_code_cell(lecture: Path) -> None:
    """Add a comment line to the lecture's first code cell (.ipynb or MyST): its key changes, nothing else."""
    text = lecture.read_text()
    if lecture.suffix == ".ipynb":
        nb = json.loads(text)
        cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        cell["source"] = "# changed\n" + source
        lecture.write_text(json.dumps(nb))
    else:
        lecture.write_text(text.replace("```{code-cell}", "```{code-cell}\n# changed", 1))


def cache_runs(folder: Path, work: Path, kernel, timeout) -> list[str]:
    """Full, unchanged and one-changed re-audits of a copy of `folder` with one cache folder."""
    from jaxci.audit import repo

    copy, cache, lines = work / "copy", work / "cache", []
    shutil.copytree(folder, copy)
    lecture = repo.find_lectures(copy)[0]
    for label in ("full", "unchanged", "one notebook changed"):
        if label == "one notebook changed":
            change_first_code_cell(lecture)
        out = work / f"cache-{label.replace(' ', '-')}.json"
        before, t0 = load(), time.perf_counter()
        subprocess.run(audit_cmd(copy, out, ["--cache", str(cache)], kernel, timeout), cwd=ROOT,
                       capture_output=True, text=True)
        doc = json.loads(out.read_text())
        runs = sum(len(lec.get("runs") or {}) for lec in doc["lectures"])
        reused = len(doc.get("execution", {}).get("reused", []))
        lines.append(f"{label}: {time.perf_counter() - t0:.1f} s, executed {runs - reused}, reused {reused} "
                     f"({before} -> {load()})")
    return lines


def main(argv=None) -> int:
    from jaxci.audit.writing import merge

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=ROOT / "tests" / "fixtures" / "shards20")
    ap.add_argument("--shards", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--kernel", default=None, help="the Jupyter kernel the lectures need (their dependencies)")
    ap.add_argument("--cell-timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="audit-shards-") as tmp:
        work = Path(tmp)
        single = None
        print("| N | wall s | shard process wall s | shard run s | slowest / mean | merged = N 1 | load |")
        print("|---|---|---|---|---|---|---|")
        for n in args.shards:
            before = load()
            wall, docs, walls = run_shards(args.folder, n, work, args.kernel, args.cell_timeout)
            merged = docs[0] if n == 1 else merge.merge(docs)
            single = merged if single is None else single
            same = merge.strip_timings(merged) == merge.strip_timings(single)
            runs = [run_seconds(d) for d in docs]
            mean = sum(runs) / len(runs)
            walls_text, runs_text = ", ".join(f"{w:.1f}" for w in walls), ", ".join(f"{r:.1f}" for r in runs)
            print(f"| {n} | {wall:.1f} | {walls_text} | {runs_text} | {max(runs) / mean if mean else 1:.2f} "
                  f"| {'yes' if same else 'NO'} | {before} -> {load()} |")
        skipped = [f"{lec['path']} ({lec.get('not_executed') or lec.get('status')})" for lec in single["lectures"]
                   if not lec.get("runs")]
        print(f"\nexecuted {len(single['lectures']) - len(skipped)} of {len(single['lectures'])} lectures; "
              f"not executed: {'; '.join(skipped) or 'none'}\n")
        for line in cache_runs(args.folder, work, args.kernel, args.cell_timeout):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Time the whole `jaxci audit` (lectures + CI, no --execute) on a generated 150-lecture repository; goal < 15 s.

    .venv/bin/python measure/audit_ci.py [--lectures 150] [--cells 30] [--repeat 3]

The lectures come from measure/audit_static.py's generator (MyST notebooks cycling through the patterns the
lecture audit classifies, a Jupyter Book _config.yml on top); the CI part is the findings fixture of
tests/fixtures/ci_repos/findings_gpu (its workflow and environment.yml), so every CI rule runs. Reports the
wall time of the whole command in a fresh interpreter (as CI runs it), the in-process split between the
lecture scan and the CI part, the number of CI findings, and whether the emitted patch passes
`git apply --check`.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CI_FIXTURE = HERE.parent / "tests" / "fixtures" / "ci_repos" / "findings_gpu"


def _lecture_generator():
    spec = importlib.util.spec_from_file_location("audit_static", HERE / "audit_static.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate


def generate(root: Path, lectures: int = 150, cells: int = 30) -> None:
    """A lecture repository of `lectures` generated lectures with the findings fixture's CI files."""
    _lecture_generator()(root, lectures, cells)
    shutil.copytree(CI_FIXTURE / ".github", root / ".github")
    shutil.copy(CI_FIXTURE / "environment.yml", root / "environment.yml")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lectures", type=int, default=150)
    p.add_argument("--cells", type=int, default=30)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    jaxci = str(Path(sys.executable).with_name("jaxci"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        generate(root, args.lectures, args.cells)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            proc = subprocess.run([jaxci, "audit", str(root), "--format", "json", "--output", str(Path(tmp) / "a.json"),
                                   "--ci-patch", str(Path(tmp) / "ci.diff")], capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                print(proc.stderr, file=sys.stderr)
                return 1
        import json

        sys.path.insert(0, str(HERE.parent))
        from jaxci.audit.lecture_ci import audit_ci, lectures

        start = time.perf_counter()
        facts = lectures.audit_lectures(root)
        lecture_s = time.perf_counter() - start
        ci = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            audit_ci(root, facts).patch()
            ci.append(time.perf_counter() - start)
        data = json.loads((Path(tmp) / "a.json").read_text())
        from jaxci.util.git import GitError, git

        git(root, "init", "-q")
        try:
            git(root, "apply", "--check", str(Path(tmp) / "ci.diff"))
            applies = "ok"
        except GitError as exc:
            applies = f"FAILED: {exc}"
    kinds = sorted({f["kind"] for f in data["ci"]["findings"]})
    print(f"lectures: {args.lectures} x {args.cells} cells; "
          f"CI findings: {len(data['ci']['findings'])} ({', '.join(kinds)})")
    print(f"jaxci audit lectures + CI (fresh interpreter), {args.repeat} runs: median {statistics.median(times):.2f} s "
          f"(min {min(times):.2f}, max {max(times):.2f}); goal < 15 s")
    print(f"in process: lecture scan {lecture_s:.2f} s (1 run); CI part alone median {statistics.median(ci):.3f} s")
    print(f"patch: git apply --check {applies}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""An audit's CI patch (audits/REPO@COMMIT/ci.patch) against the repository it was made for: `git apply --check` at
the audited commit, then on a copy of that checkout the patch applied, every patched workflow through actionlint,
the pinned kernel installed as the patch's own step installs it, and the lightest pinned lectures executed with the
kernel their patched front matter now names, each with a check cell appended that prints JAX_PLATFORMS and JAX's
backend (both must say cpu).

    JUPYTER_PATH=/tmp/lecjup/share/jupyter .venv/bin/python measure/patch_check.py CHECKOUT audits/REPO@COMMIT \\
        [--execute 2] [--python /tmp/lecjup/venv/bin/python]

CHECKOUT must be a clean checkout at the audit's commit. Nothing here writes outside a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHECK = "import os, jax\nprint('JAX_PLATFORMS=' + os.environ.get('JAX_PLATFORMS', ''), jax.default_backend())"


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def pinned(copy: Path, audit: dict, kernel: str) -> list[tuple[float, Path]]:
    """(measured CPU seconds, path) of the lectures whose front matter names `kernel` after the patch and that ran
    here in the audit."""
    import jupytext

    out = []
    for lec in audit["lectures"]:
        path = copy / "lectures" / lec["path"] if not (copy / lec["path"]).exists() else copy / lec["path"]
        if not path.exists() or lec.get("status") != "ok":  # a lecture that could not run here proves nothing
            continue
        nb = jupytext.read(path)
        if nb.metadata.get("kernelspec", {}).get("name") == kernel:
            seconds = ((lec.get("runs") or {}).get("cpu") or {}).get("wall_s") or float("inf")
            out.append((seconds, path))
    return sorted(out)


def execute(path: Path, kernel: str) -> tuple[str, int, str]:
    """The check cell's output, the number of cells that raised and the first error, executing the lecture as a
    build would."""
    import jupytext
    import nbclient
    import nbformat

    nb = jupytext.read(path)
    nb.cells.append(nbformat.v4.new_code_cell(CHECK))
    client = nbclient.NotebookClient(nb, kernel_name=kernel, timeout=900, allow_errors=True,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = sum(any(o.get("output_type") == "error" for o in c.get("outputs", [])) for c in nb.cells
                 if c.cell_type == "code")
    last = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", [])).strip()
    first = next((f"{o.get('ename')}: {o.get('evalue', '')[:120]}" for c in nb.cells if c.cell_type == "code"
                  for o in c.get("outputs", []) if o.get("output_type") == "error"), "")
    return last, errors, first


def main(argv=None) -> int:
    from jaxci.audit.writing import emit

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("audit_dir", type=Path)
    ap.add_argument("--execute", type=int, default=2, help="pinned lectures to execute (the lightest first)")
    ap.add_argument("--python", default="/tmp/lecjup/venv/bin/python", help="the lecture kernel's interpreter")
    args = ap.parse_args(argv)
    patch = (args.audit_dir / "ci.patch").resolve()
    audit = json.loads((args.audit_dir / "audit.json").read_text())
    commit = audit["published"]["commit"]
    head = git(args.checkout, "rev-parse", "HEAD").stdout.strip()
    print(f"checkout at {head[:12]}, audit at {commit[:12]}: {'same commit' if head == commit else 'DIFFERENT'}")
    check = git(args.checkout, "apply", "--check", "--verbose", str(patch))
    print(f"git apply --check: exit {check.returncode}\n{check.stderr.strip()}")
    if check.returncode or head != commit:
        return 1
    with tempfile.TemporaryDirectory(prefix="patch-check-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(args.checkout, copy, symlinks=True)
        applied = git(copy, "apply", str(patch))
        print(f"git apply: exit {applied.returncode} {applied.stderr.strip()}")
        changed = [line.split("\t")[-1] for line in git(copy, "apply", "--numstat", str(patch)).stdout.splitlines()]
        flows = [f for f in changed if f.startswith(".github/workflows/")]
        lint = subprocess.run([str(REPO / ".venv" / "bin" / "actionlint"), *flows], cwd=copy, capture_output=True,
                              text=True) if flows else None
        print(f"actionlint on {len(flows)} patched workflow(s): "
              + ("none patched" if lint is None else f"exit {lint.returncode} {lint.stdout.strip()[:2000]}"))
        data = Path(tmp) / "jupyter-data"
        env = {**os.environ, "JUPYTER_DATA_DIR": str(data), "PATH": f"{Path(args.python).parent}{os.pathsep}"
               f"{os.environ['PATH']}"}
        install = subprocess.run(["bash", "-ec", emit.INSTALL_CMD], cwd=copy, env=env, capture_output=True,
                                 text=True)
        print(f"`{emit.INSTALL_CMD}`: exit {install.returncode} {install.stderr.strip()[:300]}")
        os.environ.update({"JUPYTER_DATA_DIR": str(data), "PATH": env["PATH"]})
        sys.executable = args.python  # jupyter_client starts a kernel.json's bare `python` as sys.executable: in a
        # build that is the book's environment; here it must be the lecture kernel's, not this project's .venv
        lectures = pinned(copy, audit, emit.KERNEL)
        print(f"{len(lectures)} lecture(s) name {emit.KERNEL} after the patch")
        failed = bool(applied.returncode or (lint and lint.returncode) or install.returncode)
        for seconds, path in lectures[:args.execute]:
            last, errors, first = execute(path, emit.KERNEL)
            ok = last == "JAX_PLATFORMS=cpu cpu"
            failed |= not ok
            print(f"executed {path.relative_to(copy)} (measured {seconds:.1f} s in the audit): check cell {last!r}, "
                  f"{errors} cell(s) raised{f' (first: {first})' if first else ''} {'(ok)' if ok else '(FAILED)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

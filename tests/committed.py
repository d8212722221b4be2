"""What git holds, for the tests that check the committed results: a copy of the tracked files of a folder, never
the working tree's git-ignored state (results/local-*, .asv/, html/, .jaxci/) that the README's first command
leaves behind (issue 85: a local quick run had moved the committed report's pins)."""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@functools.cache
def committed(folder: str = "results") -> Path:
    """A copy of `folder` as git's index holds it (what a clean clone has, staged edits included; never a tracked
    file a command rewrote, such as the results/benchmarks.json every `asv run` writes), made once per test
    process and removed at its exit."""
    root = Path(tempfile.mkdtemp(prefix="jaxci-committed-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    names = subprocess.run(["git", "ls-files", "-z", "--", folder], cwd=REPO, check=True, capture_output=True,
                           text=True).stdout
    subprocess.run(["git", "checkout-index", "-z", f"--prefix={root}/", "--stdin"], cwd=REPO, check=True,
                   input=names, capture_output=True, text=True)
    return root / folder

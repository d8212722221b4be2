"""The pip requirements of a lecture kernel built from a repository's own environment file (issue 69, item 5).

    python measure/env_kernel.py ENV_FILE OUT_REQUIREMENTS     # prints the Python version the file names

Every entry with a pip equivalent at the version the file names (jaxci.audit.runner.build_env: `pip:` entries as
written, conda `name=1.2` as `name==1.2.*`), then the lecture stack of measure/lecture-kernel.txt for what the
file leaves to its conda distribution (`anaconda=2026.07` names no versions: pip's newest stands in), each package
the file names taken at the file's version instead of the stack's. The JAX pin stays the project's
(env_matrix/cpu/requirements.txt, installed beside it by measure/lecture_kernel.sh). What could not be reproduced
is listed by the audit itself (its `kernel_environment` block).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jaxci.audit.runner import build_env  # noqa: E402
from jaxci.util import safeyaml  # noqa: E402

STACK = Path(__file__).with_name("lecture-kernel.txt")


def stack_lines(text: str) -> list[tuple[str, str]]:
    """(normalised name, requirement) of each requirement line of lecture-kernel.txt."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append((re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0].lower().replace("_", "-"), line))
    return out


def requirements(doc, stack: str) -> tuple[str | None, list[str]]:
    """(the Python version the file names, the requirement lines)."""
    listed = build_env.entries(doc)
    python = next((e["named"] for e in listed if e["name"] == "python"), None)
    named = {e["name"].replace("_", "-"): e["pip"] for e in listed if e.get("pip")}
    lines = [f"# from the environment file: {len(named)} entr{'y' if len(named) == 1 else 'ies'}", *named.values(),
             "# the lecture stack (measure/lecture-kernel.txt), less what the file names"]
    lines += [req for name, req in stack_lines(stack) if name not in named]
    return python, lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("env_file", type=Path)
    p.add_argument("out", type=Path)
    args = p.parse_args(argv)
    try:
        doc = safeyaml.load(args.env_file)
    except (OSError, ValueError) as exc:
        print(f"env_kernel: {args.env_file}: {exc}", file=sys.stderr)
        return 2
    python, lines = requirements(doc, STACK.read_text(encoding="utf-8"))
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(python or "")
    return 0


if __name__ == "__main__":
    sys.exit(main())

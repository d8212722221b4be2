"""`jaxci audit kernel-requirements ENV_FILE OUT [--stack FILE]`: the pip requirements of a lecture kernel built
from a repository's own environment file (jaxci.audit.runner.build_env.requirements), written to OUT; prints the
Python version the file names (empty when none), which measure/lecture_kernel.sh builds the kernel with. The JAX
pin stays the project's (env_matrix/cpu/requirements.txt, installed beside it); what could not be reproduced is
listed by the audit itself (its `kernel_environment` block). Exit 2 with one line when a file cannot be read or
OUT cannot be written."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse

PROG = "jaxci audit kernel-requirements"


def parser() -> argparse.ArgumentParser:
    from jaxci import REPO_ROOT

    p = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("env_file", type=Path, help="the repository's environment.yml")
    p.add_argument("out", type=Path, help="where to write the requirements")
    p.add_argument("--stack", type=Path, default=REPO_ROOT / "measure" / "lecture-kernel.txt",
                   help="the lecture stack for what the file leaves to its conda distribution "
                        "(default measure/lecture-kernel.txt)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.audit.runner import build_env
    from jaxci.util import safeio, safewrite, safeyaml

    try:
        doc = safeyaml.load(args.env_file)
        stack = safeio.read_text(args.stack)
        python, lines = build_env.requirements(doc, stack)
        safewrite.write_text(args.out, "\n".join(lines) + "\n", option="OUT")
    except (OSError, ValueError) as exc:
        return refuse(PROG, exc)
    print(python or "")
    return 0

"""`jaxci audit PATH [--execute]`: which lectures of a repository belong on CPU, and why.

Exit status: 0 every lecture audited; 1 at least one lecture failed (unreadable, malformed, a cell error,
a timeout, a dead kernel, a missing kernel): it is reported with its cause and the rest are still audited;
2 bad usage (no such path).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jaxci audit", description=__doc__.splitlines()[0])
    p.add_argument("path", type=Path, help="lecture repository (or one lecture file)")
    p.add_argument("--execute", action="store_true",
                   help="run each lecture in a Jupyter kernel on the CPU and, where present, on the GPU")
    p.add_argument("--format", choices=["md", "csv", "json"], default="md", help="table format (default md)")
    p.add_argument("--output", type=Path, help="write the table here instead of stdout")
    p.add_argument("--summary", type=Path,
                   help="append a short Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)")
    p.add_argument("--cell-timeout", type=float, default=600.0,
                   help="per-cell timeout while executing, seconds (default 600)")
    p.add_argument("--platforms", default=None,
                   help="comma-separated JAX platforms to execute on (default: cpu, plus cuda if a GPU is seen)")
    p.add_argument("--kernel", default=None, help="Jupyter kernel name (default: each notebook's own)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    from jaxci.audit.ci.cli import add_arguments  # the CI audit's options (issue 19)

    add_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.path.exists():
        print(f"jaxci audit: {args.path}: no such file or directory", file=sys.stderr)
        return 2
    from jaxci.audit import render, repo

    verdicts = repo.audit_static(args.path)
    if not verdicts:
        print(f"jaxci audit: no lectures (.ipynb or MyST .md) under {args.path}", file=sys.stderr)
    if args.execute:
        platforms = args.platforms.split(",") if args.platforms else repo.platforms_here()
        repo.execute(verdicts, platforms=platforms, cell_timeout=args.cell_timeout, kernel_name=args.kernel,
                     progress=not args.no_progress)
    text = {"md": lambda: render.to_markdown(verdicts, args.execute), "csv": lambda: render.to_csv(verdicts),
            "json": lambda: render.to_json(verdicts, args.execute)}[args.format]()
    from jaxci.audit.ci.cli import attach  # the repository's CI, when it has .github/workflows (issue 19)

    text = attach(args, verdicts, text)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    summary_path = args.summary or (Path(os.environ["GITHUB_STEP_SUMMARY"])
                                    if os.environ.get("GITHUB_STEP_SUMMARY") else None)
    if summary_path:
        with open(summary_path, "a", encoding="utf-8") as fh:
            fh.write(render.summary(verdicts, args.execute))
            if args.format == "md" or args.output:
                fh.write("\n" + render.to_markdown(verdicts, args.execute))
    failed = [v for v in verdicts if v.failed]
    for v in failed:
        print(f"jaxci audit: {v.path}: {v.status}: {'; '.join(v.errors)}", file=sys.stderr)
    return 1 if failed else 0

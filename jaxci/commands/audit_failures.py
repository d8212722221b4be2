"""What an executed audit says about its own harness: whose each failure is, the lecture's or the harness's
(jaxci.audit.judging.failure; `--build-status FILE`, the repository's published Execution Statistics page, is the
evidence that the build executes a lecture that fails here), and the kernel against the repository's environment
file (jaxci.audit.runner.build_env)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--build-status", metavar="FILE", type=Path, default=None,
                   help="the repository's published Execution Statistics page (status.ipynb or .md): a lecture it "
                        "shows executed (✅) that fails here is labelled the harness's (kernel-environment)")


def built(args, verdicts) -> set[str] | None:
    """The lectures (paths) the page shows executed; None without --build-status. Raises InputError for a page
    that cannot be read or names no lecture here."""
    if getattr(args, "build_status", None) is None:
        return None
    from jaxci.audit.runner import shard
    from jaxci.util import safeio
    from jaxci.util.validate import InputError, one_line

    try:
        text = safeio.read_text(args.build_status, 64 * 1024 * 1024)
    except (OSError, ValueError) as exc:
        raise InputError(f"--build-status {args.build_status}: {one_line(exc)}") from None
    executed = set(shard.by_lecture(verdicts, shard.execution_statistics(text)))
    if not executed:
        raise InputError(f"--build-status {args.build_status}: no Execution Statistics row names a lecture here")
    return executed


def label(verdicts, executed: set[str] | None) -> None:
    """Each verdict's `failure` record (None for a lecture that did not fail)."""
    from jaxci.audit.judging.failure import failure

    for v in verdicts:
        v.failure = failure(v, executed)


def attach_environment(args, text: str) -> str:
    """The executed audit's JSON with its `kernel_environment` block (the kernel against the repository's
    environment file); other formats, static audits and repositories without the file are returned as they are."""
    if not args.execute or args.format != "json" or not Path(args.path).is_dir():
        return text
    from jaxci.audit.runner import build_env

    block = build_env.for_kernel(Path(args.path), args.kernel or "python3")
    if block is None:
        return text
    doc = json.loads(text)
    doc["kernel_environment"] = block
    return json.dumps(doc, indent=2, default=str)

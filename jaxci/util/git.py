"""The one git wrapper: run git in a checkout, return its output, raise GitError with git's own words."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class GitError(RuntimeError):
    """git failed, could not start, or took too long; the message names the command and git's stderr."""


def git(repo: str | Path, *args: str, env: dict | None = None, input: str | None = None,
        timeout: float | None = None) -> str:
    """git's stdout (stripped) for `git ARGS` run in `repo`, with `env` added to this process's environment."""
    full_env = dict(os.environ, **(env or {}))
    try:
        proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=full_env,
                              input=input, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {' '.join(args[:3])}: {_one_line(str(exc))}") from None
    if proc.returncode:
        raise GitError(f"git {' '.join(args[:3])}: {_one_line(proc.stderr)}")
    return proc.stdout.strip()


def show_text(repo: str | Path, *args: str, spec: str, limit: int, timeout: float | None = None) -> str:
    """The text of one committed file (`git ARGS cat-file -s/blob SPEC`), refused (GitError) past `limit` bytes
    before it is read, and when it is not UTF-8: `git show` read whole and decoded as text had neither bound (a
    600 MiB blank status.ipynb in a 1 MiB snapshot exhausted memory; \\xff\\xfe was a traceback)."""
    size = git(repo, *args, "cat-file", "-s", spec, timeout=timeout)
    if not size.isdigit() or int(size) > limit:
        raise GitError(f"{spec}: {size} bytes, past the {limit:,}-byte limit of what is read")
    try:
        proc = subprocess.run(["git", *args, "cat-file", "blob", spec], cwd=repo, capture_output=True,
                              timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git cat-file blob {spec}: {_one_line(str(exc))}") from None
    if proc.returncode:
        raise GitError(f"git cat-file blob {spec}: {_one_line(proc.stderr.decode(errors='replace'))}")
    try:
        return proc.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GitError(f"{spec}: not UTF-8 text (byte {exc.start})") from None


def _one_line(stderr: str) -> str:
    """git's message as one line: its first `fatal:`/`error:` line (the cause; what follows is usage or
    advice), else its last line that is not a `hint:`; control characters escaped, at most 300 characters."""
    from jaxci.util.validate import one_line

    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("hint:")]
    causes = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return one_line((causes or lines[-1:] or ["(no message)"])[0])


def head(repo: str | Path) -> str | None:
    """The commit checked out in `repo`, or None where it is no git checkout."""
    try:
        return git(repo, "rev-parse", "HEAD", timeout=30)
    except GitError:
        return None

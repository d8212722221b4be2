"""How much of a repository's published build an executed audit covers (issue 69, item 7).

    .venv/bin/python measure/audit_coverage.py AUDIT_JSON NOTEBOOKS_GIT --commit C [--table]

NOTEBOOKS_GIT is the site's `*.notebooks` repository (a bare git directory or a work tree) whose status.ipynb at
commit C is the published build (Execution Statistics; measure/published_builds.parse_status). Each published
lecture is counted once, in the first class that holds:

- `executed`: every run of the lecture completed here;
- `stopped by the harness`: it ran here until the harness stopped it (its `failure` record says `by: harness`,
  with the cause: no network, the audit's cell timeout, the kernel's environment);
- `failed`: it ran here and failed on its own;
- `not executed`: not run here (its `not_executed` says why), or not in the audit at all.

The headline is the executed lectures' share of the published seconds (the issue's coverage); the others' shares
follow. Names and numbers only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measure.published_builds import InputError, parse_status  # noqa: E402

CLASSES = ("executed", "stopped by the harness", "failed", "not executed")


def published_seconds(git_dir: Path, commit: str) -> dict[str, float]:
    """Document -> published seconds (rows that are run times) of status.ipynb at `commit`."""
    git = git_dir / ".git" if (git_dir / ".git").exists() else git_dir
    text = subprocess.run(["git", f"--git-dir={git}", "show", f"{commit}:status.ipynb"], capture_output=True,
                          text=True, check=True, timeout=60).stdout
    return {r.document: r.seconds for r in parse_status(text, None) if r.seconds is not None}


def lecture_class(lecture: dict | None) -> tuple[str, str]:
    """(class, why) of one audit lecture record (None: not in the audit)."""
    if lecture is None:
        return "not executed", "not in the audit"
    runs = lecture.get("runs") or {}
    if not runs or lecture.get("not_executed"):
        return "not executed", lecture.get("not_executed") or "no run"
    if all(isinstance(r, dict) and r.get("status") == "ok" for r in runs.values()):
        return "executed", ""
    failure = lecture.get("failure") or {}
    where = f"cell {failure.get('cell')}: {failure.get('error') or failure.get('cause')}"
    if failure.get("by") == "harness":
        return "stopped by the harness", f"{failure.get('cause')} ({where})"
    return "failed", "; ".join(lecture.get("errors") or []) or where


def coverage(audit: dict, seconds: dict[str, float]) -> list[tuple[str, float, str, str]]:
    """(document, published seconds, class, why) for every published lecture, heaviest first."""
    by_name = {Path(lec["path"]).stem: lec for lec in audit.get("lectures", []) if isinstance(lec, dict)}
    rows = [(doc, s, *lecture_class(by_name.get(doc))) for doc, s in seconds.items()]
    return sorted(rows, key=lambda r: (-r[1], r[0]))


def summary(rows) -> str:
    total = sum(r[1] for r in rows)
    lines = [f"published: {len(rows)} lectures, {total:,.0f} s"]
    for name in CLASSES:
        part = [r for r in rows if r[2] == name]
        share = sum(r[1] for r in part)
        lines.append(f"{name}: {len(part)} lectures, {share:,.0f} s = {100 * share / total:.1f}%" if total else
                     f"{name}: {len(part)} lectures")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("audit", type=Path)
    p.add_argument("notebooks", type=Path)
    p.add_argument("--commit", required=True)
    p.add_argument("--table", action="store_true", help="every lecture: seconds, class, why")
    args = p.parse_args(argv)
    try:
        audit = json.loads(args.audit.read_text(encoding="utf-8"))
        rows = coverage(audit, published_seconds(args.notebooks, args.commit))
    except (OSError, ValueError, InputError, subprocess.SubprocessError) as exc:
        print(f"audit_coverage: {exc}", file=sys.stderr)
        return 2
    print(summary(rows))
    if args.table:
        print("\n| lecture | published s | class | why |\n|---|---|---|---|")
        print("\n".join(f"| {d} | {s:,.1f} | {c} | {w.replace('|', '/')} |" for d, s, c, w in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

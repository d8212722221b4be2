"""After every family's bench job: merge what came back into results/ and say what happened to each family.

A family job uploads its asv results and its run status (jaxci.workflows.status) as the artifact
`results-<family>`. Here each family of the plan's matrix is looked up again in the catalogue before it
becomes a path, its results are merged, and its outcome is read from its status, or from the lack of one:
a spot runner that vanished is a spot interruption (rerun it), not a regression.
"""

from __future__ import annotations

import os
from pathlib import Path

from jaxci.catalogue import Machine
from jaxci.util.quoting import cell
from jaxci.util.validate import InputError, quoted
from jaxci.workflows import status as run_status
from jaxci.workflows.status import RunStatus, SuiteState


def family_outcome(entry: dict, status: RunStatus | None) -> tuple[str, str]:
    """(outcome, detail) for one matrix entry, from its status file or the lack of one."""
    if status is None:
        if entry.get("spot"):
            return "spot interruption", ("no status came back from a spot runner: the instance was reclaimed "
                                         "or the runner vanished; not a regression, rerun it")
        return "runner lost", "no status came back from an on-demand runner (never started, or the runner vanished)"
    if status.interrupted:
        return "interrupted", f"suite {status.interrupted} was cut off; earlier suites are saved"
    if not status.suites:
        return "failed before the suites", "a setup step (install, machine registration) failed"
    failed = {s: o for s, o in status.suites.items() if o.failed}
    if failed:
        return "failed", "; ".join(f"{s}: {o}" for s, o in failed.items())
    partial = [s for s, o in status.suites.items() if o.state is SuiteState.PARTIAL]
    if partial:
        return "complete", "some benchmarks failed or timed out in: " + ", ".join(partial)
    return "complete", "all suites ran"


def _check_matrix(matrix: object, catalogue: dict[str, Machine]) -> list[dict]:
    if not isinstance(matrix, dict) or not isinstance(matrix.get("include"), list) \
            or not all(isinstance(e, dict) for e in matrix["include"]):
        raise InputError("--matrix: expected the plan's matrix, {\"include\": [{\"family\": ...}, ...]}")
    for entry in matrix["include"]:
        if entry.get("family") not in catalogue:
            raise InputError(f"--matrix: family {quoted(entry.get('family'), 80)} is not in the catalogue")
    return matrix["include"]


def _merge(root: Path, family: str, results: Path) -> tuple[bool, list[str]]:
    """Copy the family's asv results (and the benchmark list beside them) into `results`: (any copied, the
    entries left out). Only regular files are copied (safewrite.copy_file, links never followed), so a link in
    an artifact cannot bring a file from outside it (/etc/hostname) into results/."""
    from jaxci.util import safewrite

    source = root / "results" / family
    if not (source.is_dir() and not source.is_symlink() and any(source.glob("*.json"))):
        return False, []
    skipped = []
    results.mkdir(parents=True, exist_ok=True)
    for folder, dirs, files in os.walk(source):
        here = Path(folder)
        target = safewrite.make_folder(results / family / here.relative_to(source), within=results)
        for name in sorted(files) + [d for d in dirs if (here / d).is_symlink()]:
            try:
                safewrite.copy_file(here / name, target / name, within=results)
            except (OSError, ValueError):  # a link, a FIFO, a device, an unreadable file: left out, said
                skipped.append((here / name).relative_to(root).as_posix())
    bench = root / "results" / "benchmarks.json"
    if bench.is_file() or bench.is_symlink():
        try:
            safewrite.copy_file(bench, results / "benchmarks.json", within=results)
        except (OSError, ValueError):
            skipped.append("results/benchmarks.json")
    return True, skipped


def collect(matrix: dict, incoming: Path, results: Path, catalogue: dict[str, Machine]) -> list[dict]:
    """Merge each family's artifact into results/ and say what happened to it. Families come from the
    plan's matrix and are checked against the catalogue again before they become paths. A family whose
    status file is unreadable is reported as such; the other families are still collected."""
    rows = []
    for entry in _check_matrix(matrix, catalogue):
        family = entry["family"]
        root = incoming / f"results-{family}"
        status_path = root / "run-status" / f"{family}.json"
        try:
            status = run_status.load(status_path) if status_path.is_file() else None
            outcome, detail = family_outcome(entry, status)
        except InputError as exc:
            outcome, detail = "status unreadable", f"{exc}; results are still merged if present"
        merged, skipped = _merge(root, family, results)
        if skipped:
            detail += f"; not copied (a link or not a regular file): {', '.join(quoted(n, 80) for n in skipped[:5])}"
        rows.append({"family": family, "spot": bool(entry.get("spot")), "outcome": outcome, "detail": detail,
                     "results_merged": merged})
    return rows


def outcome_markdown(rows: list[dict]) -> str:
    lines = ["| family | capacity | outcome | results merged | detail |", "|---|---|---|---|---|"]
    for r in rows:  # every cell through quoting.cell: a status file's text cannot end the row or hide the rest
        lines.append(f"| {cell(r['family'])} | {'spot' if r['spot'] else 'on-demand'} | {cell(r['outcome'])} | "
                     f"{'yes' if r['results_merged'] else 'no'} | {cell(r['detail'])} |")
    return "\n".join(lines) + "\n"

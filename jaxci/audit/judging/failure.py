"""Whose failure is it: the lecture's own, or the audit harness's (issue 69, item 5).

A lecture can fail here for a reason the repository's build does not have: this host has no network, the
audit's per-cell limit is shorter than the build's, the audit refused a `load:` file, or the kernel's packages are
not the build environment's. Such a failure is the harness's: the report prices the lecture from its published
seconds instead of counting it as broken. Each failed lecture gets one record (`failure` in the audit JSON):

    {"by": "harness" | "lecture", "cause": ..., "platform": "cpu", "cell": 9, "error": "URLError",
     "packages": ["pandas", "urllib"]}

Causes (one rule each, first that holds): `no-network` (the exception is one a missing network raises),
`cell-timeout` (a cell ran past the audit's --cell-timeout but within the build's own limit), `load-file` (a
`load:` file the audit would not read), `kernel-environment` (the repository's published build executed the
lecture: it fails only under the audit, so the kernel differs; `packages` says which installed packages its
traceback passes through), else the lecture's own (`error`, `timeout`, `dead`, `unreadable`).
"""

from __future__ import annotations

from jaxci.audit.reading.notebook import LOAD_OUTSIDE

HARNESS, LECTURE = "harness", "lecture"
NO_NETWORK, CELL_TIMEOUT, LOAD_FILE, ENVIRONMENT = "no-network", "cell-timeout", "load-file", "kernel-environment"
#: exceptions a read from the network raises where there is none (urllib, requests/urllib3, socket, pandas
#: datareader; OfflineCopyMissing: measure/offline_data.py has no local copy of the download)
NETWORK_ERRORS = frozenset({"URLError", "RemoteDataError", "ConnectionError", "gaierror", "NewConnectionError",
                            "MaxRetryError", "ConnectTimeout", "ConnectTimeoutError", "NameResolutionError",
                            "OfflineCopyMissing", "YFRateLimitError"})


def failure(verdict, built: set[str] | None = None) -> dict | None:
    """The failed lecture's record (None when it did not fail). `built`: the lectures (paths) the repository's
    published build executed successfully, when known."""
    if not verdict.failed:
        return None
    if verdict.status == "unreadable":
        load = any(LOAD_OUTSIDE in e for e in verdict.scan.errors)
        return {"by": HARNESS if load else LECTURE, "cause": LOAD_FILE if load else "unreadable"}
    platform, run = next(((p, r) for p, r in verdict.runs.items() if not r.ok), (None, None))
    if run is None:  # a static error (a syntax error the scan found), no run
        return {"by": LECTURE, "cause": verdict.status}
    cell = next((c for c in reversed(run.cells) if c.status != "ok"), None)
    record = {"platform": platform, "cell": cell.index if cell else None,
              "error": cell.error_name if cell else None, "packages": (cell.error_packages or []) if cell else []}
    cause = harness_cause(run, cell, verdict.timeout, verdict.path in (built or set()))
    return {"by": HARNESS if cause else LECTURE, "cause": cause or run.status, **record}


def harness_cause(run, cell, build_timeout: float | None, built: bool) -> str | None:
    """The harness's cause of a failed run, or None when it is the lecture's."""
    if cell is not None and cell.error_name in NETWORK_ERRORS:
        return NO_NETWORK
    if run.status == "timeout" and cell is not None and (build_timeout is None or build_timeout > cell.wall_s):
        return CELL_TIMEOUT
    if built and run.status == "error":
        return ENVIRONMENT
    return None

"""History must survive: every benchmark in the committed results/benchmarks.json keeps its asv version.

asv hashes a benchmark's source (its method, its class's setup and setup_cache) into the version, and a
result of another version is ignored by `asv publish` and the report. A lint fix, a refactor or a moved
import inside a setup would orphan every committed result of that benchmark; this test reads the versions
through asv's own discovery (no JAX: discovery imports the suites, which start nothing).
"""

from __future__ import annotations

import json

from jaxci import REPO_ROOT
from tests.committed import committed


def test_committed_benchmark_versions_are_unchanged():
    from asv_runner.discovery import disc_benchmarks

    recorded = json.loads((committed() / "benchmarks.json").read_text())
    recorded.pop("version", None)
    now = {b.name: b.version for b in disc_benchmarks(str(REPO_ROOT / "benchmarks"))}
    gone = sorted(set(recorded) - set(now))
    changed = sorted(k for k in recorded if k in now and recorded[k]["version"] != now[k])
    assert not gone, f"benchmarks removed or renamed (their history is orphaned): {gone[:5]}"
    assert not changed, f"benchmark versions changed (their history is orphaned): {changed[:5]}"

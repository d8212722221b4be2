"""The concurrency suite at CI scale in an asv sandbox: cpu x default measures N = 1..4,
the other policies on cpu and every gpu combination (on a machine without a GPU) are n/a, and the
tracked values agree with the per-worker records written to $JAXCI_ARTIFACTS."""

import ast
import itertools
import json
import math

import pytest

from jaxci.nvml import gpu_present
from tests.asvutil import result_values

pytestmark = pytest.mark.slow
TRACKS = ["track_workers_died", "track_slowdown", "track_peak_memory_mib"]


@pytest.fixture(scope="module")
def suite(ci_results):
    """{(track, n, policy, device): value} and the artifact of the session-wide CI-scale run (conftest.ci_run,
    artifacts under its root), which holds this suite; that nothing in it failed is test_suite_run's check."""
    results, _, box = ci_results
    values = {(track, *map(ast.literal_eval, combo)): value for track in TRACKS
              for combo, value in result_values(results, f"concurrency.Concurrency.{track}").items()}
    return values, json.loads((box.root / "artifacts" / "concurrency" / "concurrency.json").read_text())


def test_every_combination_has_a_value(suite):
    values, _ = suite
    from benchmarks.common import DEVICES

    assert len(values) == 3 * 4 * 4 * len(DEVICES)  # metrics x N x policies x devices (cpu, gpu, tpu)


def test_cpu_default_measured(suite):
    values, _ = suite
    for n in (1, 2, 3, 4):
        assert values[("track_workers_died", n, "default", "cpu")] == 0
        assert values[("track_slowdown", n, "default", "cpu")] > 0
        assert values[("track_peak_memory_mib", n, "default", "cpu")] > 64  # host RSS holds the 64 MiB workload


def test_policies_na_on_cpu(suite):
    values, _ = suite
    for track, n, policy in itertools.product(TRACKS, (1, 2, 3, 4), ("no-prealloc", "fraction", "platform")):
        assert math.isnan(values[(track, n, policy, "cpu")])


@pytest.mark.skipif(gpu_present(), reason="this machine has a GPU")
def test_gpu_na_without_gpu(suite):
    values, _ = suite
    gpu = [v for k, v in values.items() if k[-1] == "gpu"]
    assert len(gpu) == 3 * 4 * 4 and all(v is not None and math.isnan(v) for v in gpu)


def test_artifact_matches_tracks(suite):
    values, artifact = suite
    assert artifact["scale"] == "ci"
    (combo,) = [c for c in artifact["combinations"] if (c["policy"], c["device"]) == ("default", "cpu")]
    runs = combo["runs"]
    assert sorted(runs) == ["1", "2", "3", "4", "baseline"]
    (lone,) = runs["baseline"]["workers"]
    for n in (1, 2, 3, 4):
        workers = runs[str(n)]["workers"]
        assert len(workers) == n and all(w["cause"] == "ok" for w in workers)
        assert all(w["value"]["live_bytes"] == combo["workload"]["peak_mib"] * 2**20 for w in workers)
        assert all(w["env"]["JAX_PLATFORMS"] == "cpu" for w in workers)
        slowest = max(w["wall_s"] for w in workers)
        assert values[("track_slowdown", n, "default", "cpu")] == pytest.approx(slowest / lone["wall_s"])
        assert values[("track_peak_memory_mib", n, "default", "cpu")] == pytest.approx(
            max(w["peak_rss_mib"] for w in workers))

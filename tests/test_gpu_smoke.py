"""The GPU smoke script fails loudly without a CUDA backend, and summarises gpu combinations from results."""

import subprocess
import sys

import pytest

from jaxci.nvml import gpu_present
from tests.asvutil import REPO


@pytest.mark.skipif(gpu_present(), reason="this machine has a GPU")
def test_smoke_fails_loudly_without_cuda(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_smoke.py"), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "CUDA backend did not start" in proc.stderr
    assert not (tmp_path / "out" / "results").exists()  # nothing measured, nothing written


@pytest.mark.slow
@pytest.mark.skipif(gpu_present(), reason="this machine has a GPU")
def test_summary_counts_gpu_combinations_as_na_here(ci_run):
    sys.path.insert(0, str(REPO / "scripts"))
    from gpu_smoke import summarise

    box, machine, _ = ci_run
    first = summarise(box.results, machine)[0]
    assert first.startswith("gpu combinations: 0 ok, 0 failed,") and not first.endswith(" 0 n/a")


def test_summary_counts_only_gpu_combinations(tmp_path):
    """Param-less run facts (each suite's track_scale) and cpu combinations are not gpu combinations."""
    import math

    from tests.synth import SynthResults

    sys.path.insert(0, str(REPO / "scripts"))
    from gpu_smoke import summarise

    synth = SynthResults(tmp_path).machine("m")
    synth.add("m", "loops.track_scale", [], [], lambda: 0.0, unit="unknown")
    synth.add("m", "loops.Scan.time_warm", ["n", "device"], [[10, 100], ["cpu", "gpu"]],
              lambda n, device: 1e-3 if device == "cpu" else (math.nan if n == 10 else None))
    lines = summarise(synth.save(), "m")
    assert lines[0] == "gpu combinations: 0 ok, 1 failed, 1 n/a"
    assert len(lines) == 2 and lines[1].startswith("FAILED  loops.Scan.time_warm") and "100" in lines[1]

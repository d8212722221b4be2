"""The frozen results the model-building tests read (tests/fixtures/results/README.md says why and when)."""

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "fixtures" / "results"

"""The scales a benchmark run records (benchmarks/common.py's `track_scale`): their rank and one label for a set.
The results reader (`ResultSet.latest`), the analysis and the job prices all rank runs by it, so it lives below
them all: pure, standard library only."""

from __future__ import annotations

#: the scales a run records, least to most trustworthy for a figure ("unknown": a file without a scale record)
SCALE_RANK = {"ci": 0, "unknown": 1, "full": 2}


def scale_label(scales) -> str:
    """One label for a set of recorded scales: "full", "ci", "mixed: ci, full" or "unrecorded"."""
    scales = set(scales)
    if not scales or scales == {"unknown"}:
        return "unrecorded"
    if len(scales) == 1:
        return next(iter(scales))
    return "mixed: " + ", ".join(sorted(s if s != "unknown" else "unrecorded" for s in scales))

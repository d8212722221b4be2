"""The one bound of a job's seconds, read by every layer that checks or advises a run time: 5 days, the longest a
self-hosted runner's job may run (GitHub Actions' limit for self-hosted runners). A lecture's run time, a published
run time, a prediction, a per-cell timeout and a job's minutes are refused or capped past it (1e308 would sum to
inf in every reader). Pure: no import, no I/O."""

from __future__ import annotations

#: seconds: the longest a self-hosted runner's job may run
JOB_S = 5 * 86_400

"""Audit a lecture repository: a static scan of every lecture and, with --execute, per-cell timings, judged per
runner family. Its seams are subpackages, each saying what it owns and may import (tests/test_layout.py):
`reading` (lectures found and read, never run), `runner` (lectures run in real kernels), `judging` (the verdicts),
`writing` (Markdown, JSON, pins and patch) and `lecture_ci` (the audited repository's CI). `repo` is the pipeline
that calls them in order; benchmarks import `jaxci.audit.runner` and `jaxci.audit.repo` by those paths.
"""

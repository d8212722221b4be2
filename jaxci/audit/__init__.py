"""Audit a lecture repository: a static scan of every lecture and, with --execute, per-cell timings."""

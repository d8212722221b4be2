"""The timed kernels, as plain functions of arrays (imported by the suites inside setup, and by tests).

Modules here import JAX at the top; suite modules import them only after deciding a combination runs.
"""

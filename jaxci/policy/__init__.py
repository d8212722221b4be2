"""What we advise: the one rule behind each decision every command prints (the decision sheets, the lecture
audit, the CI audit, `jaxci env`, the jax-env action). `margins` says when a lecture wins on the GPU,
`timeouts` sizes per-cell and job timeouts (and never lowers a repository's own without a measurement),
`builds` prices one lecture build per runner family from the runner model's per-lecture predictions.

Apart from `jaxci.analysis` (what we compute from results: pure, no I/O) and `jaxci.workflows` (what this repository's
workflows call). May import jaxci.analysis, jaxci.catalogue and jaxci.workflows.jobcost; never a command, the report,
the audit or the results reader (tests/test_layout.py).
"""

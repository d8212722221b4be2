"""What we advise: the one rule behind each decision every command prints (the decision sheets, the lecture
audit, the CI audit, `jaxci env`, the jax-env action). `margins` says when a lecture wins on the GPU,
`timeouts` sizes per-cell and job timeouts (and never lowers a repository's own without a measurement),
`builds` prices one lecture build per runner family from the runner model's per-lecture predictions, `jobcost` is
the one rule for a runner job's time and price (timeout, billed seconds, dollars).

Apart from `jaxci.analysis` (what we compute from results: pure, no I/O), below `jaxci.workflows` (what this
repository's workflows call, which reads these rules). May import jaxci.analysis, jaxci.catalogue and itself; never
a command, the report, the audit, the workflows or the results reader (the import contracts in pyproject.toml).
"""

"""What this repository's workflows call (not the audit of a lecture repository's CI: audit/lecture_ci):
validating workflow inputs (`inputs`), the job matrix (`plan`), each family job's run status (`status`), merging
what the jobs brought back (`collect`), the suite list (`suites`) and the JAX/XLA environment for N kernels on one
device (`envadvice`, `jaxci env`, which a lecture repository's CI runs with jaxci installed bare: no JAX, asv or
numpy at import).

May import the runtime (catalogue, nvml), results, util, and the rules it applies: jaxci.policy (a job's time and
price: policy.jobcost; env advice's timeouts and concurrency) and jaxci.analysis; never commands, the report, the
audit or the capture (the import contracts in pyproject.toml).
"""

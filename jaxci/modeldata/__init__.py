"""The runner model's inputs read from this repository's files into jaxci.analysis's typed records: `fixed_costs`
(a notebook's fixed costs and the calibrated residual, docs/reference/). One loader per file; a file that cannot be
read is an error naming it.

Apart from jaxci.results (asv's result files) because these are not asv results, and from jaxci.analysis because
analysis does no I/O. May import jaxci.analysis, jaxci.util and the runtime; never the policy, results, workflows,
report, audit or a command (the import contracts in pyproject.toml).
"""

"""`jaxci audit --ci`: the audited lecture repository's CI itself (not what this repository's workflows call:
jaxci/workflows) (runner tier, spot, timeouts, memory policy,
versions, compilation cache), as findings with file:line evidence and a patch the maintainer can apply.

Public: `audit_ci(root, lectures)`, `lectures.audit_lectures(root)` / `lectures.from_verdicts(verdicts)`,
`render.to_markdown / to_json / summary`, and `CIReport.patch()`.
"""

from jaxci.audit.lecture_ci.core import audit_ci  # noqa: F401
from jaxci.audit.lecture_ci.report import KINDS, CIReport, Finding  # noqa: F401

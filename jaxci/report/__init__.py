"""`jaxci report`: the findings (findings.md), guidance for lecture authors (guidance.md) and the findings
page beside asv's site, all rendered from one `build.Report` computed by jaxci.analysis."""

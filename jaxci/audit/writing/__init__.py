"""Writing verdicts: the audit as Markdown and JSON (`render`), the pin list and patch a maintainer applies
(`emit`), an audit JSON read back for the report (`record`), and the shards' JSONs merged into one audit (`merge`).

May import: jaxci.audit.reading, jaxci.audit.judging, jaxci.policy, jaxci.util, jaxci.accel (which run is the
accelerator's, to head its columns), jaxci.analysis.prediction (the per-lecture prediction it writes and reads
back, pure) and, in `record`, jaxci.analysis.lecture_record (the lectures' typed view the policy reads, built once
on reading to refuse an entry it cannot read); never the runner.
"""

"""Judging lectures: the regime and recommendation of each (`classify`), on a runner family's thresholds
(`family`: measured, else predicted by the runner model), its predicted seconds on every family from what its run
measured (`predicted`; on every catalogue family from one execution: `every_family`, host time moved by the
family's host factor, `host`), and the verdict those set (`judge`).

May import: jaxci.audit.reading, jaxci.analysis, jaxci.policy, jaxci.catalogue, jaxci.results.records and
jaxci.accel (which run is the accelerator's); never the runner (a run is read through its recorded fields) nor
the writing of verdicts.
"""

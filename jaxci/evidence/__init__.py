"""Published evidence as data: the figures other people published (docs/reference/published-figures.json, each
with its source) read by one loader (`published`: the format, its version and the typed records), and turned into
the runner model's inputs (`inputs`: jaxci.analysis.evidence.Evidence, with the host probes derived from them).

Every command gives the model the same inputs through `inputs.reference()`; the report holds the model against
the same figures. No figure is read out of a document: the documents tell the story and link to the data.

May import analysis, the runtime (catalogue) and util; never results, policy, audit, report or commands.
"""

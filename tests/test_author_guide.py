"""guidance.md opens with a page for lecture authors: plain words, the per-lecture kernel pin, no benchmark ids."""

import re

from jaxci.audit.writing.emit import KERNEL
from jaxci.report.build import build
from jaxci.report.findings import guidance_md
from tests.committed import committed

RESULTS = committed()


def test_guidance_opens_with_author_page_free_of_benchmark_ids():
    text = guidance_md(build(RESULTS))
    author, _, evidence = text.partition("\n# Evidence\n")
    assert evidence, "the evidence section follows the author page"
    assert f"name: {KERNEL}" in author and '"kernelspec"' in author
    assert "lax.scan" in author and "XLA_PYTHON_CLIENT_PREALLOCATE=false" in author
    assert not re.search(r"\b(time_|track_|peakmem_)\w+|\b(dense|loops|elementwise)\.[A-Z]", author)
    assert "band" not in author and "runner model" not in author
    assert not re.search(r"\d+(\.\d+)?\s*(ms|µs|s\b|x\b)", author)  # no figures: nothing hard-coded

"""The decision questions, in the order the sheets show them: one object per question (jaxci.report.question).

Everything that shows a question reads it here: the sheets (jaxci.report.decisions) run each rule, the findings
page numbers and titles its evidence sections from it, the maintainers' pages link each row's evidence, and the
published checks beside a row are its question's `terms`. Adding a question is an entry here, its rule (a function
of a Context returning an Answer, jaxci.report.rows or a module of its own) and its test.
"""

from __future__ import annotations

from jaxci.report import rows
from jaxci.report.question import Question, Term

FP64 = Question(
    "fp64", "FP64 penalty", "FP64 penalty on the real workload shapes",
    "run any suite (every suite has float32 and float64 params)", "../runner-model.md", rows.fp64)
CROSSOVER = Question(
    "crossover", "GPU break-even size", "Size where the GPU breaks even",
    "run the dense, elementwise and loops suites on a GPU runner family "
    "(`JAXCI_MACHINE=g4dn.2xlarge bash scripts/bench.sh` there) or `scripts/gpu_smoke.py` on a lent GPU",
    "../runner-model.md", rows.crossover,
    terms=(Term("gpu", "matmul", "the GPU's warm matmul"),))
CONCURRENCY = Question(
    "concurrency", "Safe concurrency on one GPU", "Safe concurrency and memory policy",
    "run the concurrency suite on a GPU (`asv run --bench '^concurrency\\.'` on a GPU runner family)",
    "../concurrency.md", rows.concurrency)
SAMPLER = Question(
    "sampler", "Sampler configuration", "Sampler configuration",
    "run the nuts suite (`asv run --bench '^nuts\\.'`)", "../runner-model.md", rows.sampler,
    terms=(Term("cpu", "nuts", "NUTS on the CPU"), Term("gpu", "nuts", "NUTS on the GPU")))
ENVIRONMENT = Question(
    "environment", "Standard CI environment", "Standard CI environment",
    "run the compile suite (`asv run --bench '^compile\\.'`)", "../workflows.md", rows.environment,
    terms=(Term("gpu", "matmul", "the compile of a fresh jit", n=1000, first_call=True),
           Term("cpu", "matmul", "the compile of a fresh jit", n=1000, first_call=True)))
COST = Question(
    "cost", "Instance fit (cost)", "Instance fit",
    "add the machine to env_matrix/machines.toml with a sourced price, or run on a catalogue family",
    "../../audits/", rows.cost, results_are_evidence=False)
HYGIENE = Question(
    "hygiene", "Failure hygiene", "Failure hygiene",
    "run the notebooks suite (`asv run --bench '^notebooks\\.'`)", "../fail-once.md", rows.hygiene)

#: the questions in the sheets' order (a row's number is its place here, from 1)
REGISTRY: tuple[Question, ...] = (FP64, CROSSOVER, CONCURRENCY, SAMPLER, ENVIRONMENT, COST, HYGIENE)


def number(question: Question) -> int:
    """The question's number on the sheets and in the evidence headings."""
    return REGISTRY.index(question) + 1


def heading(question: Question) -> str:
    """The findings evidence section's title ("2. Size where the GPU breaks even"): its anchor is the link target."""
    return f"{number(question)}. {question.heading}"

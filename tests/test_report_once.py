"""Less, once: the repeated-sentence counter, and the findings say each model input and the
fail-once policy once."""

import re

import pytest

from jaxci.report.build import build
from jaxci.report.decisions import FAIL_ONCE
from jaxci.report.findings import findings_md
from jaxci.report.page import render
from jaxci.report.text import Notes, repeated_sentences, repeats
from tests import synth


def test_repeated_sentences_counts_each_extra_occurrence():
    a = "The GPU wins from n = 1,000 on this machine and nowhere else"
    b = "The GPU wins from n = 2,000 on this machine and nowhere else"  # another number: another fact
    text = f"{a}. {b}.\n| {a} | short |\n- {a}; ok"
    assert repeated_sentences(text) == {a: 3}
    assert repeats(text) == 2
    assert repeats("short. short. short.") == 0  # under 40 characters: not counted
    assert repeats(f"{a}.  \n{b}") == 0


def test_notes_cite_each_input_once():
    notes = Notes()
    assert notes.cite("cpu: floor 7 µs; rate A | gpu: floor 60 µs; rate A") == "cpu: I1, I2 · gpu: I3, I2"
    assert notes.cite("rate A; other") == "I2, I4"
    assert notes.md().splitlines()[2:] == ["- **I1**: floor 7 µs", "- **I2**: rate A", "- **I3**: floor 60 µs",
                                           "- **I4**: other"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return build(synth.gpu_set(tmp_path_factory.mktemp("synth")))


def test_each_model_input_and_the_fail_once_policy_said_once(report):
    md = findings_md(report)
    evidence = md[md.index("## Evidence: machines and runs"):]  # the decision sheets state their own inputs first
    for label in ("I", "C"):  # §2's model inputs, the suite cost's inputs: each listed once, cited by label
        section = (evidence[evidence.index("## 2. "):evidence.index("## 3. ")] if label == "I"
                   else evidence[evidence.index("## The benchmark suite itself"):])
        listed = re.findall(rf"^- \*\*{label}\d+\*\*: (.+)$", section, flags=re.M)
        assert listed, f"no {label} input listed"
        assert len(set(listed)) == len(listed)  # each part listed once
        rows = [line for line in section.splitlines() if line.startswith("|")]
        assert rows and not [p for p in listed if any(p in row for row in rows)]  # the tables cite labels only
    assert md.count(FAIL_ONCE) == 1
    page = render(report, md, "")
    assert page.count("jupyter-cache never caches a notebook that failed") == 1

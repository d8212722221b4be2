"""How machines are named to a reader, and the headline that says what the results can answer.

The questions are registered in one place, jaxci.report.questions (their titles, evidence anchors and the command
that would measure a missing answer), and answered by jaxci.report.decisions: a family's sheet and every measured
machine's evidence table come from the same rules. This module holds what both show around them: the anchor a
heading gets, a machine's title (a lab machine by its GPU, never as a runner family) and the headline.
"""

from __future__ import annotations

import re


def slug(heading: str) -> str:
    """The anchor GitHub gives a markdown heading (and the findings page gives its <h*> ids)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def machine_title(name: str, facts) -> str:
    """How a machine is named to a reader: a lab machine by its GPU or accelerator, never as a runner family; a TPU
    (registered as `accelerator`) is never called a GPU nor CPU only."""
    kind = facts.get("jaxci_kind", "unknown")
    gpu = facts.get("gpu", "no GPU")
    tag = ", synthetic" if is_synthetic(facts) else ""
    accelerator = facts.get("accelerator", "")
    hw = accelerator if accelerator not in ("", "unknown") else gpu if facts.has_gpu else "CPU only"
    if kind == "lab":
        return f"{_lab_label(name, gpu)} (machine `{name}`, {hw if hw != 'CPU only' else gpu}{tag})"
    if kind == "catalogue":
        return f"runner family {name} ({hw}{tag})"
    return f"{kind} machine {name} ({hw}{tag})"


def _lab_label(name: str, gpu: str) -> str:
    """The catalogue's "lab: H200" where the lab machine is catalogued, else "lab: <recorded GPU>" (whether it is
    catalogued as a lab machine is the catalogue entry's kind, not the label's words)."""
    from jaxci.catalogue import CatalogueError, load_catalogue, machine_label

    try:
        catalogue = load_catalogue(include_lab=True)
    except CatalogueError:  # an unreadable catalogue must not hide the results: fall back to the recorded GPU
        catalogue = {}
    entry = catalogue.get(name)
    return machine_label(name, catalogue) if entry is not None and entry.is_lab else f"lab: {gpu}"


def is_synthetic(facts) -> bool:
    """Result sets written by tests/synth.py say so in machine.json (cpu = "synthetic")."""
    return facts.get("cpu", "") == "synthetic"


def _short(kernel: str) -> str:
    """dense.Dense.time_warm op=matmul -> dense op=matmul."""
    bench, _, rest = kernel.partition(" ")
    parts = bench.split(".")
    return (parts[0] + (" " + rest if rest else "")).strip()


def headline(report) -> str:
    """One sentence that says, before anything else, what these results can and cannot answer."""
    gpus = [n for n, f in report.machines.items() if f.has_gpu]
    synth = sorted(n for n, f in report.machines.items() if is_synthetic(f))
    lead = f"SYNTHETIC results ({', '.join(synth)}: made by tests/synth.py, not measurements). " if synth else ""
    if not report.machines:
        return "These results hold no machine: nothing is measured yet."
    if not gpus:
        return (lead + "These results hold no GPU: the GPU questions (2 break-even, 3 concurrency, GPU FP64) are not "
                "measured yet; every GPU line below says so, never inferred from CPU data.")
    return lead + (f"These results hold {len(gpus)} GPU machine(s) ({', '.join(sorted(gpus))}) and "
                   f"{len(report.machines) - len(gpus)} without a GPU.")

"""The committed TPU capture (results/lab-tpu-v5e) in the findings: shown as a TPU's, never as evidence for a GPU or a
CPU-only runner's answers (issue 71: a TPU is never shown as a GPU)."""

from jaxci.report import decisions
from jaxci.report.build import build
from tests.committed import committed

TPU = "lab-tpu-v5e"


def test_the_tpu_machine_answers_no_other_machines_question():
    report = build(committed(), families=["g4dn.2xlarge", "c7i.2xlarge"])
    assert TPU in report.machines   # its results are read and listed
    # its CPU line is never paired with another machine's GPU line (it is no CPU-only machine)
    assert not [c for c in report.crossovers
                if TPU in (c.cpu_machine, c.gpu_machine) and c.cpu_machine != c.gpu_machine]
    # no decision sheet reads it as a CPU-only machine ("no GPU: pin to the CPU")
    assert TPU not in {s.family for s in decisions.evidence_sheets(report)}
    # a GPU family's rows never quote the TPU machine; a CPU family's may quote its host's CPU, labelled, never its TPU
    gpu, cpu = decisions.sheets(report, ["g4dn.2xlarge", "c7i.2xlarge"])
    assert all(TPU not in f"{d.decision} {d.basis}" for d in gpu.rows)
    assert all(f"{TPU} (tpu" not in f"{d.decision} {d.basis}" for d in cpu.rows)

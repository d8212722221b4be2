"""`jaxci crossover-stability`: each family's predicted crossovers on every results set (all machines, then the
GPU machines with one CPU-only machine at a time), compared as the sizes the audit decides with (once
measure/crossover_stability.py). Frozen results; no timing is asserted."""

from __future__ import annotations

from jaxci.commands import crossover_stability
from jaxci.report import crossover_stability as cs
from tests.frozen import RESULTS


def test_the_sets_are_all_machines_then_each_cpu_machine_beside_the_gpu_ones():
    sets = cs.subsets(RESULTS)
    assert list(sets.values())[0] == sorted(p.name for p in RESULTS.iterdir() if p.is_dir())
    assert all(ms[-1] not in ms[:-1] for ms in list(sets.values())[1:]) and len(sets) >= 3


def test_the_command_compares_every_set_and_says_the_largest_move(capsys):
    assert crossover_stability.main([str(RESULTS), "--families", "g4dn.2xlarge"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| g4dn.2xlarge | ")]
    assert rows and all(line.count(" | ") == out.splitlines()[0].count(" | ") for line in rows)
    assert "largest move: " in out and "compared within 1.5x" in out


def test_held_out_predicts_each_cpu_machines_smallest_size(capsys):
    assert crossover_stability.main([str(RESULTS), "--held-out"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| machine | dtype | n | measured µs |") and len(lines) > 2


def test_not_a_results_directory_is_one_line_and_exit_2(tmp_path, capsys):
    assert crossover_stability.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxci crossover-stability: ") and "no benchmarks.json" in err and err.count("\n") == 1

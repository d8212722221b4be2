"""A NUTS run's seconds on a GPU from the leapfrog steps it took (counted by the hooks on the CPU run), priced as
the loop turns the GPU runs for them.

numpyro's NUTS builds each trajectory with XLA while loops and conditionals (its iterative tree builder). On a GPU,
XLA reads a while loop's or a conditional's predicate back to the host each time it runs it: a synchronisation,
plus the few tiny kernels around it. That is what the runner model's `while` kernel measures per iteration
(loops.WhileConverge: a few small ops and a data-dependent predicate). So

    T_gpu = serial leapfrog steps x predicate reads per step x the family's while-loop turn

The serial steps: per chain, the collected iterations' mean steps x (warm-up + samples); chains one after another
(sequential, or parallel on a runner's single GPU) add, vectorized chains run in lockstep (each iteration as many
turns as its longest chain). Warm-up iterations took 0.76-1.26x the sampling iterations' mean steps in
`measure/nuts_warmup_steps.py` (three small models, warm-up 500 and 5,000): the band, 0.75-1.3.

Reads per step, counted in numpyro's tree builder (tests/test_leapfrog.py traces the pinned numpyro's and checks the
count): every step runs its subtree loop's predicate, three conditionals and the turning check's loop predicate (5);
most steps also run the two conditionals nested in the tree combination, some a turning-check turn, and each
doubling of the tree adds the outer loop's predicate, its two combining conditionals and the subtree loop's last
predicate (4). A tree of one leapfrog per doubling pays all of them: 12. Under vmap (vectorized chains) a
conditional on batched values becomes a select, which reads nothing: only the loops' predicates remain (2 .. 5).
"""

from __future__ import annotations

import math

from jaxci.audit.reading.cell_records import SamplerRun

#: predicate reads per leapfrog step: (every step, the most a step can carry), one chain at a time
READS = (5, 12)
#: the same with vectorized chains, whose conditionals are selects: only the two loops' predicates, up to a
#: turning-check turn and a doubling's two loop predicates
READS_VECTORIZED = (2, 5)
#: warm-up iterations' mean steps over the sampling iterations' (measure/nuts_warmup_steps.py, 2026-12-04)
WARMUP = (0.75, 1.3)


def serial_steps(run: SamplerRun) -> tuple[float, float, float] | None:
    """(mid, low, high) leapfrog steps the device runs one after another for one `MCMC.run` record; None without
    the hooks' count (for vectorized chains, their lockstep count)."""
    steps, collected, lockstep = run.leapfrog, run.leapfrog_iterations, run.leapfrog_lockstep
    if not steps or not collected:
        return None
    chains = max(int(run.chains or 1), 1)
    if run.vectorized:
        if not lockstep:
            return None
        per_iteration = lockstep / (collected / chains)
    else:
        per_iteration = steps / collected
    sequences = 1 if run.vectorized else chains
    sampled = per_iteration * int(run.samples or 0) * sequences
    warm = per_iteration * int(run.warmup or 0) * sequences
    return sampled + warm, sampled + WARMUP[0] * warm, sampled + WARMUP[1] * warm


def price(view, runs: list[SamplerRun], dtype: str, device: str) -> tuple[float, float, float, str] | None:
    """(mid, low, high, inputs) GPU seconds of the runs' leapfrog steps; None where a run has no count or the
    model has no while-loop turn for the device."""
    per = view.step_band("while", dtype, device)  # one while-loop turn on the family's device
    each = [(r, serial_steps(r)) for r in runs]
    counted = [(r, steps) for r, steps in each if steps is not None]
    if per is None or not counted or len(counted) < len(each):
        return None
    mid = low = high = serial = 0.0
    for run, (s_mid, s_low, s_high) in counted:
        fewest, most = READS_VECTORIZED if run.vectorized else READS
        mid += s_mid * math.sqrt(fewest * most) * per[0]
        low += s_low * fewest * per[1]
        high += s_high * most * per[2]
        serial += s_mid
    text = (f"{serial:,.0f} serial leapfrog steps (the hooks' count; warm-up at {WARMUP[0]}-{WARMUP[1]}x "
            f"the samples' mean) x predicate reads per step ({READS[0]}-{READS[1]}, vectorized chains "
            f"{READS_VECTORIZED[0]}-{READS_VECTORIZED[1]}; geometric middle) x while-loop turn "
            f"{per[0] * 1e6:.3g} µs ({per[3][:140]})")
    return mid, low, high, text

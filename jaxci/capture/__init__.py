"""GPU capture: the benchmarks that answer the seven questions, on both devices, in priority order, within
a time budget, packed into a few files that `jaxci import` merges into results/<machine>/.

Why one process with a budget: a lent GPU machine is rare and short (docs/gpu-capture.md). Each step is one
stock `asv run -E existing` over chosen parameter combinations (asv's --bench regex matches
`name(param, ...)`), so asv saves each step's results as it ends and a later failure loses one step only.
Before a step starts, its cost is estimated (process starts measured on this machine x combinations, corrected
by how far earlier steps were off); a step that cannot finish before the budget's end is not started and is
listed as not reached; a step that overruns is killed, its results file restored, and recorded. After every
step the capture is packed again into OUT (at most 8 files, each under 16 MiB), so a kill from outside still
leaves the last packed state behind.

The modules, in the order a capture uses them:

- `plan`: the steps (their combinations, questions and per-process work), in priority order;
- `carried`: what the lent machine lacks and the build machine carries to it: asv's wheels, the commit;
- `prepare`: wheels, commit, asv config, machine registration, device probes (the measured costs);
- `asvrepo`: the asv repository plugin (`SnapshotRepo`) that lets asv run on a copy without .git;
- `scheduler`: the estimates and the schedule: which steps fit the time left, and each one's deadline;
- `run`: the capture's state and one `asv run` per step, cut or killed at its deadline;
- `pack`: capture.json, summary.md, results.tar.gz and logs.tar.gz in OUT.

The command line is jaxci.commands.capture (run as `python3 scripts/gpu_capture.py`, where jaxci need not be
installed). Every module here but `asvrepo` imports only the standard library and jaxci at its top, so the
capture starts in a bare Python that gets asv only from the carried wheels; asv is imported where it is used,
after that (`asvrepo` subclasses asv's Repo: asv imports it, and `prepare` only once asv is importable).
"""

"""Question 3, decided once: how many notebooks execute at once on one GPU, under which memory policy, and how
that is written in the build engine the repository runs. Every command asks `decide` (the sheet's row 3,
`jaxci env`, the CI audit, the jax-env action's example in the README); tests/test_one_answer.py holds them
together.

The rule:
- The memory policy is the one a GPU measured keeping every worker alive (the concurrency suite), at the
  largest N it did so. Any other policy (a per-kernel fraction, the platform allocator) is offered only as
  "not measured", with the command that would measure it.
- N is that largest measured N, never more; a lecture's own measured peak may lower it (memory_advice). A
  requested N above it is flagged by every command (`beyond`), since the engine would start them all.
- No GPU measured any policy surviving: one notebook at a time.
- JAX lectures share the GPU; lectures pinned to the CPU kernel do not touch it. Whether the engine can run the
  two groups with different parallelism is stated per engine (`Engine.split`).

The engines (how each decides how many notebooks run at once, as read from their sources and runs of
Jupyter Book 1.0.4 and mystmd 1.8.3; tests/test_fail_once.py builds a book with both):
- Jupyter Book 1.x with `execute_notebooks: cache` (MyST-NB over jupyter-cache) executes one notebook at a
  time and has no setting for more (it runs Sphinx with one job); `jcache project execute --executor
  local-parallel` starts one worker per CPU, with no setting either, so on a GPU runner it is replaced by
  `--executor local-serial`.
- mystmd (Jupyter Book 2) executes max(1, CPUs - 1) documents at once unless `myst build --execute-parallel N`
  says how many; the number applies to every page alike.
- A plain nbclient script runs as many kernels as its own pool has: the pool size is the setting.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis.concurrency import Survived, rank

JB1, MYSTMD, NBCLIENT = "jupyter-book-1", "mystmd", "nbclient"
ENGINES = (JB1, MYSTMD, NBCLIENT)
ENGINE_NAMES = {JB1: "Jupyter Book 1.x", MYSTMD: "mystmd", NBCLIENT: "nbclient"}
#: the policy names of env_matrix/memory_policies.toml and what each sets, for the answer's wording
POLICY_ENV = {"no-prealloc": "XLA_PYTHON_CLIENT_PREALLOCATE=false", "default": "nothing set (JAX preallocates 75%)",
              "platform": "XLA_PYTHON_CLIENT_ALLOCATOR=platform",
              "fraction": "XLA_PYTHON_CLIENT_MEM_FRACTION=budget/N"}
MEASURE = "`asv run --bench '^concurrency\\.' --machine {family}` on the family"


@dataclass(frozen=True)
class Engine:
    """A build engine as read from a repository (or named): what runs the notebooks, and how many at once now."""

    name: str                 # JB1 | MYSTMD | NBCLIENT
    now: int | None = None    # notebooks at once as the repository is set up (None: the engine's default)
    where: str = ""           # the file and setting it was read from ("" when named, not read): `at` `shown`
    at: str = ""              # the file:line alone
    shown: str = ""           # the command as read, a code span
    per_cpu: bool = False     # jcache's local-parallel executor: one worker per CPU, no setting
    option: str = ""          # a parallel option the build command has ("sphinx-build -j"): its number is the setting


@dataclass(frozen=True)
class Answer:
    """Question 3's answer in one engine's terms."""

    engine: str
    n: int                    # notebooks at once on the GPU
    policy: str | None        # the measured memory policy (None: no GPU, or none measured)
    env: str                  # what the policy sets
    concurrency: int          # notebooks the engine runs at once once its setting is applied (jax-env's input)
    setting: str              # the engine's own setting for n, as the maintainer writes it
    split: str                # JAX lectures serialised, CPU-only ones fanned out: how, or why it cannot be said
    evidence: str             # the measurement behind n and the policy (machine, N run), or "not measured"
    beyond: str = ""          # a requested or configured N above the largest measured, flagged
    unmeasured: str = ""      # the policies offered only as not measured, and how to measure them


def best(survived: list[Survived]) -> Survived | None:
    """The policy that kept every worker alive at the largest N (allocation on demand first on a tie)."""
    return min(survived, key=rank, default=None)


def setting(engine: Engine, n: int, vcpu: int | None = None) -> str:
    """How `n` notebooks at once is written in the engine."""
    if engine.option:
        return f"`{engine.option} {n}`"
    if engine.name == JB1:
        if engine.per_cpu:
            return (f"`jcache project execute --executor local-serial` (local-parallel starts one kernel per CPU, "
                    f"{vcpu or 'every'} here, with no setting)")
        return "nothing to set (it executes one notebook at a time)"
    if engine.name == MYSTMD:
        return f"`myst build --execute --execute-parallel {n}`"
    return f"a pool of {n} kernel(s) in the script that runs it"


def split(engine: Engine, n: int) -> str:
    """JAX lectures at most `n` at once while lectures pinned to the CPU kernel fan out: in the engine's terms."""
    if engine.name == JB1 and not engine.option:
        return "cannot be expressed: every notebook runs one at a time, CPU-only ones included"
    if engine.name == MYSTMD:
        return (f"cannot be expressed: `--execute-parallel` is one number for every page, so CPU-only pages also "
                f"run {n} at once")
    if engine.option:
        return f"cannot be expressed: `{engine.option}` is one number for every notebook"
    return f"two pools: GPU-kernel lectures {n} at once, lectures pinned to the CPU kernel one per CPU core"


def runs_at_once(engine: Engine, n: int) -> int:
    """Notebooks the engine runs at once once `setting(engine, n)` is applied: Jupyter Book 1.x one."""
    return 1 if engine.name == JB1 and not engine.option else n


def decide(survived: list[Survived], engine: Engine, *, has_gpu: bool, family: str, vcpu: int | None = None,
           requested: int | None = None, fit: int | None = None) -> Answer:
    """Question 3 for `family` built by `engine`. `survived`: what GPUs measured (Survived); `fit`: how many kernels
    of a measured peak fit the device's memory (None: not measured); `requested`: an N a user or the repository
    asks for, flagged when above the largest measured."""
    if not has_gpu:
        n = vcpu or 1
        return Answer(engine.name, n, None, "none (no GPU)", runs_at_once(engine, n), setting(engine, n, vcpu), "",
                      "no GPU: bounded by the runner's CPUs and memory, not measured")
    top = best(survived)
    measure = MEASURE.format(family=family)
    if top is None:
        return Answer(engine.name, 1, None, "none measured", 1, setting(engine, 1, vcpu), split(engine, 1),
                      f"not measured: no GPU policy measured keeping every worker alive; measure: {measure}",
                      _beyond(requested, engine, 1, "no GPU measured more than one"))
    n = top.n if fit is None else max(1, min(top.n, fit))
    evidence = (f"measured: `{top.policy}` kept every worker alive up to N = {top.n} on {top.machine} (the suite "
                f"ran it up to N = {top.ran_up_to})" + (f"; {fit} of the largest lecture's measured GPU peak fit"
                                                         if fit is not None else ""))
    others = sorted({p for p in POLICY_ENV if p not in (top.policy, "default")})
    unmeasured = (f"not measured: {', '.join(f'`{p}`' for p in others)} on a GPU, and N above {top.ran_up_to}; "
                  f"measure: {measure}")
    cap = f"the largest N a GPU measured surviving is {top.n} (`{top.policy}` on {top.machine})"
    return Answer(engine.name, n, top.policy, POLICY_ENV.get(top.policy, top.policy), runs_at_once(engine, n),
                  setting(engine, n, vcpu), split(engine, n), evidence, _beyond(requested, engine, n, cap, vcpu),
                  unmeasured)


def _beyond(requested: int | None, engine: Engine, n: int, cap: str, vcpu: int | None = None) -> str:
    """A flag when more notebooks would run at once than measured (asked for, or as the engine is set up)."""
    now = requested if requested is not None else engine.now
    if engine.per_cpu and now is None:
        now = vcpu
    if now is None or now <= n:
        return ""
    source = "requested" if requested is not None else f"as set up ({engine.where})" if engine.where else "default"
    return f"{now} notebooks at once ({source}) is above {n}: {cap}; above it is not measured"

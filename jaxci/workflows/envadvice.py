"""`jaxci env`'s model: the JAX/XLA environment for N notebook kernels sharing one device, with its reasons.

The model (stated, so the advice can be checked):
- A kernel needs its measured peak P MiB of device memory (from the concurrency suite's
  track_peak_memory_mib, or given). The kernels together may use the budget B (a fraction of device
  memory D, env_matrix/memory_policies.toml); the rest, (1 - B) x D, is left for what lives outside JAX's
  allocator (CUDA contexts, library workspaces), which this model does not measure.
- N kernels fit when N x P <= B x D, the fraction f(N) the "fraction" policy sets for N kernels, times D,
  holds P, and N x f(N) <= 1 (f is rounded down to hundredths, so N <= 100 x B). The safe N is the largest
  N that fits. Asking for more kernels than fit is an error (exit 2), never an environment sized for fewer:
  the engine would still start all of them, and their slices would add up to more than the device.
- One kernel whose peak fits JAX's default preallocation (75% of D), with a budget of at least 75%: the
  default policy (a smaller budget gets the fraction policy, so the budget holds). Several kernels:
  the "fraction" policy, each kernel preallocating its own slice, so none can take another's memory
  (under the default the first kernel takes 75%, which is how incident 3 began). Several kernels with
  no measured peak: "no-prealloc", allocation on demand, safe N unknown.
- Lectures pinned to CPU: JAX_PLATFORMS=cpu and no memory variables (they act only on the GPU backend).
- Per-cell timeout: the one rule (jaxci.policy.timeouts.cell_timeout) on the slowest cell x the measured
  slowdown at N when both are known: 3x, rounded up to a minute, 60 s .. 5 days. Without a cell time, none:
  the repository keeps its own per-cell timeout (no built-in number ever replaces it; the `cell-timeout`
  output is empty).
- Inputs are finite numbers in stated ranges (device and peak at most 4 TiB, at most 1,024 kernels, the
  slowest cell at most a day); anything else is refused with the option and the value named.
- Device memory: given, else the catalogue's figure for the machine, else GPU 0 as NVML reports it.
Pure Python: no JAX, no NumPy; asv is imported only to read a results directory (jaxci.results.records).
The command line is jaxci/commands/env.py.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shlex
from dataclasses import asdict, dataclass, field, replace

from jaxci.catalogue import MemoryPolicy, load_policies
from jaxci.policy import timeouts
from jaxci.util.validate import InputError, number, one_line, quoted
from jaxci.workflows.device_memory import (
    GIVE_DEVICE,
    AdviceError,
    catalogue_device_mib,
    known_machine,
    mib,
    nvml_device_mib,
)

#: JAX preallocates this share of GPU memory by default (JAX docs, "GPU memory allocation").
JAX_DEFAULT_PREALLOCATE = 0.75
#: Largest device (and peak) taken as real, MiB: 4 TiB; no accelerator has more, so a larger figure is a typo.
MAX_DEVICE_MIB = 4 * 1024 * 1024
#: Most kernels on one runner: a lecture build runs one per notebook at most; more is a typo.
MAX_KERNELS = 1024
#: Longest slowest cell taken as real (a day), and the longest timeout recommended (5 days, the limit of a
#: self-hosted runner's job; GitHub-hosted jobs stop at 6 hours).
MAX_SLOWEST_CELL_S = 86_400
MAX_CELL_TIMEOUT_S = timeouts.MAX_CELL_S
#: Relative slack on "a slice holds the peak": 0.29 x 10,000 MiB is 2,900.0000000000005 in binary floats.
_SLACK = 1e-9
FORMATS = ("text", "yaml", "github", "shell", "json")
#: `--policy measured`: the memory policy a GPU measured keeping every worker alive (docs/concurrency.md)
MEASURED = "measured"
CONCURRENCY_KEY = "concurrency.Concurrency.{}"
#: What the compile suite measured the persistent cache with (benchmarks/compile.py CACHE_CHILD): every
#: compilation cached. JAX's own default (1 s) keeps a lecture's compiles (tens to hundreds of ms) out of the
#: cache, so the cache directory alone saves nothing.
CACHE_THRESHOLDS = {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}


@dataclass(frozen=True)
class Advice:
    policy: str  # a memory policy of env_matrix/, or "cpu" when pinned to CPU
    reason: str
    kernels: int  # requested
    safe_kernels: int | None  # None when not known (no peak) or not a device-memory question (CPU)
    fraction: float | None  # the per-kernel memory fraction the policy sets, if it sets one
    env: dict[str, str]
    cell_timeout_s: int | None    # None: no cell time given, the repository keeps its own
    cell_timeout_reason: str
    notes: tuple[str, ...] = ()
    inputs: dict = field(default_factory=dict)
    safe_fraction: float | None = None  # XLA_PYTHON_CLIENT_MEM_FRACTION at which safe_kernels hold
    beyond: str = ""  # kernels above the largest N a GPU measured surviving (jaxci.policy.concurrency), flagged

    def as_dict(self) -> dict:
        return asdict(self)

    def safe_text(self) -> str:
        """'4 (each at XLA_PYTHON_CLIENT_MEM_FRACTION=0.22)': a safe N is only safe at its own fraction."""
        if self.safe_kernels is None:
            return "unknown"
        if self.safe_fraction is None:
            return str(self.safe_kernels)
        text = f"{self.safe_kernels} (each at XLA_PYTHON_CLIENT_MEM_FRACTION={self.safe_fraction:.2f})"
        if self.fraction is not None and self.safe_kernels != self.kernels:
            text += f"; this environment is sized for {self.kernels} at {self.fraction:.2f}"
        return text


@dataclass(frozen=True)
class _Choice:
    """One case of the model's answer (CPU, no peak, measured peak), before the common variables are added."""

    policy: str
    env: dict[str, str]
    reason: str
    safe: int | None = None
    safe_fraction: float | None = None  # the fraction the safe N holds at (each of safe N kernels gets it)
    fraction: float | None = None
    notes: tuple[str, ...] = ()


def _fraction(policy: MemoryPolicy, n: int, budget: float) -> float:
    return float(policy.environment(n, budget)["XLA_PYTHON_CLIENT_MEM_FRACTION"])


def _fits(n: int, peak_mib: float, device_mib: float, budget: float, policy: MemoryPolicy) -> bool:
    f = _fraction(policy, n, budget)
    return (n * peak_mib <= budget * device_mib * (1 + _SLACK) and f * device_mib >= peak_mib * (1 - _SLACK)
            and n * f <= 1.0)


def _at_most(quotient: float, cap: int) -> int:
    """floor(quotient), capped before the floor: a subnormal peak makes the quotient inf, which floor refuses."""
    return cap if quotient >= cap else math.floor(quotient)


def safe_kernels(peak_mib: float, device_mib: float, budget: float, fraction_policy: MemoryPolicy) -> int:
    """The largest N with N x peak within budget x device, the policy's fraction f(N) x device holding one
    peak, and N x f(N) <= 1 (the slices together must fit on the device, or the last kernel cannot
    preallocate). The search is bounded: f is in hundredths, so no more than 100 x budget kernels get a
    slice at all, however small the peak."""
    n = _at_most(budget * device_mib / peak_mib + _SLACK, math.floor(round(budget * 100, 9)))
    while n > 0 and not _fits(n, peak_mib, device_mib, budget, fraction_policy):
        n -= 1
    return n


def _validate(kernels, peak_mib, device_mib, budget, pin_cpu):
    if not isinstance(kernels, int) or isinstance(kernels, bool) or not 1 <= kernels <= MAX_KERNELS:
        raise AdviceError(f"--kernels {kernels!r}: the number of concurrent kernels must be an integer in "
                          f"[1, {MAX_KERNELS}]")
    try:
        number("--memory-budget", budget, low=0.01, high=1, low_inclusive=True,
               unit="(a fraction of device memory, in hundredths)")
        if peak_mib is not None:
            number("--peak-mib", peak_mib, low=0, high=MAX_DEVICE_MIB, unit="MiB (a kernel's peak device memory)")
        if device_mib is not None:
            number("--device-memory-mib", device_mib, low=0, high=MAX_DEVICE_MIB, unit="MiB")
    except InputError as exc:
        raise AdviceError(str(exc)) from None
    if pin_cpu:
        return
    if device_mib is None:
        raise AdviceError(f"device memory unknown: {GIVE_DEVICE} for lectures pinned to CPU")
    if peak_mib is not None and peak_mib > device_mib:
        raise AdviceError(f"peak {mib(peak_mib)} per kernel is larger than the device ({mib(device_mib)}): "
                          "no policy can run it; pin the lecture to CPU or use a larger GPU")
    if peak_mib is not None and peak_mib > budget * device_mib:
        raise AdviceError(f"peak {mib(peak_mib)} per kernel exceeds the memory budget {budget:.2f} x "
                          f"{mib(device_mib)} = {mib(budget * device_mib)}: raise --memory-budget or use a "
                          "larger GPU")


def _timeout(slowest_cell_s, slowdown):
    if slowest_cell_s is None:
        return None, ("not measured: keep the repository's own per-cell timeout (no advice lowers it without a "
                      "measurement); pass --slowest-cell-s from a measured run")
    try:
        number("--slowest-cell-s", slowest_cell_s, low=0, high=MAX_SLOWEST_CELL_S, unit="seconds")
    except InputError as exc:
        raise AdviceError(str(exc)) from None
    factor = slowdown if slowdown and math.isfinite(slowdown) and slowdown > 1 else 1.0
    how = f"x measured slowdown {factor:.2f} at this N" if factor > 1 else "(slowdown at this N not measured)"
    seconds = timeouts.cell_timeout(slowest_cell_s * factor)
    wanted = timeouts.CELL_MARGIN * slowest_cell_s * factor
    if wanted > MAX_CELL_TIMEOUT_S:
        return seconds, (f"{timeouts.CELL_MARGIN:g} x slowest cell {slowest_cell_s:g} s {how} = {wanted:.3g} s, "
                         f"capped at {MAX_CELL_TIMEOUT_S} s (5 days, the longest a self-hosted runner's job may run)")
    return seconds, f"{timeouts.rule_text()}: slowest cell {slowest_cell_s:g} s {how}"


# ---- the model's three cases ----------------------------------------------------------------------------

def _pinned_to_cpu() -> _Choice:
    return _Choice("cpu", {"JAX_PLATFORMS": "cpu"},
                   "pinned to CPU: JAX_PLATFORMS=cpu keeps JAX off the GPU; the XLA memory variables act only on "
                   "the GPU backend, so none is set",
                   notes=("host memory and CPU cores are not modelled: N kernels share the runner's cores",))


def _without_peak(kernels: int, budget: float, policies: dict[str, MemoryPolicy]) -> _Choice:
    """No measured peak: the default for one kernel (or its budget as a fraction), else allocation on demand."""
    notes = ("per-kernel peak not measured: safe N unknown",)
    if kernels == 1 and budget < JAX_DEFAULT_PREALLOCATE:
        env = policies["fraction"].environment(1, budget)
        fraction = float(env["XLA_PYTHON_CLIENT_MEM_FRACTION"])
        return _Choice("fraction", env, f"one kernel and a budget of {budget:.2f}, below JAX's default "
                       f"preallocation of 75%: the kernel preallocates {fraction:.2f} of the device instead",
                       fraction=fraction, notes=notes)
    if kernels == 1:
        return _Choice("default", dict(policies["default"].env),
                       "one kernel on the device: JAX's default (preallocate 75%) is the fastest allocator and "
                       "nothing else competes for the memory", notes=notes)
    return _Choice("no-prealloc", dict(policies["no-prealloc"].env),
                   f"{kernels} kernels and no measured peak: allocate on demand so no kernel holds memory it "
                   "does not use (under the default the first kernel takes 75% of the device and a later one "
                   "can abort, incident 3); measure the peak with the concurrency suite for a safe N", notes=notes)


def _safe_or_refuse(kernels: int, peak_mib: float, device_mib: float, budget: float,
                    policies: dict[str, MemoryPolicy]) -> int:
    """The safe N; refused when not even one kernel's slice holds the peak, or when `kernels` exceeds it."""
    safe = safe_kernels(peak_mib, device_mib, budget, policies["fraction"])
    if safe == 0:
        f1 = _fraction(policies["fraction"], 1, budget)
        raise AdviceError(f"--peak-mib {peak_mib:g}: one kernel's slice under the budget {budget:g} is "
                          f"{f1:.2f} x {mib(device_mib)} = {mib(f1 * device_mib)} (fractions are set in "
                          "hundredths, rounded down), smaller than the peak: raise --memory-budget")
    if kernels > safe:
        raise AdviceError(f"--kernels {kernels}: {kernels} kernels of peak {mib(peak_mib)} do not fit the budget "
                          f"{budget:.2f} x {mib(device_mib)} = {mib(budget * device_mib)} (each needs its own "
                          f"slice of at least its peak); at most {safe} fit: run {safe} at once, or measure a "
                          "smaller peak, or use a larger GPU")
    return safe


def _with_peak(kernels: int, peak_mib: float, device_mib: float, budget: float,
               policies: dict[str, MemoryPolicy]) -> _Choice:
    """A measured peak: the default for one kernel it fits, else each kernel its own slice (fraction)."""
    safe = _safe_or_refuse(kernels, peak_mib, device_mib, budget, policies)
    safe_fraction = _fraction(policies["fraction"], safe, budget)
    default_mib = JAX_DEFAULT_PREALLOCATE * device_mib
    if kernels == 1 and peak_mib <= default_mib and budget >= JAX_DEFAULT_PREALLOCATE:
        return _Choice("default", dict(policies["default"].env),
                       f"one kernel of peak {mib(peak_mib)}: JAX's default preallocation of 75% "
                       f"({mib(default_mib)}) holds it and nothing else competes", safe=safe,
                       safe_fraction=safe_fraction)
    env = policies["fraction"].environment(kernels, budget)
    fraction = float(env["XLA_PYTHON_CLIENT_MEM_FRACTION"])
    slice_mib = fraction * device_mib
    reason = (f"{kernels} kernel(s) of peak {mib(peak_mib)} need {mib(kernels * peak_mib)}, within the budget "
              f"{budget:.2f} x {mib(device_mib)} = {mib(budget * device_mib)}: each kernel preallocates "
              f"its own {fraction:.2f} x {mib(device_mib)} = {mib(slice_mib)}, which holds its peak, "
              "so no kernel can take another's memory")
    if kernels > 1:
        reason += (f" (under JAX's default the first kernel would take 75% = {mib(default_mib)} and leave "
                   f"{mib(device_mib - default_mib)} to the other {kernels - 1}: incident 3)")
    outside = device_mib - kernels * slice_mib
    note = (f"{mib(outside)} stays outside the kernels' pools for CUDA contexts and library workspaces "
            f"({mib(outside / kernels)} per kernel; not measured here)")
    return _Choice("fraction", env, reason, safe=safe, fraction=fraction, notes=(note,), safe_fraction=safe_fraction)


def _on_demand(kernels: int, peak_mib: float, device_mib: float, budget: float,
               policies: dict[str, MemoryPolicy]) -> _Choice:
    """Several kernels with a measured peak, under the policy a GPU measured keeping every worker alive
    (allocation on demand): refused when their peaks together exceed the budget; the fraction policy is named
    as the unmeasured alternative."""
    by_memory = budget * device_mib / peak_mib * (1 + _SLACK) if peak_mib > 0 else math.inf
    safe = _at_most(by_memory, MAX_KERNELS)
    if kernels > safe:
        raise AdviceError(f"--kernels {kernels}: {kernels} kernels of peak {mib(peak_mib)} do not fit the budget "
                          f"{budget:.2f} x {mib(device_mib)} = {mib(budget * device_mib)}; at most {safe} fit: "
                          f"run {safe} at once, or measure a smaller peak, or use a larger GPU")
    reason = (f"{kernels} kernels of peak {mib(peak_mib)} need {mib(kernels * peak_mib)}, within the budget "
              f"{budget:.2f} x {mib(device_mib)} = {mib(budget * device_mib)}: each allocates on demand "
              "(the policy a GPU measured keeping every worker alive), so none holds memory it does not use "
              "(under JAX's default the first kernel takes 75% of the device: incident 3)")
    note = ("not measured on a GPU: the `fraction` policy (each kernel preallocates budget/N, `--policy fraction`); "
            "measure it with `asv run --bench '^concurrency\\.'` on the family")
    return _Choice("no-prealloc", dict(policies["no-prealloc"].env), reason, safe=safe, notes=(note,))


def recommend(kernels: int, *, peak_mib: float | None = None, device_mib: float | None = None,
              pin_cpu: bool = False, budget: float, policies: dict[str, MemoryPolicy], cache_dir: str,
              slowest_cell_s: float | None = None, slowdown: float | None = None,
              peak_source: str = "given", policy: str = MEASURED) -> Advice:
    """The recommended environment for `kernels` concurrent kernels (see the module docstring's model).
    `policy`: MEASURED (the policy a GPU measured keeping every worker alive: allocation on demand), or
    "fraction" (each kernel its own preallocated slice: a model no GPU has run; said so in the notes)."""
    _validate(kernels, peak_mib, device_mib, budget, pin_cpu)
    if policy not in (MEASURED, "fraction"):
        raise AdviceError(f"--policy {quoted(policy, 40)}: expected {MEASURED} or fraction")
    inputs = dict(kernels=kernels, peak_mib=peak_mib, peak_source=peak_source, device_mib=device_mib,
                  pin_cpu=pin_cpu, budget=budget, slowest_cell_s=slowest_cell_s, slowdown=slowdown, policy=policy)
    if pin_cpu:
        choice = _pinned_to_cpu()
    elif peak_mib is None:
        choice = _without_peak(kernels, budget, policies)
    elif device_mib is None:  # never: _validate refuses an unknown device memory unless pinned to the CPU
        raise AdviceError(f"device memory unknown: {GIVE_DEVICE}")
    elif policy == "fraction" or kernels == 1:
        choice = _with_peak(kernels, peak_mib, device_mib, budget, policies)
    else:
        choice = _on_demand(kernels, peak_mib, device_mib, budget, policies)
    notes = choice.notes
    if peak_mib is not None and not pin_cpu and choice.policy == "fraction":
        notes += (f"model: N kernels fit when N x peak <= budget x device memory and each kernel's slice holds "
                  f"its peak; safe N = {choice.safe}",)
    cell_timeout, timeout_reason = _timeout(slowest_cell_s, slowdown)
    env = {**choice.env, "JAX_COMPILATION_CACHE_DIR": cache_dir, **CACHE_THRESHOLDS, "JAX_TRACEBACK_FILTERING": "off"}
    return Advice(policy=choice.policy, reason=choice.reason, kernels=kernels, safe_kernels=choice.safe,
                  safe_fraction=choice.safe_fraction,
                  fraction=choice.fraction, env=env, cell_timeout_s=cell_timeout,
                  cell_timeout_reason=timeout_reason, notes=notes, inputs=inputs)


# ---- measured inputs from asv results -------------------------------------------------------------------

def read_concurrency(results_dir: str, machine: str) -> dict[tuple, float]:
    """The concurrency tracks of the newest result file of `machine` that has them:
    {(track, n_workers, policy, device): value}, finite values only. Read through jaxci.results.records
    (asv's own API), imported here so that `jaxci env` without --results never imports asv."""
    try:
        import asv  # noqa: F401  records needs it; say so before reading anything
    except ImportError:
        raise AdviceError("reading --results needs asv (pip install 'jax-ci-bench[bench]'); "
                          "or give --peak-mib") from None
    from jaxci.analysis.concurrency import workers  # a count of kernels, as the grid reads it
    from jaxci.results.records import ResultsError, load_results, loader_reason

    if not os.path.isdir(os.path.join(results_dir, machine)):
        raise AdviceError(f"--results {results_dir}: no results for machine {machine!r} there")
    try:
        loaded = load_results(results_dir)
    except ResultsError as exc:
        raise AdviceError(f"--results {results_dir}: {exc}") from None
    by_file: dict[str, list] = {}
    for rec in loaded.records:
        if rec.machine == machine and rec.benchmark.startswith(CONCURRENCY_KEY.format("")):
            by_file.setdefault(rec.file, []).append(rec)
    if by_file:
        newest = max(by_file, key=lambda f: (by_file[f][0].date, f))
        values = {(rec.method, *rec.params.values()): rec.value for rec in by_file[newest]
                  if rec.ok and math.isfinite(rec.value) and workers(rec.params.get("n_workers")) is not None}
        if values:
            return values
    folder = os.path.join(results_dir, machine)
    why = next((f" ({loader_reason(e, results_dir)})" for e in loaded.errors if folder in e), "")
    raise AdviceError(f"--results {results_dir}: machine {machine!r} has no measured concurrency results{why}")


def measured_peak(values: dict[tuple, float]) -> float | None:
    """The largest per-kernel GPU peak over every measured policy and N (conservative)."""
    peaks = [v for (track, _, _, device), v in values.items()
             if track == "track_peak_memory_mib" and device == "gpu"]
    return max(peaks) if peaks else None


def _measured_at(advice: Advice, values: dict[tuple, float], kernels: int, machine: str,
                 pin_cpu: bool) -> tuple[float | None, str]:
    """The measured slowdown of the recommended policy at this N (the suite measures N <= 4), and a note
    of how many of its workers died there."""
    n, device = min(kernels, 4), "cpu" if pin_cpu else "gpu"
    policy = "default" if advice.policy == "cpu" else advice.policy
    died = values.get(("track_workers_died", n, policy, device))
    seen = f"{died:g} of {n} worker(s) died" if died is not None else "not measured"
    return (values.get(("track_slowdown", n, policy, device)),
            f"measured on {machine}, {policy} on {device} at n={n}: {seen}")


def gpu_survival(results_dir) -> tuple[list, str]:
    """What GPUs measured keeping every worker alive (jaxci.analysis.concurrency.Survived, most kernels first)
    in an asv results directory, and where that was read; ([], why) when it cannot be read."""
    try:
        import asv  # noqa: F401  records needs it
    except ImportError:
        return [], f"{results_dir} not read (asv is not installed)"
    from jaxci.analysis.concurrency import grid, survived_on_gpu
    from jaxci.results.records import ResultsError, load_results

    if not os.path.isdir(results_dir):
        return [], f"{results_dir} not read (no such folder)"
    try:
        loaded = load_results(results_dir)
    except ResultsError as exc:
        return [], f"{results_dir} not read ({one_line(exc, 200)})"
    return survived_on_gpu(grid(loaded.records)), f"read from {results_dir}"


def _flag_beyond(advice: Advice, kernels: int, evidence: str | None, machine: str | None) -> Advice:
    """The one rule's flag (jaxci.policy.concurrency.decide) on N above the largest N a GPU measured surviving."""
    if advice.policy == "cpu" or kernels == 1 or evidence is None:
        return advice
    from jaxci.policy import concurrency

    survived, where = gpu_survival(evidence)
    by_memory = advice.safe_kernels if advice.policy != "fraction" else None  # a fraction's safe N is its model's
    answer = concurrency.decide(survived, concurrency.Engine(concurrency.NBCLIENT), has_gpu=True,
                                family=machine or "the family", requested=kernels, fit=by_memory)
    if not survived:
        return replace(advice, beyond=f"{kernels} kernels at once: no GPU survival measurement read ({where}): "
                                      "not measured at any N")
    ran = [s for s in survived if s.policy == advice.policy]
    seen = (f"measured ({where}): `{ran[0].policy}` kept every worker alive up to N = {ran[0].n} on {ran[0].machine}"
            if ran else f"not measured: no GPU ran `{advice.policy}` ({where})")
    safe = answer.n if by_memory is not None else advice.safe_kernels
    return replace(advice, beyond=answer.beyond, safe_kernels=safe, notes=(*advice.notes, seen))


def advise(kernels: int, *, cache_dir: str, machine: str | None = None, results: str | None = None,
           peak_mib: float | None = None, device_mib: float | None = None, pin_cpu: bool = False,
           memory_budget: float | None = None, slowest_cell_s: float | None = None, policy: str = MEASURED,
           evidence: str | None = None) -> Advice:
    """`jaxci env`'s answer from what a user gives: the inputs it lacks come from the catalogue (device
    memory), NVML (device memory, when neither it nor a machine is given) and asv results (peak, slowdown)."""
    policies, default_budget = load_policies()
    budget = default_budget if memory_budget is None else memory_budget
    if results and not machine:
        raise AdviceError("--results needs --machine: the asv machine whose results to read")
    notes = []
    if machine is not None:
        family = known_machine(machine, results)
        if family is not None and device_mib is None and not pin_cpu:
            device_mib, note = catalogue_device_mib(family, results)
            notes += [note] if note else []
    elif device_mib is None and not pin_cpu:
        device_mib, note = nvml_device_mib() or (None, None)
        notes += [note] if note else []
    peak, peak_source, values = peak_mib, "given", {}
    if results and machine:
        values = read_concurrency(results, machine)
        if peak is None and not pin_cpu:
            peak = measured_peak(values)
            if peak is not None:
                peak_source = f"measured: largest gpu track_peak_memory_mib in {results}/{machine}"
    ask = functools.partial(recommend, kernels, peak_mib=peak, device_mib=device_mib, pin_cpu=pin_cpu, budget=budget,
                            policies=policies, cache_dir=cache_dir, slowest_cell_s=slowest_cell_s,
                            peak_source=peak_source, policy=policy)
    advice = ask()
    if values and machine:
        slowdown, note = _measured_at(advice, values, kernels, machine, pin_cpu)
        if slowdown is not None:
            advice = ask(slowdown=slowdown)
        notes.append(note)
    untried = _untried_on_gpu(advice, values) if evidence is None else None
    notes += [untried] if untried else []
    advice = _flag_beyond(advice, kernels, evidence, machine)
    return replace(advice, notes=(*advice.notes, *notes)) if notes else advice


def _untried_on_gpu(advice: Advice, values: dict[tuple, float]) -> str | None:
    """A note when the recommended GPU policy has no GPU run behind it in the results read (or none were)."""
    if advice.policy in ("cpu", "default"):
        return None
    ran = any(policy == advice.policy and device == "gpu" for (_, _, policy, device) in values)
    if ran:
        return None
    where = "in the results read" if values else "(no --results given)"
    return (f"the {advice.policy!r} policy has no GPU run of the concurrency suite {where}: the advice follows "
            "the model above, not a measurement of it")


# ---- rendering ------------------------------------------------------------------------------------------

def _cell(advice: Advice) -> str:
    return "keep the repository's own" if advice.cell_timeout_s is None else f"{advice.cell_timeout_s} s"


def render(advice: Advice, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(advice.as_dict(), indent=2)
    if fmt == "github":  # lines for $GITHUB_ENV: a newline in a value would let it set another variable
        bad = [k for k, v in advice.env.items() if "\n" in v or "\r" in v or "=" in k]
        if bad:
            raise AdviceError(f"cannot write {', '.join(bad)} as a $GITHUB_ENV line: a newline in the value")
        return "\n".join(f"{k}={v}" for k, v in advice.env.items())
    head = [f"policy: {advice.policy}", f"why: {advice.reason}",
            f"kernels: {advice.kernels} requested, safe: {advice.safe_text()}",
            *([f"flag: {advice.beyond}"] if advice.beyond else []),
            f"per-cell timeout: {_cell(advice)} ({advice.cell_timeout_reason})",
            *(f"note: {n}" for n in advice.notes)]
    if fmt == "yaml":
        return "\n".join([*(f"# {line}" for line in head), "env:",
                          *(f"  {k}: {json.dumps(v)}" for k, v in advice.env.items())])
    if fmt == "shell":
        return "\n".join([*(f"# {line}" for line in head),
                          *(f"export {k}={shlex.quote(v)}" for k, v in advice.env.items())])
    return "\n".join([*head, "env:", *(f"  {k}={v}" for k, v in advice.env.items())])


def render_outputs(advice: Advice) -> str:
    """The jax-env action's step outputs, as $GITHUB_OUTPUT lines (a newline would forge another output)."""
    safe = "" if advice.safe_kernels is None else str(advice.safe_kernels)
    cell = "" if advice.cell_timeout_s is None else str(advice.cell_timeout_s)
    outputs = {"policy": advice.policy, "safe-kernels": safe, "cell-timeout": cell,
               "cache-dir": advice.env["JAX_COMPILATION_CACHE_DIR"], "beyond-measured": advice.beyond}
    bad = [k for k, v in outputs.items() if "\n" in v or "\r" in v]
    if bad:
        raise AdviceError(f"cannot write {', '.join(bad)} as a $GITHUB_OUTPUT line: a newline in the value")
    return "\n".join(f"{k}={v}" for k, v in outputs.items())

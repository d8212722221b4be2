"""`jaxci env`: the JAX/XLA environment for N notebook kernels sharing one device, with its reasons.

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
- Per-cell timeout: 3 x the slowest cell x the measured slowdown at N when both are known, rounded up to
  a minute, at most 5 days (the longest a self-hosted runner's job may run); else 600 s, the shortest
  per-cell timeout the lecture series use.
- Inputs are finite numbers in stated ranges (device and peak at most 4 TiB, at most 1,024 kernels, the
  slowest cell at most a day); anything else is refused with the option and the value named.
Pure Python: no JAX, no NumPy; asv is imported only to read a results directory.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from dataclasses import asdict, dataclass, field, replace

from jaxci.catalogue import CatalogueError, MemoryPolicy, get_machine, load_catalogue, load_policies
from jaxci.util.validate import InputError, machine_name, number

#: JAX preallocates this share of GPU memory by default (JAX docs, "GPU memory allocation").
JAX_DEFAULT_PREALLOCATE = 0.75
#: Per-cell timeout when no cell time is known: the shortest in use by the lecture series (incidents.md).
DEFAULT_CELL_TIMEOUT_S = 600
#: Project policy: a cell may take this many times its measured time (x slowdown at N) before it is stopped.
TIMEOUT_MARGIN = 3.0
#: Largest device (and peak) taken as real, MiB: 4 TiB; no accelerator has more, so a larger figure is a typo.
MAX_DEVICE_MIB = 4 * 1024 * 1024
#: Most kernels on one runner: a lecture build runs one per notebook at most; more is a typo.
MAX_KERNELS = 1024
#: Longest slowest cell taken as real (a day), and the longest timeout recommended (5 days, the limit of a
#: self-hosted runner's job; GitHub-hosted jobs stop at 6 hours).
MAX_SLOWEST_CELL_S = 86_400
MAX_CELL_TIMEOUT_S = 5 * 86_400
#: Relative slack on "a slice holds the peak": 0.29 x 10,000 MiB is 2,900.0000000000005 in binary floats.
_SLACK = 1e-9
FORMATS = ("text", "yaml", "github", "shell", "json")
CONCURRENCY_KEY = "concurrency.Concurrency.{}"


class AdviceError(InputError):
    """Inputs outside sense: the message names the input and the value."""


@dataclass(frozen=True)
class Advice:
    policy: str  # a memory policy of env_matrix/, or "cpu" when pinned to CPU
    reason: str
    kernels: int  # requested
    safe_kernels: int | None  # None when not known (no peak) or not a device-memory question (CPU)
    fraction: float | None  # the per-kernel memory fraction the policy sets, if it sets one
    env: dict[str, str]
    cell_timeout_s: int
    cell_timeout_reason: str
    notes: tuple[str, ...] = ()
    inputs: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _mib(x: float) -> str:
    return f"{x:,.0f} MiB" if x >= 10 else f"{x:.3g} MiB"


def _fraction(policy: MemoryPolicy, n: int, budget: float) -> float:
    return float(policy.environment(n, budget)["XLA_PYTHON_CLIENT_MEM_FRACTION"])


def _fits(n: int, peak_mib: float, device_mib: float, budget: float, policy: MemoryPolicy) -> bool:
    f = _fraction(policy, n, budget)
    return (n * peak_mib <= budget * device_mib * (1 + _SLACK) and f * device_mib >= peak_mib * (1 - _SLACK)
            and n * f <= 1.0)


def safe_kernels(peak_mib: float, device_mib: float, budget: float, fraction_policy: MemoryPolicy) -> int:
    """The largest N with N x peak within budget x device, the policy's fraction f(N) x device holding one
    peak, and N x f(N) <= 1 (the slices together must fit on the device, or the last kernel cannot
    preallocate). The search is bounded: f is in hundredths, so no more than 100 x budget kernels get a
    slice at all, however small the peak."""
    most = math.floor(round(budget * 100, 9))
    by_memory = budget * device_mib / peak_mib
    n = most if by_memory >= most else math.floor(by_memory + _SLACK)
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
        raise AdviceError("device memory unknown: give --device-memory-mib or --machine (a catalogue GPU family), "
                          "or --pin-cpu for lectures pinned to CPU")
    if peak_mib is not None and peak_mib > device_mib:
        raise AdviceError(f"peak {_mib(peak_mib)} per kernel is larger than the device ({_mib(device_mib)}): "
                          "no policy can run it; pin the lecture to CPU or use a larger GPU")
    if peak_mib is not None and peak_mib > budget * device_mib:
        raise AdviceError(f"peak {_mib(peak_mib)} per kernel exceeds the memory budget {budget:.2f} x "
                          f"{_mib(device_mib)} = {_mib(budget * device_mib)}: raise --memory-budget or use a larger GPU")


def _timeout(slowest_cell_s, slowdown):
    if slowest_cell_s is None:
        return DEFAULT_CELL_TIMEOUT_S, (f"no cell time given: {DEFAULT_CELL_TIMEOUT_S} s, the shortest per-cell "
                                        "timeout the lecture series use; pass --slowest-cell-s from a measured run")
    try:
        number("--slowest-cell-s", slowest_cell_s, low=0, high=MAX_SLOWEST_CELL_S, unit="seconds")
    except InputError as exc:
        raise AdviceError(str(exc)) from None
    factor = slowdown if slowdown and math.isfinite(slowdown) and slowdown > 1 else 1.0
    how = f"x measured slowdown {factor:.2f} at this N" if factor > 1 else "(slowdown at this N not measured)"
    wanted = TIMEOUT_MARGIN * slowest_cell_s * factor
    if wanted > MAX_CELL_TIMEOUT_S:
        return MAX_CELL_TIMEOUT_S, (f"{TIMEOUT_MARGIN:g} x slowest cell {slowest_cell_s:g} s {how} = {wanted:.3g} s, "
                                    f"capped at {MAX_CELL_TIMEOUT_S} s (5 days, the longest a self-hosted runner's "
                                    "job may run)")
    seconds = int(math.ceil(wanted / 60.0) * 60)
    return seconds, f"{TIMEOUT_MARGIN:g} x slowest cell {slowest_cell_s:g} s {how}, rounded up to a minute"


def recommend(kernels: int, *, peak_mib: float | None = None, device_mib: float | None = None,
              pin_cpu: bool = False, budget: float, policies: dict[str, MemoryPolicy], cache_dir: str,
              slowest_cell_s: float | None = None, slowdown: float | None = None,
              peak_source: str = "given") -> Advice:
    """The recommended environment for `kernels` concurrent kernels (see the module docstring's model)."""
    _validate(kernels, peak_mib, device_mib, budget, pin_cpu)
    inputs = dict(kernels=kernels, peak_mib=peak_mib, peak_source=peak_source, device_mib=device_mib,
                  pin_cpu=pin_cpu, budget=budget, slowest_cell_s=slowest_cell_s, slowdown=slowdown)
    common = {"JAX_COMPILATION_CACHE_DIR": cache_dir, "JAX_TRACEBACK_FILTERING": "off"}
    notes = []
    fraction = None
    if pin_cpu:
        policy, safe = "cpu", None
        env = {"JAX_PLATFORMS": "cpu"}
        reason = ("pinned to CPU: JAX_PLATFORMS=cpu keeps JAX off the GPU; the XLA memory variables act only on "
                  "the GPU backend, so none is set")
        notes.append("host memory and CPU cores are not modelled: N kernels share the runner's cores")
    elif peak_mib is None:
        safe = None
        if kernels == 1 and budget < JAX_DEFAULT_PREALLOCATE:
            policy, env = "fraction", policies["fraction"].environment(1, budget)
            fraction = float(env["XLA_PYTHON_CLIENT_MEM_FRACTION"])
            reason = (f"one kernel and a budget of {budget:.2f}, below JAX's default preallocation of 75%: the "
                      f"kernel preallocates {fraction:.2f} of the device instead")
        elif kernels == 1:
            policy, env = "default", dict(policies["default"].env)
            reason = ("one kernel on the device: JAX's default (preallocate 75%) is the fastest allocator and "
                      "nothing else competes for the memory")
        else:
            policy, env = "no-prealloc", dict(policies["no-prealloc"].env)
            reason = (f"{kernels} kernels and no measured peak: allocate on demand so no kernel holds memory it "
                      "does not use (under the default the first kernel takes 75% of the device and a later one "
                      "can abort, incident 3); measure the peak with the concurrency suite for a safe N")
        notes.append("per-kernel peak not measured: safe N unknown")
    else:
        safe = safe_kernels(peak_mib, device_mib, budget, policies["fraction"])
        if safe == 0:
            f1 = _fraction(policies["fraction"], 1, budget)
            raise AdviceError(f"--peak-mib {peak_mib:g}: one kernel's slice under the budget {budget:g} is "
                              f"{f1:.2f} x {_mib(device_mib)} = {_mib(f1 * device_mib)} (fractions are set in "
                              "hundredths, rounded down), smaller than the peak: raise --memory-budget")
        if kernels > safe:
            raise AdviceError(f"--kernels {kernels}: {kernels} kernels of peak {_mib(peak_mib)} do not fit the budget "
                              f"{budget:.2f} x {_mib(device_mib)} = {_mib(budget * device_mib)} (each needs its own "
                              f"slice of at least its peak); at most {safe} fit: run {safe} at once, or measure a "
                              "smaller peak, or use a larger GPU")
        if kernels == 1 and peak_mib <= JAX_DEFAULT_PREALLOCATE * device_mib and budget >= JAX_DEFAULT_PREALLOCATE:
            policy, env = "default", dict(policies["default"].env)
            reason = (f"one kernel of peak {_mib(peak_mib)}: JAX's default preallocation of 75% "
                      f"({_mib(JAX_DEFAULT_PREALLOCATE * device_mib)}) holds it and nothing else competes")
        else:
            n = kernels
            policy, env = "fraction", policies["fraction"].environment(n, budget)
            fraction = float(env["XLA_PYTHON_CLIENT_MEM_FRACTION"])
            slice_mib = fraction * device_mib
            reason = (f"{n} kernel(s) of peak {_mib(peak_mib)} need {_mib(n * peak_mib)}, within the budget "
                      f"{budget:.2f} x {_mib(device_mib)} = {_mib(budget * device_mib)}: each kernel preallocates "
                      f"its own {fraction:.2f} x {_mib(device_mib)} = {_mib(slice_mib)}, which holds its peak, "
                      "so no kernel can take another's memory")
            if kernels > 1:
                reason += (f" (under JAX's default the first kernel would take 75% = "
                           f"{_mib(JAX_DEFAULT_PREALLOCATE * device_mib)} and leave "
                           f"{_mib((1 - JAX_DEFAULT_PREALLOCATE) * device_mib)} to the other {kernels - 1}: incident 3)")
            notes.append(f"{_mib(device_mib - n * slice_mib)} stays outside the kernels' pools for CUDA contexts and "
                         f"library workspaces ({_mib((device_mib - n * slice_mib) / n)} per kernel; not measured here)")
    if peak_mib is not None and not pin_cpu:
        notes.append(f"model: N kernels fit when N x peak <= budget x device memory and each kernel's slice holds its "
                     f"peak; safe N = {safe}")
    cell_timeout, timeout_reason = _timeout(slowest_cell_s, slowdown)
    env = {**env, **common, "JAXCI_CELL_TIMEOUT_S": str(cell_timeout)}
    return Advice(policy=policy, reason=reason, kernels=kernels, safe_kernels=safe, fraction=fraction, env=env,
                  cell_timeout_s=cell_timeout, cell_timeout_reason=timeout_reason, notes=tuple(notes), inputs=inputs)


# ---- measured inputs from asv results -------------------------------------------------------------------

def read_concurrency(results_dir: str, machine: str) -> dict[tuple, float]:
    """The concurrency tracks of the newest result file of `machine` that has them:
    {(track, n_workers, policy, device): value}, finite values only. Reads through asv's own API."""
    try:
        from asv.results import iter_results_for_machine
    except ImportError:
        raise AdviceError("reading --results needs asv (pip install 'jax-ci-bench[bench]'); or give --peak-mib") from None
    import ast
    import itertools

    if not os.path.isdir(os.path.join(results_dir, machine)):
        raise AdviceError(f"--results {results_dir}: no results for machine {machine!r} there")
    newest, values = None, {}
    for results in iter_results_for_machine(results_dir, machine):
        keys = [k for k in results.get_all_result_keys() if k.startswith(CONCURRENCY_KEY.format(""))]
        if not keys or (newest is not None and results.date <= newest):
            continue
        newest, values = results.date, {}
        for key in keys:
            params = results.get_result_params(key)
            for combo, value in zip(itertools.product(*params), results.get_result_value(key, params)):
                if value is not None and math.isfinite(value):
                    values[(key.rsplit(".", 1)[1], *(ast.literal_eval(p) for p in combo))] = value
    if not values:
        raise AdviceError(f"--results {results_dir}: machine {machine!r} has no measured concurrency results")
    return values


def measured_peak(values: dict[tuple, float]) -> float | None:
    """The largest per-kernel GPU peak over every measured policy and N (conservative)."""
    peaks = [v for (track, _, _, device), v in values.items() if track == "track_peak_memory_mib" and device == "gpu"]
    return max(peaks) if peaks else None


# ---- rendering ------------------------------------------------------------------------------------------

def render(advice: Advice, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(advice.as_dict(), indent=2)
    if fmt == "github":  # lines for $GITHUB_ENV: a newline in a value would let it set another variable
        bad = [k for k, v in advice.env.items() if "\n" in v or "\r" in v or "=" in k]
        if bad:
            raise AdviceError(f"cannot write {', '.join(bad)} as a $GITHUB_ENV line: a newline in the value")
        return "\n".join(f"{k}={v}" for k, v in advice.env.items())
    head = [f"policy: {advice.policy}", f"why: {advice.reason}",
            f"kernels: {advice.kernels} requested, safe: {advice.safe_kernels if advice.safe_kernels is not None else 'unknown'}",
            f"per-cell timeout: {advice.cell_timeout_s} s ({advice.cell_timeout_reason})",
            *(f"note: {n}" for n in advice.notes)]
    if fmt == "yaml":
        return "\n".join([*(f"# {line}" for line in head), "env:",
                          *(f"  {k}: {json.dumps(v)}" for k, v in advice.env.items())])
    if fmt == "shell":
        return "\n".join([*(f"# {line}" for line in head), *(f"export {k}={shlex.quote(v)}" for k, v in advice.env.items())])
    return "\n".join([*head, "env:", *(f"  {k}={v}" for k, v in advice.env.items())])


# ---- command line ---------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jaxci env", description="Recommended JAX/XLA environment for N kernels on one device.")
    p.add_argument("--kernels", type=int, default=1, help="notebook kernels running at once (default 1)")
    p.add_argument("--peak-mib", type=float, help="measured per-kernel peak device memory, MiB")
    p.add_argument("--results", metavar="DIR", help="asv results directory to read the measured peak from (needs --machine)")
    p.add_argument("--machine", help="catalogue family (device memory) and asv machine name (results)")
    p.add_argument("--device-memory-mib", type=float, help="device memory, MiB (overrides the catalogue)")
    p.add_argument("--pin-cpu", action="store_true", help="the lectures run on CPU (JAX_PLATFORMS=cpu)")
    p.add_argument("--memory-budget", type=float, help="fraction of device memory all kernels together may use "
                                                       "(default: env_matrix/memory_policies.toml)")
    p.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/jax-compilation-cache"),
                   help="JAX persistent compilation cache directory")
    p.add_argument("--slowest-cell-s", type=float, help="measured time of the slowest cell, seconds")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text; yaml (a workflow env: block); github (lines for $GITHUB_ENV); shell (exports); json")
    return p


def advise(args: argparse.Namespace) -> Advice:
    policies, default_budget = load_policies()
    budget = default_budget if args.memory_budget is None else args.memory_budget
    device_mib, peak, peak_source, values = args.device_memory_mib, args.peak_mib, "given", {}
    if args.machine is not None and args.machine not in load_catalogue():
        # always checked, --pin-cpu or not: a typo must not pass silently. Only an asv machine whose
        # results are read (--results) may be a local name, and it must stay one folder under results/.
        if not args.results:
            raise AdviceError(f"--machine {args.machine!r}: unknown machine, not a family of env_matrix/machines.toml "
                              "(jaxci machine --list shows them)")
        try:
            machine_name("--machine", args.machine)
        except InputError as exc:
            raise AdviceError(str(exc)) from None
    elif args.machine and device_mib is None and not args.pin_cpu:
        machine = get_machine(args.machine)
        figure = machine.figure("gpu_memory_mib")
        if not machine.has_gpu:
            raise AdviceError(f"--machine {args.machine}: the catalogue lists no GPU on it; use --pin-cpu")
        if figure.value is None:
            raise AdviceError(f"--machine {args.machine}: gpu_memory_mib not in the catalogue ({figure.reason}); "
                              "give --device-memory-mib")
        device_mib = float(figure.value)
    if args.results:
        if not args.machine:
            raise AdviceError("--results needs --machine: the asv machine whose results to read")
        values = read_concurrency(args.results, args.machine)
        if peak is None and not args.pin_cpu:
            peak = measured_peak(values)
            if peak is not None:
                peak_source = f"measured: largest gpu track_peak_memory_mib in {args.results}/{args.machine}"
    kwargs = dict(peak_mib=peak, device_mib=device_mib, pin_cpu=args.pin_cpu, budget=budget, policies=policies,
                  cache_dir=args.cache_dir, slowest_cell_s=args.slowest_cell_s, peak_source=peak_source)
    advice = recommend(args.kernels, **kwargs)
    if not values:
        return advice
    # the measured slowdown and deaths of the recommended policy at this N (the suite measures N <= 4)
    n, device = min(args.kernels, 4), "cpu" if args.pin_cpu else "gpu"
    policy = "default" if advice.policy == "cpu" else advice.policy
    slowdown = values.get(("track_slowdown", n, policy, device))
    if slowdown is not None:
        advice = recommend(args.kernels, slowdown=slowdown, **kwargs)
    died = values.get(("track_workers_died", n, policy, device))
    seen = f"{died:g} of {n} worker(s) died" if died is not None else "not measured"
    return replace(advice, notes=(*advice.notes, f"measured on {args.machine}, {policy} on {device} at n={n}: {seen}"))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        advice = advise(args)
    except (AdviceError, CatalogueError) as exc:
        print(f"jaxci env: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "github":  # $GITHUB_ENV takes only KEY=value lines: the reasons go to the log
        print(render(advice, "text"), file=sys.stderr)
    try:
        text = render(advice, args.format)
    except AdviceError as exc:
        print(f"jaxci env: error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Instance fit for a whole lecture build: expected build time and dollars per runner family.

A lecture repository is described by its build time on one machine (the baseline) and the shares of that
time spent in pure Python, NumPy, Numba, JAX on the CPU and JAX that would run on a GPU (from
`jaxci audit --execute` where available, else stated assumptions). The model, stated once:

    build(F) = build(B) x [ sum_c share_c x factor_c(F) + other x factor_python(F) ]
    factor_c(F) = geometric mean over the kernels k of category c of  t_k(F) / t_k(B)

- kernels per category: python = host.PurePython; numpy = host.Numpy* (threads "all"); numba =
  host.Numba* warm (threads "all"); jax_cpu / jax_gpu = every `time_warm` benchmark with a device param,
  at device cpu, and at the device the JAX-on-GPU share runs on (gpu where the machine has one, else cpu).
- "other" (the rest of the build: kernel start, imports, the book build) scales with pure Python.
- measured: both F and B have results for the category's kernels.
- predicted, labelled, from a measured reference machine M (same CPU model when the catalogue says so,
  else B, whose per-core speed is then *assumed*): single-thread kernels and JAX-on-CPU kernels take M's
  time; kernels with a 1-thread and an all-threads result (BLAS, Numba prange) are scaled from M's
  all-threads time to F's vCPU count by Amdahl's law with the serial fraction measured on M (clamped to
  [0, 1], so a slowdown with threads keeps M's time). JAX on a GPU is
  predicted only from a measured machine with the same GPU model; on a family without a GPU it runs on
  the CPU (the jax_cpu factor).
- anything else is "not measured", and so is a build total that needs it.

Dollars: (catalogue job overhead + build) billed by jaxci.ci.jobcost's rule, times the catalogue price.
Pure functions over records; no JAX, no NumPy, no I/O but `load_repository`.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

CATEGORIES = ("python", "numpy", "numba", "jax_cpu", "jax_gpu")
MEASURED, PREDICTED, NOT_MEASURED, BASELINE = "measured", "predicted", "not measured", "baseline"
THREADS_TRACK = "host.Threads.track_blas_threads"


class BuildInputError(ValueError):
    """A repository description is malformed: the message names the file and the key."""


# ---- the repository description ----

@dataclass(frozen=True)
class Repository:
    name: str
    lectures: int
    baseline: str                 # the machine (asv name) the build time was taken on
    build_s: float                # the whole execution time of the build there
    shares: dict                  # category -> fraction of build_s
    source: str                   # where the shares come from (audit file, or "stated assumption: ...")

    @property
    def other(self) -> float:
        return max(0.0, 1.0 - sum(self.shares.values()))


def repository_from_dict(data: dict, where: str = "repository") -> Repository:
    """Validate a plain description: lectures, baseline, build_seconds, and shares or seconds per category.

    `seconds` (category -> seconds, e.g. summed from an audit) is turned into shares of build_seconds;
    build_seconds defaults to their sum.
    """
    if not isinstance(data, dict):
        raise BuildInputError(f"{where}: expected a table/object, got {type(data).__name__}")

    def need(key, kind):
        if key not in data:
            raise BuildInputError(f"{where}: missing key {key!r}")
        value = data[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise BuildInputError(f"{where}: {key} must be {getattr(kind, '__name__', kind)}, got {value!r}")
        return value

    has_shares, has_seconds = "shares" in data, "seconds" in data
    if has_shares == has_seconds:
        raise BuildInputError(f"{where}: give exactly one of 'shares' (fractions) or 'seconds' per category")
    table = data["shares" if has_shares else "seconds"]
    label = "shares" if has_shares else "seconds"
    if not isinstance(table, dict):
        raise BuildInputError(f"{where}: {label} must be a table of category -> number")
    for cat, value in table.items():
        if cat not in CATEGORIES:
            raise BuildInputError(f"{where}: {label}.{cat}: unknown category; expected {', '.join(CATEGORIES)}")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 or math.isnan(value):
            raise BuildInputError(f"{where}: {label}.{cat} must be a number >= 0, got {value!r}")
    if has_seconds and "build_seconds" not in data:
        build_s = float(sum(table.values()))
    else:
        build_s = float(need("build_seconds", (int, float)))
    if not build_s > 0:
        raise BuildInputError(f"{where}: build_seconds must be > 0, got {build_s!r}")
    shares = {c: float(v) for c, v in table.items()} if has_shares else {c: v / build_s for c, v in table.items()}
    if sum(shares.values()) > 1 + 1e-9:
        raise BuildInputError(f"{where}: {label} add up to more than the build ({sum(shares.values()):.3f} of 1)")
    lectures = need("lectures", int)
    if lectures < 1:
        raise BuildInputError(f"{where}: lectures must be >= 1, got {lectures}")
    baseline = need("baseline", str)
    return Repository(name=str(data.get("name", where)), lectures=lectures, baseline=baseline, build_s=build_s,
                      shares=shares, source=str(data.get("source", f"shares from {where}")))


def load_repository(path) -> Repository:
    """A repository description from a .json or .toml file (the same keys as repository_from_dict)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise BuildInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise BuildInputError(f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}") from None
    data.setdefault("source", f"shares from {path.name}")
    return repository_from_dict(data, str(path))


# ---- timings out of records ----

def _get(rec, name, default=None):
    return rec.get(name, default) if isinstance(rec, dict) else getattr(rec, name, default)


def _ok_value(rec):
    value = _get(rec, "value")
    status = _get(rec, "status", "ok")
    if status != "ok" or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        return None
    return float(value)


def categorize(benchmark: str, params: dict):
    """(category, kernel key, threads) of a warm timing, or None. JAX kernels get category "jax:<device>"."""
    method = benchmark.rsplit(".", 1)[-1]
    if not method.startswith("time_"):
        return None
    threads = params.get("threads")
    key = (benchmark, tuple(sorted((k, v) for k, v in params.items() if k not in ("threads", "device"))))
    if benchmark.startswith("host.PurePython."):
        return "python", key, threads
    if benchmark.startswith("host.Numpy"):
        return "numpy", key, threads
    if benchmark.startswith("host.Numba"):
        return "numba", key, threads
    if method == "time_warm" and params.get("device") in ("cpu", "gpu"):
        return f"jax:{params['device']}", key, threads
    return None


@dataclass
class Timings:
    """Per machine: (category, kernel key) -> seconds at all threads; and 1-thread seconds where measured."""

    all_threads: dict = field(default_factory=dict)   # machine -> {(cat, key): s}
    one_thread: dict = field(default_factory=dict)    # machine -> {(cat, key): s}
    threads: dict = field(default_factory=dict)       # machine -> the 'all' thread count it measured


def collect(records, categorize=categorize) -> Timings:
    out = Timings()
    for rec in records:
        machine, bench, params = _get(rec, "machine"), _get(rec, "benchmark"), _get(rec, "params") or {}
        value = _ok_value(rec)
        if value is None:
            continue
        if bench == THREADS_TRACK and params.get("threads") == "all":
            out.threads[machine] = int(value)
            continue
        hit = categorize(bench, params)
        if hit is None:
            continue
        cat, key, threads = hit
        table = out.one_thread if threads == "1" else out.all_threads
        table.setdefault(machine, {})[(cat, key)] = value
    return out


def _geomean(ratios):
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else None


# ---- factors ----

@dataclass
class Factor:
    category: str
    value: float | None
    label: str
    basis: str
    kernels: int = 0


def _jax_device(has_gpu: bool) -> str:
    return "jax:gpu" if has_gpu else "jax:cpu"


def _source_cat(cat: str, has_gpu: bool) -> str:
    if cat == "jax_cpu":
        return "jax:cpu"
    if cat == "jax_gpu":
        return _jax_device(has_gpu)
    return cat


def _ratios(num: dict, den: dict, cat_num: str, cat_den: str) -> list:
    return [t / den[(cat_den, key)] for (c, key), t in num.items() if c == cat_num and (cat_den, key) in den]


def measured_factor(t: Timings, machine: str, baseline: str, cat: str, gpu: dict) -> Factor:
    mine, base = t.all_threads.get(machine, {}), t.all_threads.get(baseline, {})
    ratios = _ratios(mine, base, _source_cat(cat, gpu.get(machine, False)), _source_cat(cat, gpu.get(baseline, False)))
    if not ratios:
        return Factor(cat, None, NOT_MEASURED, f"no {cat} kernels measured on both {machine} and {baseline}")
    where = ""
    if cat == "jax_gpu":
        where = " (device gpu)" if gpu.get(machine) else " (no GPU: this share runs on the CPU)"
    if cat == "jax_gpu":
        where += f" / {baseline} (device {'gpu' if gpu.get(baseline) else 'cpu'})"
    else:
        where += f" / {baseline}"
    return Factor(cat, _geomean(ratios), MEASURED,
                  f"geomean of {len(ratios)} kernel time ratios {machine}{where}", len(ratios))


def _amdahl_time(t1: float, tall: float, p_ref: int, p_target: int) -> tuple[float, float]:
    """Time at p_target threads from the 1-thread and p_ref-thread times; returns (time, serial fraction).

    Anchored at the measured all-threads time, so p_target == p_ref gives it back. The serial fraction is
    clamped to [0, 1]: a slowdown with threads (busy cores) keeps the all-threads time, unscaled.
    """
    if p_ref <= 1:
        return tall, 1.0
    serial = (p_ref * tall / t1 - 1) / (p_ref - 1)
    serial = min(1.0, max(0.0, serial))
    return tall * (serial + (1 - serial) / p_target) / (serial + (1 - serial) / p_ref), serial


def predicted_factor(t: Timings, ref: str, baseline: str, cat: str, p_ref, p_target, why: str) -> Factor:
    """F's kernel times from reference machine M (see the module docstring), divided by B's."""
    src = _source_cat(cat, False)  # predictions of CPU work only; GPUs are handled by the caller
    mine, ones, base = t.all_threads.get(ref, {}), t.one_thread.get(ref, {}), t.all_threads.get(baseline, {})
    ratios, scaled, serials = [], 0, []
    for (c, key), tall in mine.items():
        if c != src or (src, key) not in base:
            continue
        time = tall
        if (c, key) in ones:
            if not p_ref or not p_target:
                return Factor(cat, None, NOT_MEASURED, f"{ref} or the family has no thread count: cannot scale")
            time, serial = _amdahl_time(ones[(c, key)], tall, p_ref, p_target)
            scaled += 1
            serials.append(serial)
        ratios.append(time / base[(src, key)])
    if not ratios:
        return Factor(cat, None, NOT_MEASURED, f"no {cat} kernels measured on both {ref} and {baseline}")
    basis = f"{why}: {len(ratios)} kernels at {ref}'s times"
    if scaled:
        basis += (f", {scaled} threaded ones scaled by Amdahl from {p_ref} to {p_target} threads "
                  f"(serial fraction measured {min(serials):.2f}-{max(serials):.2f})")
    return Factor(cat, _geomean(ratios), PREDICTED, basis, len(ratios))


# ---- the estimate ----

@dataclass
class BuildEstimate:
    family: str
    label: str                      # baseline | measured | predicted | not measured
    build_s: float | None
    per_lecture_s: float | None
    job_s: float | None
    billed_s: float | None
    dollars: float | None
    price_per_hour: float | None
    factors: dict = field(default_factory=dict)   # category -> Factor
    inputs: list = field(default_factory=list)    # what the cost used, with sources
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def _machine_facts(catalogue: dict, timings: Timings, extra_gpu: dict):
    names = list(catalogue) + sorted(m for m in set(timings.all_threads) | set(extra_gpu) if m not in catalogue)
    gpu = {}
    for name in names:
        if name in catalogue:
            gpu[name] = catalogue[name].has_gpu
        else:
            gpu[name] = bool(extra_gpu.get(name)) or any(c == "jax:gpu" for c, _ in timings.all_threads.get(name, {}))
    return names, gpu


def _value(catalogue, name, key):
    entry = catalogue.get(name)
    return entry.value(key) if entry is not None else None


def _reference(name, catalogue, timings, repo, measured_ok):
    """(machine, why) to predict CPU work on `name` from: a measured machine with the same CPU model, else B."""
    cpu = _value(catalogue, name, "cpu_model")
    for other in catalogue:
        if other != name and cpu and _value(catalogue, other, "cpu_model") == cpu and measured_ok(other):
            return other, f"predicted from {other} (same CPU model: {cpu})"
    return repo.baseline, f"predicted from {repo.baseline} (assumed: same per-core speed as {repo.baseline})"


def _threads(name, catalogue, timings):
    if name in timings.threads:
        return timings.threads[name]
    vcpu = _value(catalogue, name, "vcpu")
    return int(vcpu) if vcpu else None


def estimate_build(repo: Repository, records, catalogue: dict, defaults: dict | None = None, *,
                   categorize=categorize, gpu_machines: dict | None = None) -> list[BuildEstimate]:
    """One BuildEstimate per catalogue family and per other machine with results (e.g. a local one)."""
    timings = collect(records, categorize)
    names, gpu = _machine_facts(catalogue, timings, gpu_machines or {})
    if repo.baseline not in timings.all_threads and repo.baseline not in names:
        names.append(repo.baseline)
        gpu[repo.baseline] = False
    factor_cats = [c for c in CATEGORIES if repo.shares.get(c, 0) > 0 or (c == "python" and repo.other > 0)]

    def measured(name, cat):
        return measured_factor(timings, name, repo.baseline, cat, gpu)

    def measured_ok(name):
        return name in timings.all_threads and all(measured(name, c).value is not None
                                                   for c in factor_cats if c != "jax_gpu")

    out = []
    for name in names:
        if name == repo.baseline:
            factors = {c: Factor(c, 1.0, BASELINE, f"{name} is where the build time was taken") for c in factor_cats}
        else:
            factors = {}
            for cat in factor_cats:
                fac = measured(name, cat)
                if fac.value is None and cat == "jax_gpu" and gpu.get(name):
                    fac = _gpu_prediction(name, catalogue, timings, repo, gpu, measured)
                elif fac.value is None and cat == "jax_gpu":
                    cpu_fac = factors.get("jax_cpu") or _cpu_factor(name, "jax_cpu", catalogue, timings, repo,
                                                                     measured_ok)
                    fac = Factor(cat, cpu_fac.value, cpu_fac.label,
                                 f"no GPU: this share runs on the CPU, as jax_cpu ({cpu_fac.basis})", cpu_fac.kernels)
                elif fac.value is None:
                    fac = _cpu_factor(name, cat, catalogue, timings, repo, measured_ok)
                factors[cat] = fac
        out.append(_estimate(name, repo, factors, catalogue, defaults))
    return out


def _cpu_factor(name, cat, catalogue, timings, repo, measured_ok):
    ref, why = _reference(name, catalogue, timings, repo, measured_ok)
    if ref not in timings.all_threads:
        return Factor(cat, None, NOT_MEASURED, f"no results for {ref} to predict from")
    return predicted_factor(timings, ref, repo.baseline, cat, _threads(ref, catalogue, timings),
                            _threads(name, catalogue, timings), why)


def _gpu_prediction(name, catalogue, timings, repo, gpu, measured):
    model = _value(catalogue, name, "gpu_model")
    for other in catalogue:
        if other != name and model and _value(catalogue, other, "gpu_model") == model:
            fac = measured(other, "jax_gpu")
            if fac.value is not None:
                return Factor("jax_gpu", fac.value, PREDICTED,
                              f"predicted from {other} (same GPU model: {model}): {fac.basis}", fac.kernels)
    return Factor("jax_gpu", None, NOT_MEASURED, f"no measured machine with a {model or 'GPU of this family'}")


def _estimate(name, repo: Repository, factors: dict, catalogue: dict, defaults) -> BuildEstimate:
    price = _value(catalogue, name, "price_per_hour")
    price = float(price) if price is not None else None
    missing = [c for c, f in factors.items() if f.value is None]
    labels = {f.label for f in factors.values()}
    if missing:
        return BuildEstimate(name, NOT_MEASURED, None, None, None, None, None, price, factors,
                             note="needs " + ", ".join(missing) + ": " + "; ".join(factors[c].basis for c in missing))
    label = BASELINE if labels == {BASELINE} else PREDICTED if PREDICTED in labels else MEASURED
    weight = sum(share * factors[c].value for c, share in repo.shares.items() if share > 0)
    weight += repo.other * factors["python"].value if repo.other > 0 else 0.0
    build = repo.build_s * weight
    est = BuildEstimate(name, label, build, build / repo.lectures, None, None, None, price, factors)
    _cost(est, catalogue.get(name), defaults)
    return est


def _cost(est: BuildEstimate, entry, defaults) -> None:
    if entry is None:
        est.note = "not a catalogue family: no price"
        return
    if not defaults or not defaults.get("job_overhead_minutes"):
        est.note = "no sourced job overhead in the catalogue defaults: dollars not computed"
        return
    from jaxci.ci.jobcost import billed_seconds

    overhead = defaults["job_overhead_minutes"]
    est.job_s = float(overhead.value) * 60 + est.build_s
    est.billed_s, rule = billed_seconds(entry.runner, est.job_s, defaults)
    est.inputs = [f"job overhead {overhead.value} min ({overhead.source})", rule,
                  f"price_per_hour {entry.figure('price_per_hour').value} ({entry.figure('price_per_hour').source})"]
    if est.price_per_hour is None:
        est.note = f"price_per_hour: {entry.figure('price_per_hour').reason}"
        return
    est.dollars = est.billed_s / 3600 * est.price_per_hour


# ---- rendering ----

def _fmt(value, spec, missing="not measured"):
    return missing if value is None else format(value, spec)


def render_markdown(estimates: list[BuildEstimate], repo: Repository | None = None) -> str:
    """A table per family and, below it, what each factor rests on (measured, predicted with its model)."""
    lines = []
    if repo is not None:
        shares = ", ".join(f"{c} {s:.0%}" for c, s in repo.shares.items() if s > 0)
        lines += [f"Build-time estimate for {repo.name}: {repo.lectures} lectures, {repo.build_s:,.0f} s on "
                  f"{repo.baseline}; shares {shares}, other {repo.other:.0%} (scales as python). "
                  f"Source: {repo.source}.", ""]
    cats = [c for c in CATEGORIES if any(c in e.factors for e in estimates)]
    lines.append("| family | estimate | build min | s per lecture | job min | $/h | $ per build | "
                 + " | ".join(f"{c} x" for c in cats) + " |")
    lines.append("|" + "---|" * (7 + len(cats)))
    mark = {MEASURED: "m", PREDICTED: "p", BASELINE: "=", NOT_MEASURED: ""}
    for e in estimates:
        cells = [e.family, e.label, _fmt(e.build_s and e.build_s / 60, ".1f"), _fmt(e.per_lecture_s, ".1f"),
                 _fmt(e.job_s and e.job_s / 60, ".1f", "-"), _fmt(e.price_per_hour, "g", "-"),
                 _fmt(e.dollars, ".3f", "-")]
        for c in cats:
            f = e.factors.get(c)
            cells.append("-" if f is None else "n/m" if f.value is None else f"{f.value:.2f} {mark[f.label]}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Factors: time on the family / time on the baseline (m measured, p predicted, = baseline, "
              "n/m not measured). Dollars: on-demand price, RunsOn licence not included.", ""]
    for e in estimates:
        if e.label == BASELINE:
            continue
        lines.append(f"- **{e.family}** ({e.label}): " + "; ".join(
            f"{c}: {f.basis}" for c, f in e.factors.items()) + (f". {e.note}" if e.note else "")
            + (f". Cost inputs: {', '.join(e.inputs)}" if e.inputs else ""))
    return "\n".join(lines) + "\n"


def thread_speedups(records) -> list[dict]:
    """The single-thread vs all-CPUs view: per machine and kernel, 1-thread s, all-threads s, speedup."""
    timings = collect(records)
    rows = []
    for machine, ones in sorted(timings.one_thread.items()):
        alls = timings.all_threads.get(machine, {})
        for (cat, key), t1 in sorted(ones.items(), key=lambda kv: repr(kv[0])):
            tall = alls.get((cat, key))
            if tall:
                rows.append({"machine": machine, "category": cat, "benchmark": key[0], "params": dict(key[1]),
                             "threads": timings.threads.get(machine), "one_s": t1, "all_s": tall,
                             "speedup": t1 / tall})
    return rows

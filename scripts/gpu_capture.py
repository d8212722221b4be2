"""GPU capture: the benchmarks that answer the seven questions, on both devices, in priority order, within
a time budget, packed into a few files that `jaxci import` merges into results/<machine>/.

usage: python3 scripts/gpu_capture.py --budget SECONDS [--out DIR] [--machine NAME] [--wheels DIR]
       python3 scripts/gpu_capture.py --rehearse --budget SECONDS [--out DIR]   (a CPU-only dress rehearsal)
       python3 scripts/gpu_capture.py --plan                                    (print the steps and exit)

Why one process with a budget: a lent GPU machine is rare and short (docs/gpu-capture.md). Each step is one
stock `asv run -E existing` over chosen parameter combinations (asv's --bench regex matches
`name(param, ...)`), so asv saves each step's results as it ends and a later failure loses one step only.
Before a step starts, its cost is estimated (process starts measured on this machine x combinations, corrected
by how far earlier steps were off); a step that cannot finish before the budget's end is not started and is
listed as not reached; a step that overruns is killed, its results file restored, and recorded. After every
step the capture is packed again into OUT (at most 8 files, each under 16 MiB), so a kill from outside still
leaves the last packed state behind.

The copy of the repository on a lent machine may hold no .git: asv then reads the commit and its date from
.device/commit.json (scripts/prepare-device.sh) through a small asv repository plugin (SnapshotRepo below);
rehearsals use the same path, with the commit read from git.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

FORMAT = 1                      # capture.json format, checked by `jaxci import`
MAX_FILES, MAX_FILE_BYTES = 8, 16 * 2**20
LOG_KEEP_BYTES = 2 * 2**20      # per step log kept in the archive (head and tail)
PACK_RESERVE_S = 12.0           # kept free at the end for the final summary and pack
OVERRUN_FACTOR = 2.0            # a step may run this many times its estimate before it is killed
DRAIN_S = 10.0                  # at a step's deadline: seconds for asv to record the cut combinations and save
START_MARGIN = 1.25             # a step starts only when estimate x this fits the time left (a kill loses it)
LAB_MACHINE = "lab-h200"
REHEARSAL_MACHINE = "local-rehearsal"


# --------------------------------------------------------------------------------------------- the plan

def combo(bench: str, *params) -> str:
    """asv's name for one parameter combination: `module.Class.method(repr(p0), repr(p1), ...)`."""
    return f"{bench}({', '.join(repr(p) for p in params)})"


@dataclass(frozen=True)
class Step:
    name: str
    question: str
    combos: tuple[str, ...]
    work_s: float                 # seconds per benchmark process beyond starting JAX on its device
    env: tuple = ()               # extra environment (name, value) pairs
    attrs: tuple = ("repeat=(1,5,1.0)", "warmup_time=0.05", "rounds=1")
    per_work: int = 1             # combinations sharing one heavy process (the others read its numbers)
    batches: tuple = ()           # (device, sequential batches, work s each) run once in a setup_cache

    def devices(self) -> list[str]:
        return [("gpu" if c.endswith("'gpu')") else "cpu") for c in self.combos]

    def suites(self) -> set[str]:
        return {c.split(".")[0] for c in self.combos}

    def regexes(self, scale_done: set = frozenset()) -> list[str]:
        """The combinations, and each suite's `track_scale` run fact unless an earlier step recorded it (a
        later step cut at its deadline would overwrite it with a failure)."""
        return ["^" + re.escape(c) + "$" for c in self.combos] + \
            [rf"^{s}\.track_scale$" for s in sorted(self.suites() - set(scale_done))]


def _both(bench: str, *params) -> list[str]:
    return [combo(bench, *params, d) for d in ("cpu", "gpu")]


def _kernels(dtype: str) -> list[str]:
    """The crossover kernels at sizes that bracket a break-even on a fast GPU, one dtype, both devices."""
    out = []
    for n in (10_000, 100_000, 1_000_000, 10_000_000):
        out += _both("elementwise.Elementwise.time_warm", n, dtype)
    for n in (64, 256, 1024, 4096):
        out += _both("dense.Dense.time_warm", "matmul", n, dtype)
    return out


def _loops(dtype: str) -> list[str]:
    out = []
    for n in (1_000, 10_000, 100_000):
        out += _both("loops.Scan.time_warm", n, 1, dtype)
    for n in (1_000, 10_000, 100_000):
        out += _both("loops.ForiAccumulate.time_warm", n, dtype)
    out += _both("loops.WhileConverge.time_warm", dtype)
    return out


def _tracks(cls: str, methods: tuple[str, ...], *params) -> list[str]:
    return [c for m in methods for c in _both(f"{cls}.{m}", *params)]


NUTS_TRACKS = ("track_wall_s", "track_ess_per_s", "track_leapfrog_steps_per_s")
CONC_TRACKS = ("track_workers_died", "track_slowdown", "track_peak_memory_mib")


def plan() -> list[Step]:
    """The steps in priority order (the seven questions: crossover first, then FP64, incident shapes,
    concurrency, sampler, compile); the capture runs them in this order while the budget allows."""
    conc = [combo(f"concurrency.Concurrency.{m}", n, p, d) for m in CONC_TRACKS for n in (1, 2, 3)
            for p, d in (("default", "cpu"), ("default", "gpu"), ("no-prealloc", "gpu"))]
    nuts = [Step(f"nuts-{ch_m[:3]}{ch}", f"4: NUTS {ch_m} x {ch} chain(s) on the small model, 200 draws (float64)",
                 tuple(_tracks("nuts.Nuts", NUTS_TRACKS, "regression", ch_m, ch, 200, "float64")), 40.0, attrs=(),
                 per_work=3)  # one step per chain method: a sampler that overruns loses only its own step
            for ch_m, ch in (("sequential", 1), ("vectorized", 4), ("parallel", 4), ("sequential", 4))]
    cold = [c for k in ("matmul", "op_mix", "scan", "kalman_grad")
            for c in _both("compile.CompileColdStart.timeraw_first_call", k, "float32")]
    series = _both("compile.JitSeriesTotal.track_total_s", "float32") + \
        _tracks("compile.PersistentCache", ("track_cold_s", "track_warm_s", "track_compile_saved_s"), "float32")
    extra = [c for op in ("solve", "cholesky") for n in (256, 1024) for dt in ("float32", "float64")
             for c in _both("dense.Dense.time_warm", op, n, dt)]
    extra += [c for n in (1, 100) for d in ("h2d", "d2h") for c in _both("dispatch.Transfer.time_transfer", d, n)]
    return [
        Step("sanity", "first: both devices start and dispatch (a broken GPU shows here, cheaply)",
             tuple(_both("dispatch.TinyOp.time_warm", "float32")), 1.0),
        Step("crossover-f32", "2: crossover of memory-bound (op mix) and compute-bound (matmul) kernels (float32)", tuple(_kernels("float32")), 3.0),
        Step("loops-f32", "2: scan, fori and while per-step cost (float32)", tuple(_loops("float32")), 2.0),
        Step("crossover-f64", "1: FP64 penalty on the same kernels and dispatch (float64)",
             tuple(_kernels("float64") + _both("dispatch.TinyOp.time_warm", "float64")), 3.0),
        Step("loops-f64", "1: FP64 penalty on the loops (float64)", tuple(_loops("float64")), 2.0),
        Step("kalman-seq", "1+2: Kalman gradient at the incident shape (k=11, n=96), sequential lax.scan",
             tuple(combo("kalman.KalmanGrad.time_warm", "sequential", 11, 96, dt, d)
                   for dt in ("float32", "float64") for d in ("cpu", "gpu")), 6.0),
        Step("kalman-par", "1+2: the same gradient, parallel-in-time lax.associative_scan (compiles longer)",
             tuple(combo("kalman.KalmanGrad.time_warm", "parallel", 11, 96, dt, d)
                   for dt in ("float32", "float64") for d in ("cpu", "gpu")), 15.0),
        Step("concurrency", "3: N = 1..3 workers under default and no-prealloc (the preallocation race)",
             tuple(conc), 0.0, env=(("JAXCI_POLICIES", "default,no-prealloc"), ("JAXCI_MAX_WORKERS", "3")),
             attrs=(), per_work=10**6, batches=(("cpu", 4, 8.0), ("gpu", 8, 4.0))),
        *nuts,
        Step("compile", "5: cold first calls, a lecture-like jit series, the persistent cache", tuple(cold + series), 6.0,
             attrs=("repeat=(1,3,10.0)", "rounds=1")),
        Step("extra", "2: solve, Cholesky and transfers (if time is left)", tuple(extra), 1.5,
             attrs=("repeat=(1,5,1.0)", "rounds=1")),
    ]


# ------------------------------------------------------------------------------- budget and estimates

@dataclass
class Costs:
    """Seconds to start a benchmark process that imports JAX on each device (measured here), the cost of a
    skipped combination, asv's discovery, and the running correction from steps already done."""
    start_s: dict = field(default_factory=lambda: {"cpu": 3.0, "gpu": 6.0})
    skip_s: float = 0.4
    discovery_s: float = 8.0
    estimated: float = 0.0
    actual: float = 0.0

    @property
    def factor(self) -> float:
        """actual / estimated over finished steps, kept within [0.5, 4] (one odd step cannot swing it far);
        never below 1 until a minute of estimates stands behind it (a quick sanity step says little)."""
        if self.estimated <= 0:
            return 1.0
        floor = 0.5 if self.estimated >= 60 else 1.0
        return min(4.0, max(floor, self.actual / self.estimated))

    def raw(self, step: Step, gpu: bool) -> float:
        total = self.discovery_s
        for device in step.devices():
            if device == "gpu" and not gpu:
                total += self.skip_s
            else:
                heavy = 1 / step.per_work
                total += heavy * (self.start_s[device] + step.work_s) + (1 - heavy) * self.skip_s
        for device, batches, work_s in step.batches:
            if device == "cpu" or gpu:
                total += batches * (self.start_s[device] + work_s)
        return total

    def estimate(self, step: Step, gpu: bool) -> float:
        return self.raw(step, gpu) * self.factor


def schedule(steps, budget_s: float, costs: Costs, gpu: bool, run_step, clock=time.monotonic, records=None):
    """Run the steps in order while each one's estimate fits the time left (less the pack reserve).

    run_step(step, deadline_s) -> (status, seconds); the caller kills a step at the deadline it is given.
    Returns one record per step: ran (status, seconds, estimate) or not reached (why). Pure scheduling:
    tests drive it with a fake clock and a fake run_step. `records` (appended to) may be shared with the
    caller, so a pack made during a step already lists the steps before it.
    """
    start = clock()
    records = [] if records is None else records
    for step in steps:
        left = budget_s - (clock() - start) - PACK_RESERVE_S
        estimate = costs.estimate(step, gpu)
        if estimate * START_MARGIN > left:
            records.append({"step": step.name, "status": "not reached", "estimate_s": round(estimate, 1),
                            "why": f"needs about {estimate:.0f} s (x{START_MARGIN} margin: {estimate * START_MARGIN:.0f} s), "
                                   f"{max(left, 0):.0f} s were left"})
            continue
        deadline = min(left, estimate * OVERRUN_FACTOR)
        status, seconds = run_step(step, deadline)
        costs.estimated += costs.raw(step, gpu)
        costs.actual += seconds
        records.append({"step": step.name, "status": status, "estimate_s": round(estimate, 1),
                        "seconds": round(seconds, 1), "deadline_s": round(deadline, 1)})
    return records


# -------------------------------------------------------------------- carried wheels and the commit

def install_wheels(wheels: Path, site: Path) -> list[str]:
    """Unpack into `site` each carried wheel whose distribution is not installed (no pip needed; a wheel is
    a zip laid out for site-packages). Returns the names unpacked."""
    from importlib.metadata import PackageNotFoundError, version

    done = []
    for whl in sorted(wheels.glob("*.whl")):
        name = whl.name.split("-")[0]
        try:
            version(name)
            continue
        except PackageNotFoundError:
            pass
        with zipfile.ZipFile(whl) as zf:
            zf.extractall(site)
        done.append(whl.name)
    if done:
        sys.path.insert(0, str(site))
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return done


def source_commit(repo: Path = REPO) -> dict:
    """{commit, date (unix seconds), source}: from git where the copy has .git, else .device/commit.json."""
    try:
        proc = subprocess.run(["git", "show", "-s", "--format=%H %ct", "HEAD"], cwd=repo, capture_output=True,
                              text=True, timeout=30)
        if proc.returncode == 0 and proc.stdout.strip():
            commit, date = proc.stdout.split()
            return {"commit": commit, "date": int(date), "source": "git"}
    except (OSError, subprocess.SubprocessError):
        pass
    path = repo / ".device" / "commit.json"
    try:
        data = json.loads(path.read_text())
        return {"commit": str(data["commit"]), "date": int(data["date"]), "source": str(path.relative_to(repo))}
    except (OSError, ValueError, KeyError) as exc:
        raise SystemExit(f"gpu_capture: no git here and {path} unusable ({exc}): run scripts/prepare-device.sh "
                         "on the build machine and carry .device") from None


try:  # asv repository plugin: asv imports this module through asv.conf.json "plugins" (with dvcs below)
    from asv.repo import Repo as _AsvRepo
except ImportError:  # asv not importable yet (before install_wheels); the plugin is only needed by asv
    _AsvRepo = object


class SnapshotRepo(_AsvRepo):
    """One fixed commit (JAXCI_CAPTURE_COMMIT / JAXCI_CAPTURE_DATE): what `asv run -E existing
    --set-commit-hash` needs from a repository, without git."""

    dvcs = "jaxci-snapshot"

    def __init__(self, url=None, mirror_path=None):
        self.url, self.path = url, None
        self._hash = os.environ["JAXCI_CAPTURE_COMMIT"]
        self._date_ms = int(os.environ["JAXCI_CAPTURE_DATE"]) * 1000

    @classmethod
    def url_match(cls, url):
        return False

    def pull(self):
        pass

    def checkout(self, path, commit_hash):
        pass

    def get_date(self, hash):
        return self._date_ms

    def get_date_from_name(self, name):
        return self._date_ms

    def get_hashes_from_range(self, range_spec):
        return [self._hash]

    def get_hash_from_name(self, name):
        return self._hash if name in (None, "HEAD", "main", "master") or self._hash.startswith(str(name)) else name

    def get_hash_from_parent(self, name):
        return self._hash

    def get_name_from_hash(self, commit):
        return None

    def get_tags(self):
        return {}

    def get_branch_commits(self, branch):
        return [self._hash]

    def get_revisions(self, commits):
        return {c: i for i, c in enumerate(commits)}

    def get_new_branch_commits(self, branches, existing):
        return [self._hash]

    def get_decorated_hash(self, commit_hash, n=8):
        return commit_hash[:n]


# ----------------------------------------------------------------------------------------- running

def probe_start(device: str, env: dict) -> tuple[float | None, str]:
    """Seconds for a fresh interpreter to import JAX and run one op on `device`; (None, error) if it fails."""
    platform = "cuda" if device == "gpu" else "cpu"
    code = ("import jax, jax.numpy as jnp; d = jax.devices(%r)[0]; "
            "jax.block_until_ready(jnp.ones(8, device=d) + 1); print(jax.__version__, d.device_kind)") % platform
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                              env={**env, "JAX_PLATFORMS": platform})
    except subprocess.TimeoutExpired:
        return None, f"{device}: starting JAX took over 180 s"
    if proc.returncode:
        return None, f"{device}: JAX did not start (JAX_PLATFORMS={platform}):\n{proc.stderr[-2000:]}"
    return time.monotonic() - t0, proc.stdout.strip()


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc (Linux; psutil is not needed). [] where /proc is unreadable."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            parent[int(stat.parent.name)] = int(text.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], [pid]
    while frontier:
        kids = [p for p, pp in parent.items() if pp in frontier]
        found += kids
        frontier = kids
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL asv and everything under it: asv starts each benchmark server in a process group of its own,
    so killing asv's group alone would leave a benchmark running into the next step."""
    below = descendants(pid)
    for target in [pid] + below:
        try:
            os.killpg(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:
                os.kill(target, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _trim(text: str, keep: int = LOG_KEEP_BYTES) -> str:
    if len(text) <= keep:
        return text
    half = keep // 2
    return text[:half] + f"\n... [{len(text) - keep} characters cut by gpu_capture] ...\n" + text[-half:]


@dataclass
class Capture:
    out: Path
    work: Path
    budget_s: float
    machine: str
    rehearse: bool
    started: float = field(default_factory=time.monotonic)
    started_utc: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    facts: dict = field(default_factory=dict)
    records: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    child: subprocess.Popen | None = None
    cut_step: bool = False
    scale_done: set = field(default_factory=set)  # suites whose track_scale a finished step recorded

    def stop_child(self, *_):
        """SIGTERM/SIGINT from outside: end the running asv group, then let main pack what was saved."""
        self.cut_step = self.child is not None and self.child.poll() is None
        if self.cut_step:
            kill_tree(self.child.pid)
        raise KeyboardInterrupt

    @property
    def results(self) -> Path:
        return self.work / "results"

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def env(self, step: Step | None = None) -> dict:
        env = dict(os.environ)
        env.pop("JAX_PLATFORMS", None)
        paths = [str(REPO), str(REPO / "scripts")] + [p for p in [env.get("PYTHONPATH")] if p]
        # asv drops PYTHONPATH from its benchmark processes unless ASV_PYTHONPATH names it: the repository
        # (benchmarks import jaxci, which the lent machine has not installed) and the unpacked wheels
        env.update(HOME=str(self.work), JAXCI_SCALE="full", JAXCI_ARTIFACTS=str(self.work / "artifacts"),
                   PYTHONPATH=os.pathsep.join(paths), ASV_PYTHONPATH=os.pathsep.join(paths), PYTHONUNBUFFERED="1",
                   JAXCI_CAPTURE_COMMIT=self.facts["commit"], JAXCI_CAPTURE_DATE=str(self.facts["commit_date"]))
        env.update(dict(step.env) if step else {})
        if self.rehearse and step is not None and step.name == "concurrency":
            env["JAXCI_SCALE"] = "ci"  # several 3 GiB workers would crowd a small shared build machine
        return env

    def run_step(self, step: Step, deadline_s: float) -> tuple[str, float]:
        """One `asv run` over the step's combinations; killed (and its results file restored) at the deadline."""
        backup = self.work / "results.before-step"
        shutil.rmtree(backup, ignore_errors=True)
        if self.results.exists():
            shutil.copytree(self.results, backup)
        cmd = [sys.executable, "-m", "asv", "--config", str(self.work / "asv.conf.json"), "run",
               "-E", f"existing:{sys.executable}", "--set-commit-hash", self.facts["commit"],
               "--machine", self.machine, "--show-stderr"]
        for attr in step.attrs:
            cmd += ["-a", attr]
        for regex in step.regexes(self.scale_done):
            cmd += ["--bench", regex]
        log_path = self.work / "logs" / f"{len(self.records) + 1:02d}-{step.name}.log"  # records: steps before
        log_path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        with open(log_path, "w") as log:
            log.write(f"# step {step.name}: {step.question}\n# deadline {deadline_s:.0f} s\n# {' '.join(cmd[:12])} ...\n")
            log.flush()
            # its own process group (not session): killed as a group here, and with us by whoever kills our session
            proc = subprocess.Popen(cmd, cwd=REPO, env=self.env(step), stdout=log, stderr=subprocess.STDOUT,
                                    process_group=0)
            self.child = proc
            try:
                code = proc.wait(timeout=max(deadline_s - DRAIN_S, min(deadline_s, 1.0)))
                status = "ok" if code == 0 else f"asv exit {code} (some combinations failed: see the log)"
                self.scale_done |= step.suites()
            except subprocess.TimeoutExpired:
                status = self.cut(proc, deadline_s, backup)
        seconds = time.monotonic() - t0
        self.record_versions()
        with open(log_path, "a") as log:
            log.write(f"\n# {status}; {seconds:.1f} s\n")
        print(f"gpu_capture: [{self.elapsed():5.0f} s] {step.name}: {status} ({seconds:.0f} s)", flush=True)
        self.pack()
        return status, seconds

    def cut(self, proc: subprocess.Popen, deadline_s: float, backup: Path) -> str:
        """The step ran out of time. First end only the benchmark processes under asv, again and again:
        asv records each as failed, goes on, and still saves what finished in this step. If asv itself is
        not done within DRAIN_S, kill it too and restore the results as they were before the step."""
        end = time.monotonic() + DRAIN_S
        while proc.poll() is None and time.monotonic() < end:
            for child in descendants(proc.pid):
                kill_tree(child)
            time.sleep(0.2)
        if proc.poll() is not None:
            return (f"cut at {deadline_s:.0f} s (overran its estimate): what was running or not yet started is "
                    "recorded as failed, finished combinations kept")
        kill_tree(proc.pid)
        proc.wait()
        shutil.rmtree(self.results, ignore_errors=True)
        if backup.exists():
            shutil.copytree(backup, self.results)
        return f"killed at {deadline_s:.0f} s (overran its estimate): its results are lost, earlier steps kept"

    def record_versions(self):
        """asv's existing environment records no requirements, so the report would fall back to the
        env_matrix pin of the commit; the lent machine has its own JAX. Write the versions this interpreter
        (the one asv ran) has into each results file's `requirements`, where asv keeps them."""
        versions = {k: self.facts[k] for k in ("jax", "jaxlib", "numpyro") if self.facts.get(k)}
        if not versions:
            return
        from asv import util
        from asv.results import Results

        for path in self.results.glob(f"{self.machine}/*.json"):
            if path.name == "machine.json":
                continue
            data = util.load_json(str(path), api_version=Results.api_version)
            if not data.get("requirements"):
                data["requirements"] = versions
                util.write_json(str(path), data, api_version=Results.api_version)

    # ------------------------------------------------------------------------------ summary and pack

    def manifest(self) -> dict:
        return {"format": FORMAT, "machine": self.machine, "rehearsal": self.rehearse,
                "started": self.started_utc, "budget_s": self.budget_s, "wall_s": round(self.elapsed(), 1),
                "facts": self.facts, "steps": self.records, "notes": self.notes,
                "plan": [{"step": s.name, "question": s.question, "combinations": len(s.combos)} for s in plan()]}

    def summary(self) -> str:
        m = self.manifest()
        lines = [f"# GPU capture on {self.machine}" + (" (rehearsal: no GPU, gpu combinations n/a)" if self.rehearse else ""),
                 "", f"- started {m['started']}, budget {self.budget_s:.0f} s, wall {m['wall_s']:.0f} s",
                 f"- commit {self.facts.get('commit', '?')[:12]} ({self.facts.get('commit_source')})",
                 f"- jax {self.facts.get('jax')}; gpu: {self.facts.get('gpu')}; driver {self.facts.get('gpu_driver')}",
                 f"- process start (import JAX + one op): {self.facts.get('start_s')}", "",
                 "| step | status | estimate s | seconds |", "|---|---|---|---|"]
        for r in self.records:
            lines.append(f"| {r['step']} | {r.get('why') and 'not reached: ' + r['why'] or r['status']} | "
                         f"{r.get('estimate_s', '')} | {r.get('seconds', '')} |")
        lines += [""] + [f"- note: {n}" for n in self.notes]
        lines += ["", "## Values", ""] + self.values()
        return "\n".join(lines) + "\n"

    def values(self) -> list[str]:
        """Every measured, skipped and failed combination of the results (read back through asv)."""
        try:
            from jaxci.results.records import load_results

            rs = load_results(self.results)
        except Exception as exc:  # a summary must never stop the pack
            return [f"results not readable: {exc}"]
        counts = {"ok": 0, "skipped": 0, "failed": 0}
        rows = []
        for r in sorted(rs.records, key=lambda r: (r.benchmark, str(r.params))):
            counts[r.status] = counts.get(r.status, 0) + 1
            if r.status != "skipped":
                params = " ".join(f"{k}={v}" for k, v in r.params.items())
                rows.append(f"- {r.status:6s} {r.benchmark} {params}" + (f" = {r.value:.6g} {r.unit}" if r.ok else ""))
        return [f"{counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} n/a"] + rows

    def pack(self) -> list[Path]:
        """OUT gets: capture.json, summary.md, results.tar.gz (asv results), logs.tar.gz (logs, artifacts).
        Written to temporary names first and renamed, so a kill never leaves half a file."""
        self.out.mkdir(parents=True, exist_ok=True)
        files = {"capture.json": json.dumps(self.manifest(), indent=1).encode(), "summary.md": self.summary().encode()}
        written = []
        for name, data in files.items():
            written.append(self._atomic(name, lambda tmp, data=data: tmp.write_bytes(data)))
        written.append(self._atomic("results.tar.gz", lambda tmp: self._tar(tmp, [self.results], "results")))
        logs = [p for p in (self.work / "logs", self.work / "artifacts") if p.exists()]
        written.append(self._atomic("logs.tar.gz", lambda tmp: self._tar(tmp, logs, None, trim=True)))
        too_big = [p for p in written if p.stat().st_size >= MAX_FILE_BYTES]
        if too_big:
            self.notes.append(f"over 16 MiB, replaced by its tail: {', '.join(p.name for p in too_big)}")
            for p in too_big:
                if p.name == "logs.tar.gz":
                    self._atomic(p.name, lambda tmp: self._tar(tmp, logs, None, trim=True, keep=64 * 1024))
        return written

    def _atomic(self, name: str, write) -> Path:
        tmp = self.work / f".{name}.tmp"
        write(tmp)
        final = self.out / name
        shutil.move(str(tmp), str(final))
        return final

    @staticmethod
    def _tar(path: Path, dirs: list[Path], arcname: str | None, trim: bool = False, keep: int = LOG_KEEP_BYTES):
        with tarfile.open(path, "w:gz") as tar:
            for d in dirs:
                if not d.exists():
                    continue
                for f in sorted(p for p in d.rglob("*") if p.is_file()):
                    rel = Path(arcname or d.name) / f.relative_to(d)
                    if trim and f.suffix in (".log", ".txt") and f.stat().st_size > keep:
                        data = _trim(f.read_text(errors="replace"), keep).encode()
                        info = tarfile.TarInfo(str(rel))
                        info.size = len(data)
                        import io

                        tar.addfile(info, io.BytesIO(data))
                    else:
                        tar.add(f, arcname=str(rel))


def prepare(cap: Capture, wheels: Path | None) -> tuple[bool, Costs]:
    """Wheels, commit, asv config, machine registration, device probes. Returns (gpu usable, costs)."""
    if wheels and wheels.is_dir():
        unpacked = install_wheels(wheels, cap.work / "site")
        cap.notes.append(f"unpacked {len(unpacked)} carried wheel(s): {', '.join(unpacked) or 'none needed'}")
    try:
        import asv  # noqa: F401
    except ImportError:
        raise SystemExit("gpu_capture: asv is not importable: carry its wheels (scripts/prepare-device.sh) "
                         "and pass --wheels .device/wheels") from None
    from jaxci.machines.asvconf import write_redirected_conf
    from jaxci.machines.register import register
    from jaxci import nvml

    src = source_commit()
    cap.facts.update(commit=src["commit"], commit_date=src["date"], commit_source=src["source"])
    conf_path = write_redirected_conf(cap.work)
    conf = json.loads(conf_path.read_text())
    conf.update(dvcs=SnapshotRepo.dvcs, plugins=[".gpu_capture"])  # scripts/ is on PYTHONPATH   # no git needed (see SnapshotRepo)
    conf_path.write_text(json.dumps(conf, indent=2))

    gpus = nvml.gpus()
    if cap.rehearse and gpus:
        cap.notes.append(f"rehearsal on a machine with {gpus[0].name}: gpu combinations will run")
    if not cap.rehearse:
        from jaxci.catalogue import load_catalogue

        entry = load_catalogue(include_lab=True).get(cap.machine)
        if entry is not None and entry.is_lab and gpus and entry.label.lower() not in gpus[0].name.lower():
            raise SystemExit(f"gpu_capture: {cap.machine} is the {entry.label} lab machine but NVML sees "
                             f"{gpus[0].name}: register another name (one name must mean one kind of hardware)")
    sys.path.insert(0, str(REPO / "scripts"))
    info = register(cap.machine, local=cap.machine.startswith("local-"),
                    machine_file=str(cap.work / ".asv-machine.json"), gpus=gpus)
    cap.facts.update(gpu=info.get("gpu"), gpu_driver=info.get("gpu_driver"), cpu=info.get("cpu"),
                     num_cpu=info.get("num_cpu"), host=socket.gethostname(), python=info.get("python"))
    try:
        from importlib.metadata import version

        cap.facts.update(jax=version("jax"), jaxlib=version("jaxlib"), numpyro=version("numpyro"), asv=version("asv"))
    except Exception as exc:
        cap.notes.append(f"package versions not read: {exc}")

    costs = Costs()
    env = cap.env()
    start_s = {}
    for device in (["cpu", "gpu"] if gpus else ["cpu"]):
        seconds, text = probe_start(device, env)
        if seconds is None:
            cap.notes.append(text)
        else:
            start_s[device] = round(seconds, 2)
            costs.start_s[device] = seconds + 0.5  # asv's own process overhead on top
            cap.facts[f"jax_{device}"] = text
    cap.facts["start_s"] = start_s
    gpu_ok = "gpu" in start_s
    if gpus and not gpu_ok:
        cap.notes.append("NVML sees a GPU but JAX's CUDA backend did not start: gpu combinations will fail "
                         "(JAX_PLATFORMS=cuda), cpu combinations still run")
    return bool(gpus), costs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, help="seconds for the whole capture, packing included")
    parser.add_argument("--out", type=Path, default=os.environ.get("OUT"),
                        help="where the packed files go (default: $OUT)")
    parser.add_argument("--machine", help=f"asv machine name (default {LAB_MACHINE}; rehearsal {REHEARSAL_MACHINE})")
    parser.add_argument("--wheels", type=Path, default=REPO / ".device" / "wheels",
                        help="carried wheels to unpack when asv is missing (default .device/wheels)")
    parser.add_argument("--work", type=Path, help="working directory (default: a new temporary one)")
    parser.add_argument("--rehearse", action="store_true", help="CPU-only dress rehearsal of the whole flow")
    parser.add_argument("--only", help="run only the steps whose names match this regex")
    parser.add_argument("--plan", action="store_true", help="print the steps and exit")
    args = parser.parse_args(argv)
    steps = [s for s in plan() if not args.only or re.search(args.only, s.name)]
    if args.plan:
        for s in steps:
            print(f"{s.name:14s} {len(s.combos):3d} combinations  {s.question}")
        return 0
    if not args.budget or args.budget <= PACK_RESERVE_S:
        parser.error(f"--budget SECONDS is required and must exceed the {PACK_RESERVE_S:.0f} s pack reserve")
    if not args.out:
        parser.error("--out DIR is required where $OUT is not set")
    machine = args.machine or (REHEARSAL_MACHINE if args.rehearse else LAB_MACHINE)
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-capture-"))
    work.mkdir(parents=True, exist_ok=True)
    cap = Capture(out=args.out, work=work, budget_s=args.budget, machine=machine, rehearse=args.rehearse)
    try:
        gpu, costs = prepare(cap, args.wheels)
    except Exception as exc:  # registration refused, no asv, ...: say so in OUT too, then stop
        cap.notes.append(f"stopped before any step: {exc}")
        cap.pack()
        print(f"gpu_capture: {exc}", file=sys.stderr)
        return 2
    costs.discovery_s = max(costs.discovery_s, 2 * costs.start_s["cpu"])
    remaining = args.budget - cap.elapsed()
    cap.notes.append(f"preparation took {cap.elapsed():.0f} s")

    def run_step(step, deadline):
        return cap.run_step(step, deadline)

    signal.signal(signal.SIGTERM, cap.stop_child)
    signal.signal(signal.SIGINT, cap.stop_child)
    try:
        schedule(steps, remaining, costs, gpu, run_step, records=cap.records)
    except KeyboardInterrupt:
        cap.notes.append(f"stopped from outside after {cap.elapsed():.0f} s: the step running then is lost, "
                         "earlier steps are packed")
        if cap.cut_step:  # asv may have been writing its results file: go back to the state before the step
            shutil.rmtree(cap.results, ignore_errors=True)
            if (cap.work / "results.before-step").exists():
                shutil.copytree(cap.work / "results.before-step", cap.results)
        cap.pack()
        return 3
    records = cap.records
    cap.notes.append(f"estimate correction factor at the end: {costs.factor:.2f}")
    cap.pack()
    reached = sum(1 for r in records if r["status"] != "not reached")
    print(f"gpu_capture: {reached}/{len(records)} steps in {cap.elapsed():.0f} s of {args.budget:.0f}; "
          f"packed into {cap.out}: " + ", ".join(f"{p.name} {p.stat().st_size // 1024} KiB" for p in sorted(cap.out.iterdir())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Running the capture: its state (`Capture`), one stock `asv run` per step within the deadline the scheduler
gave it (cut, or killed and its results restored, when it overruns), the versions written into asv's
results, and `run_plan`: the schedule under SIGTERM/SIGINT, packed after every step and at the end."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.capture import pack
from jaxci.capture.plan import CaptureStep
from jaxci.capture.scheduler import Costs, schedule
from jaxci.results.asvfiles import set_requirements
from jaxci.util.proc import kill_tree, snapshot

DRAIN_S = 10.0                  # at a step's deadline: seconds for asv to record the cut combinations and save


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
        """SIGTERM/SIGINT from outside: end the running asv group, then let run_plan pack what was saved."""
        self.cut_step = self.child is not None and self.child.poll() is None
        if self.cut_step:
            kill_tree(self.child.pid)
        raise KeyboardInterrupt

    @property
    def results(self) -> Path:
        return self.work / "results"

    @property
    def backup(self) -> Path:
        """The results as they were before the running step (restored when that step is lost)."""
        return self.work / "results.before-step"

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def pack(self) -> list[Path]:
        return pack.pack(self)

    def env(self, step: CaptureStep | None = None) -> dict:
        env = dict(os.environ)
        env.pop("JAX_PLATFORMS", None)
        paths = [str(REPO_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p]
        # asv drops PYTHONPATH from its benchmark processes unless ASV_PYTHONPATH names it: the repository
        # (benchmarks import jaxci, which the lent machine has not installed) and the unpacked wheels
        env.update(HOME=str(self.work), JAXCI_SCALE="full", JAXCI_ARTIFACTS=str(self.work / "artifacts"),
                   PYTHONPATH=os.pathsep.join(paths), ASV_PYTHONPATH=os.pathsep.join(paths), PYTHONUNBUFFERED="1",
                   JAXCI_CAPTURE_COMMIT=self.facts["commit"], JAXCI_CAPTURE_DATE=str(self.facts["commit_date"]))
        env.update(dict(step.env) if step else {})
        if self.rehearse and step is not None and "concurrency" in step.suites():
            env["JAXCI_SCALE"] = "ci"  # several 3 GiB workers would crowd a small shared build machine
        return env

    def asv_command(self, step: CaptureStep) -> list[str]:
        """`asv run -E existing` of this interpreter over the step's combinations, at the capture's commit."""
        cmd = [sys.executable, "-m", "asv", "--config", str(self.work / "asv.conf.json"), "run",
               "-E", f"existing:{sys.executable}", "--set-commit-hash", self.facts["commit"],
               "--machine", self.machine, "--show-stderr"]
        for attr in step.attrs:
            cmd += ["-a", attr]
        for regex in step.regexes(self.scale_done):
            cmd += ["--bench", regex]
        return cmd

    def step_command(self, step: CaptureStep) -> list[str]:
        """asv over the step's combinations, or a command step's `python -m MODULE ARGS` (the profiles)."""
        return [sys.executable, "-m", *step.command] if step.is_command else self.asv_command(step)

    def run_step(self, step: CaptureStep, deadline_s: float) -> tuple[str, float]:
        """One `asv run` over the step's combinations; killed (and its results file restored) at the deadline."""
        shutil.rmtree(self.backup, ignore_errors=True)
        if self.results.exists():
            shutil.copytree(self.results, self.backup)
        cmd = self.step_command(step)
        log_path = self.work / "logs" / f"{len(self.records) + 1:02d}-{step.name}.log"  # records: steps before
        log_path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        with open(log_path, "w") as log:
            log.write(f"# step {step.name}: {step.question}\n# deadline {deadline_s:.0f} s\n"
                      f"# {' '.join(cmd[:12])} ...\n")
            log.flush()
            # its own process group (not session): killed as a group here, and with us by whoever kills our session
            proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=self.env(step), stdout=log, stderr=subprocess.STDOUT,
                                    process_group=0)
            self.child = proc
            try:
                code = proc.wait(timeout=max(deadline_s - DRAIN_S, min(deadline_s, 1.0)))
                what = "the command" if step.is_command else "asv"
                status = "ok" if code == 0 else f"{what} exit {code} (some combinations failed: see the log)"
                self.scale_done |= step.suites()
            except subprocess.TimeoutExpired:
                status = self.cut(proc, deadline_s)
        seconds = time.monotonic() - t0
        record_versions(self.results, self.machine, self.facts)
        with open(log_path, "a") as log:
            log.write(f"\n# {status}; {seconds:.1f} s\n")
        print(f"gpu_capture: [{self.elapsed():5.0f} s] {step.name}: {status} ({seconds:.0f} s)", flush=True)
        self.pack()
        return status, seconds

    def cut(self, proc: subprocess.Popen, deadline_s: float) -> str:
        """The step ran out of time. First end only the benchmark processes under asv, again and again:
        asv records each as failed, goes on, and still saves what finished in this step. If asv itself is
        not done within DRAIN_S, kill it too and restore the results as they were before the step."""
        end = time.monotonic() + DRAIN_S
        while proc.poll() is None and time.monotonic() < end:
            kill_tree(snapshot(proc.pid)[1:], reap=False)  # everything below asv, not asv: asv reaps them
            time.sleep(0.2)
        if proc.poll() is not None:
            return (f"cut at {deadline_s:.0f} s (overran its estimate): what was running or not yet started is "
                    "recorded as failed, finished combinations kept")
        kill_tree(proc.pid)
        proc.wait()
        self.restore_results()
        return f"killed at {deadline_s:.0f} s (overran its estimate): its results are lost, earlier steps kept"

    def restore_results(self) -> None:
        """Back to the results as they were before the step (asv may have been writing its results file)."""
        shutil.rmtree(self.results, ignore_errors=True)
        if self.backup.exists():
            shutil.copytree(self.backup, self.results)


def record_versions(results: Path, machine: str, facts: dict) -> None:
    """asv's existing environment records no requirements, so the report would fall back to the
    env_matrix pin of the commit; the lent machine has its own JAX. Write the versions this interpreter
    (the one asv ran) has into each results file's `requirements`, where asv keeps them. asv is importable
    here: `prepare` stops the capture before any step where it is not (it comes from the carried wheels)."""
    versions = {k: facts[k] for k in ("jax", "jaxlib", "numpyro") if facts.get(k)}
    if versions:
        set_requirements(results / machine, versions)


def run_plan(cap: Capture, steps: list[CaptureStep], budget_s: float, costs: Costs, gpu: bool) -> int:
    """The steps as the schedule allows within `budget_s`, packed after each and at the end. SIGTERM or
    SIGINT from outside ends the running step (its results are restored as before it) and packs what the
    earlier steps saved. Returns 0, or 3 when stopped from outside."""
    signal.signal(signal.SIGTERM, cap.stop_child)
    signal.signal(signal.SIGINT, cap.stop_child)
    try:
        schedule(steps, budget_s, costs, gpu, cap.run_step, records=cap.records)
    except KeyboardInterrupt:
        cap.notes.append(f"stopped from outside after {cap.elapsed():.0f} s: the step running then is lost, "
                         "earlier steps are packed")
        if cap.cut_step:  # asv may have been writing its results file: go back to the state before the step
            cap.restore_results()
        cap.pack()
        return 3
    cap.notes.append(f"estimate correction factor at the end: {costs.factor:.2f}")
    cap.pack()
    return 0

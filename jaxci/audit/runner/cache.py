"""Reusing a lecture's previous run when nothing it depends on changed (`jaxci audit --execute --cache DIR`,
`--baseline FILE`).

A run is keyed like jupyter-cache keys a notebook, by its code cells (source and the tags the runner honours),
plus what else decides what executing it measures: the lecture's path (its scratch folder is its folder), the
platform, the per-cell timeout, and the kernel's environment (its kernelspec's argv and env, its Python version,
its installed jax, jaxlib, JAX CUDA plugins, numpy and numpyro). A changed notebook, JAX pin or kernel
environment re-executes that lecture only.
The catalogue and the runner model are not in the key: the verdict and the predictions are judged again from
the reused run on every audit (cheap), so a catalogue change re-predicts without re-executing.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from jaxci.audit.runner.outcome import OK, NotebookRun
from jaxci.util import safeio, safewrite
from jaxci.util.validate import InputError, one_line

#: the largest cached run read or written (a lecture's record is tens of KiB)
LIMIT = 16 * 1024 * 1024

#: bump when what a run records changes shape or meaning: older records are then never reused (git log has each step)
FORMAT = 6
#: the packages whose version decides what a lecture's JAX work measures: JAX, its CUDA plugins, numpy, numpyro
_PROBE = ("import json, sys\n"
          "from importlib import metadata\n"
          "out = {'python': sys.version.split()[0]}\n"
          "for d in metadata.distributions():\n"
          "    name = (d.metadata['Name'] or '').lower().replace('_', '-')\n"
          "    if name in ('jax', 'jaxlib', 'numpy', 'numpyro') or name.startswith('jax-cuda'):\n"
          "        out[name] = d.version\n"
          "print(json.dumps(dict(sorted(out.items()))))\n")


def kernel_identity(name: str) -> dict:
    """What a kernel's environment contributes to a key: its spec's argv and env, and the versions its
    interpreter reports (nothing imported: package metadata only). A kernel that cannot be probed gets an
    identity naming why, so its runs are keyed apart, never confused with a working kernel's."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    from jaxci.audit.runner.envcheck import kernel_python

    try:
        spec = KernelSpecManager().get_kernel_spec(name)
        identity: dict = {"kernel": name, "argv": spec.argv[1:], "env": dict(sorted((spec.env or {}).items()))}
    except NoSuchKernel:
        return {"kernel": name, "problem": "no such kernel"}
    python, why = kernel_python(name)
    if python is None:
        return {**identity, "problem": why}
    try:
        proc = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=60)
        identity.update(json.loads(proc.stdout))
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        identity["problem"] = f"not probed: {type(exc).__name__}"
    return identity


def code_digest(path: Path) -> str:
    """The lecture's code cells (source and tags, in order) and its kernelspec name; markdown does not count."""
    from jaxci.audit.reading.notebook import read_notebook

    nb = read_notebook(path)
    cells = [[c.source, sorted(c.get("metadata", {}).get("tags", []))] for c in nb.cells if c.cell_type == "code"]
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    return _hash({"cells": cells, "kernel": kernel})


def _completed(record: dict | None) -> dict | None:
    return record if record and record.get("status") == OK else None


def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:24]


class Reuse:
    """Keys every run of one audit, reuses the matching previous runs (from a cache folder and/or a baseline
    audit JSON), and stores the new ones in the cache folder. `executed` and `reused` list "path [platform]"."""

    def __init__(self, cache_dir: Path | None = None, baseline: dict | None = None, *, cell_timeout: float = 600,
                 env: dict | None = None, failures: bool = False):
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.failures = failures  # reuse failed runs too (a re-judge with new rules that executes nothing again)
        self.cell_timeout, self.env = cell_timeout, env
        self.keys: dict[str, dict[str, str]] = {}
        self.executed: list[str] = []
        self.reused: list[str] = []
        self._kernels: dict[str, dict] = {}
        self.refused: list[str] = []  # runs neither reused nor stored, and why (said on stderr by the command)
        self._baseline = _baseline_runs(baseline) if baseline else {}

    def key(self, verdict, platform: str, kernel: str) -> str | None:
        """The run's key (also recorded in `keys`); None when the notebook cannot be read (it is never reused)."""
        if kernel not in self._kernels:
            self._kernels[kernel] = kernel_identity(kernel)
        try:
            code = code_digest(verdict.path_abs)
        except Exception:  # an unreadable notebook: the runner reports it, nothing to reuse
            return None
        key = _hash({"format": FORMAT, "lecture": verdict.path, "code": code, "platform": platform,
                     "cell_timeout": self.cell_timeout, "kernel": self._kernels[kernel],
                     "env": dict(sorted((self.env or {}).items()))})
        self.keys.setdefault(verdict.path, {})[platform] = key
        return key

    def lookup(self, verdict, platform: str, key: str | None) -> NotebookRun | None:
        """A previous run with this key: the baseline's, else the cache folder's (whose completed run beats the
        baseline's failure). Only runs that completed
        (status ok) are reused: a failure or timeout is run again, it may have been the machine's (unless
        `failures`: a re-judge that keeps every previous outcome)."""
        if key is None:
            return None
        record = self._baseline.get(key)
        if (record is None or record.get("status") != OK) and self.cache_dir is not None:
            # a completed run in the cache beats the baseline's failure of the same key (a lecture that failed for
            # want of its data, run again once the data was there, is re-judged from the completed run)
            record = _completed(_read(self.cache_dir / f"{key}.json")) or record
        if not record or (record.get("status") != OK and not self.failures):
            return None
        try:
            run = NotebookRun.from_dict(record)
        except (TypeError, InputError) as exc:  # a record of another shape, or one that fails the checks: run again
            self.refused.append(f"{verdict.path} [{platform}]: {one_line(exc, 200)}")
            return None
        run.path = str(verdict.path_abs)
        self.reused.append(f"{verdict.path} [{platform}]")
        return run

    def store(self, verdict, platform: str, key: str | None, run: NotebookRun) -> None:
        """A completed run into the cache folder, through the one safe writer (atomic: parallel shards sharing a
        folder never read half a record; a link or anything but a regular file at its name is refused, so nothing
        outside the folder is written). A run that cannot be stored is said, and the audit goes on."""
        self.executed.append(f"{verdict.path} [{platform}]")
        self._write(verdict, platform, key, run)

    def restore(self, verdict, platform: str, run: NotebookRun) -> None:
        """A run executed by this audit stored again once judging stamped it (its host probe): the record a later
        audit reuses must carry the speed of the host when it ran, not whatever that audit's baseline says."""
        self._write(verdict, platform, self.keys.get(verdict.path, {}).get(platform), run)

    def _write(self, verdict, platform: str, key: str | None, run: NotebookRun) -> None:
        """A completed run's record under its key (nothing for a failure, a run with no key, or no cache folder)."""
        if key is None or self.cache_dir is None or run.status != OK:
            return
        try:
            safewrite.write_text(self.cache_dir / f"{key}.json", json.dumps(run.as_dict(), default=str),
                                 within=self.cache_dir, limit=LIMIT)
        except safewrite.UnsafeWrite as exc:   # said once: store and restore meet the same entry
            said = f"{verdict.path} [{platform}]: not stored: {one_line(exc, 200)}"
            if said not in self.refused:
                self.refused.append(said)

    def as_dict(self) -> dict:
        """For the audit JSON: every run's key, and which runs were reused (not timed again)."""
        return {"keys": {p: dict(sorted(k.items())) for p, k in sorted(self.keys.items())},
                "reused": sorted(self.reused)}


def _read(path: Path) -> dict | None:
    """A cache entry: a regular file (no link, FIFO or device), bounded in size and nesting; None when absent or
    unreadable (the lecture is run again)."""
    try:
        data = safeio.load_json(path, LIMIT, links=False)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _baseline_runs(audit: dict) -> dict[str, dict]:
    """key -> run record from a previous audit JSON (its `execution.keys` name each lecture's runs' keys)."""
    keys = (audit.get("execution") or {}).get("keys") or {}
    out = {}
    for lecture in audit.get("lectures", []):
        if not isinstance(lecture, dict):
            continue
        runs = lecture.get("runs") or {}
        for platform, key in (keys.get(lecture.get("path")) or {}).items():
            if isinstance(runs.get(platform), dict) and isinstance(key, str):
                out[key] = runs[platform]
    return out

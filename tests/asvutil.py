"""Run stock asv commands on this checkout with every output in a temporary directory.

A copy of asv.conf.json points results_dir, html_dir and env_dir into the temporary directory and HOME
there too (asv's machine file lives in ~), so tests never touch the committed results/ or the user's files.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from jaxci.machines.asvconf import read_conf, write_redirected_conf

REPO = Path(__file__).resolve().parent.parent
ASV = str(Path(sys.executable).with_name("asv"))

#: The JAX releases the release tests (`jaxci history`, `jaxci upgrade-check`) install: one pair for both, so a
#: session downloads and installs two releases, not four.
TWO_RELEASES = ("0.11.0", "0.11.2")


@dataclass
class AsvSandbox:
    root: Path
    repo: Path = REPO

    @property
    def conf(self) -> Path:
        return self.root / "asv.conf.json"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def html(self) -> Path:
        return self.root / "html"

    def write_conf(self) -> AsvSandbox:
        write_redirected_conf(self.root, self.repo)
        return self

    def env(self, **extra) -> dict:
        env = {**os.environ, "HOME": str(self.root), "JAXCI_SCALE": "ci", **extra}
        env.pop("JAX_PLATFORMS", None)
        return env

    def asv(self, *args, check=True, timeout=1800, **extra_env) -> subprocess.CompletedProcess:
        proc = subprocess.run([ASV, "--config", str(self.conf), *args], cwd=self.repo, env=self.env(**extra_env),
                              capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode:
            raise AssertionError(f"asv {' '.join(args)} exited {proc.returncode}\n"
                                 f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
        return proc

    def register(self, name: str = "ci-test") -> str:
        from jaxci.machines.register import register

        register(name, local=True, machine_file=str(self.root / ".asv-machine.json"))
        return name

    def run_existing(self, machine: str, bench: str | None = None, commit: str | None = None, **extra_env):
        commit = commit or head(self.repo)
        args = ["run", "-E", f"existing:{sys.executable}", "--set-commit-hash", commit, "--quick",
                "--machine", machine, "--show-stderr"]
        if bench:
            args += ["--bench", bench]
        return self.asv(*args, **extra_env)


def share_environments(clone: Path, environments: Path) -> None:
    """Point `clone`'s asv env_dir (as its asv.conf.json names it) at `environments`, before asv first runs there.

    asv names a virtualenv after the Python and the conf's matrix, not the checkout, so a second clone of this
    repository finds the first one's virtualenv with its dependencies installed, and only moves the JAX pin and
    the benchmarked commit's wheel; a fresh virtualenv with every dependency is most of a release test's time."""
    env_dir = clone / read_conf(clone / "asv.conf.json")["env_dir"]
    env_dir.parent.mkdir(parents=True, exist_ok=True)
    env_dir.symlink_to(environments, target_is_directory=True)


def head(repo: Path = REPO) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


FAILED = re.compile(r"^\[\s*[\d.]+%\]\s+···\s+(\S+)\s+failed\s*$", re.M)


def failed_benchmarks(log: str) -> list[str]:
    return FAILED.findall(log)


def result_values(results, key: str) -> dict:
    """{param combination (asv's repr strings): value} of one benchmark in an asv Results object.
    asv stores a skipped combination as NaN and a failed one as None."""
    params = results.get_result_params(key)
    return dict(zip(itertools.product(*params), results.get_result_value(key, params)))

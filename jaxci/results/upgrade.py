"""`jaxci upgrade-check`: asv continuous between two JAX pins, with the one slowdown factor of env_matrix/upgrade.toml.

A JAX upgrade is one commit that moves the pin in env_matrix/<backend>/requirements.txt, so "did it get
slower?" is stock `asv continuous BASE HEAD` followed by `asv compare` for the whole table. Two modes:

  local:  jaxci upgrade-check --old 0.10.1 --new 0.10.2 [--bench REGEX]
          clones this repository into a temporary directory, commits the old pin then the new pin, and
          runs the check there at CI scale on this machine (asv builds virtualenvs and installs each pin
          through env_matrix/install.py, so it needs the package index).
  CI:     jaxci upgrade-check --base SHA --head SHA --machine FAMILY
          runs in the current checkout (jax-upgrade.yml) and writes the table to $GITHUB_STEP_SUMMARY.

Exit status: 0 no slowdown beyond the factor, 1 a slowdown, 2 the check itself could not run.
JAXCI_OFFLINE=1 (no package index): local mode installs only from PIP_FIND_LINKS, and refuses without it.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.catalogue import BACKENDS, CatalogueError, Machine, env_matrix_dir, load_catalogue
from jaxci.results.asvrun import asv_env, asv_exe
from jaxci.util.git import git
from jaxci.util.pins import pin_jax
from jaxci.util.validate import InputError, env_flag, jax_version

CONFIG_NAME = "upgrade.toml"
LOCAL_MACHINE = "upgrade-check"


@dataclass(frozen=True)
class UpgradeConfig:
    factor: float
    scale: str
    cpu_family: str
    gpu_family: str


def load_config(directory: Path | None = None, catalogue: dict[str, Machine] | None = None) -> UpgradeConfig:
    """env_matrix/upgrade.toml, checked: factor > 1, scale ci|full, a CPU and a GPU catalogue family."""
    directory = directory or env_matrix_dir()
    path = directory / CONFIG_NAME
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise CatalogueError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path}: not valid TOML: {exc}") from None
    catalogue = load_catalogue(directory) if catalogue is None else catalogue
    factor = data.get("factor")
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor <= 1:
        raise CatalogueError(f"{path}: factor must be a number above 1, got {factor!r}")
    if data.get("scale") not in ("ci", "full"):
        raise CatalogueError(f"{path}: scale must be 'ci' or 'full', got {data.get('scale')!r}")
    for key, wants_gpu in (("cpu_family", False), ("gpu_family", True)):
        name = data.get(key)
        if name not in catalogue:
            raise CatalogueError(f"{path}: {key} = {name!r} is not a family of machines.toml")
        if catalogue[name].has_gpu != wants_gpu:
            raise CatalogueError(f"{path}: {key} = {name!r} {'has no' if wants_gpu else 'has a'} GPU")
    return UpgradeConfig(float(factor), data["scale"], data["cpu_family"], data["gpu_family"])


def continuous_args(base: str, head: str, machine: str, factor: float, bench: list[str], rounds: int | None) -> list:
    args = ["continuous", "--factor", f"{factor:g}", "--machine", machine, "--show-stderr"]
    for regex in bench:
        args += ["--bench", regex]
    if rounds:
        args += ["--attribute", f"rounds={rounds}"]
    return args + [base, head]


def compare_args(base: str, head: str, machine: str, factor: float) -> list:
    return ["compare", "--factor", f"{factor:g}", "--machine", machine, base, head]


@dataclass(frozen=True)
class Row:
    change: str
    before: str
    after: str
    ratio: str
    name: str

    @property
    def ratio_value(self) -> float | None:
        try:
            return float(self.ratio.lstrip("~"))
        except ValueError:
            return None


def parse_compare(text: str) -> list[Row]:
    """Rows of asv compare's GitHub-format table (Change, Before, After, Ratio, Benchmark)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or line.startswith("|--") or "Benchmark (Parameter)" in line:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5:
            rows.append(Row(*cells))
    return rows


def slower(rows: list[Row]) -> list[Row]:
    """Rows asv marks '+': slower by more than the factor, and significant where asv has statistics."""
    return [r for r in rows if r.change == "+"]


@dataclass
class CheckResult:
    continuous_rc: int
    continuous_log: str
    compare_log: str
    rows: list[Row]

    @property
    def regressions(self) -> list[Row]:
        return slower(self.rows)

    @property
    def status(self) -> int:
        if not self.rows:
            return 2
        if self.regressions or self.continuous_rc == 1:
            return 1
        return 0 if self.continuous_rc == 0 else 2


def run_check(repo: Path, base: str, head: str, machine: str, factor: float, bench: list[str], env: dict,
              rounds: int | None = None, timeout: float | None = None) -> CheckResult:
    """asv continuous then asv compare (the full table), in `repo` with `env`."""
    def asv(args):
        proc = subprocess.run([asv_exe(), *args], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=timeout)
        return proc.returncode, proc.stdout + proc.stderr

    rc, log = asv(continuous_args(base, head, machine, factor, bench, rounds))
    _, compare = asv(compare_args(base, head, machine, factor))
    return CheckResult(rc, log, compare, parse_compare(compare))


def verdict(result: CheckResult, factor: float) -> str:
    if result.status == 2 and not result.rows:
        return "the check could not run: asv produced no comparison (see the asv log)"
    lines = []
    if result.regressions:
        lines.append(f"SLOWER by more than x{factor:g}: " + ", ".join(r.name for r in result.regressions))
    elif result.status == 0:
        lines.append(f"no benchmark slower by more than x{factor:g}")
    if result.continuous_rc == 2:
        lines.append("some benchmarks failed or timed out on base or head (asv continuous exit 2)")
    return "; ".join(lines)


def report(result: CheckResult, factor: float, title: str) -> str:
    table = "\n".join(line for line in result.compare_log.splitlines() if line.startswith("|"))
    return (f"## {title}\n\n{table}\n\n**{verdict(result, factor)}** (asv -f {factor:g}: '+' slower and '-' faster by "
            "more than the factor; '~' beyond the factor but not significant; '!' or '*' failed or not comparable)\n")


# ---- local mode: a temporary clone with two commits -------------------------------------------------

_IDENTITY = {"GIT_AUTHOR_NAME": "jaxci upgrade-check", "GIT_AUTHOR_EMAIL": "jaxci@localhost",
             "GIT_COMMITTER_NAME": "jaxci upgrade-check", "GIT_COMMITTER_EMAIL": "jaxci@localhost"}


def _git(repo: Path, *args: str) -> str:
    return git(repo, *args, env=_IDENTITY)


def pin_commit(repo: Path, version: str) -> str:
    """A commit on top of `repo`'s HEAD with every backend's JAX pin moved to `version`."""
    version = jax_version("version", version)
    for backend in BACKENDS:
        path = repo / "env_matrix" / backend / "requirements.txt"
        path.write_text(pin_jax(path.read_text(), version))
        _git(repo, "add", str(path.relative_to(repo)))
    _git(repo, "commit", "--allow-empty", "-q", "-m", f"pin jax {version}")
    return _git(repo, "rev-parse", "HEAD")


def make_clone(workdir: Path, old: str, new: str, source: Path = REPO_ROOT) -> tuple[Path, str, str]:
    """Clone `source` (its committed HEAD) and add two commits: the old pin, then the new pin."""
    repo = workdir / "repo"
    if repo.exists():
        raise InputError(f"--workdir {workdir}: already holds {repo} from an earlier check; give a new or empty "
                         f"folder, or remove {repo}")
    git(workdir, "clone", "-q", "--no-local", str(source), str(repo))
    return repo, pin_commit(repo, old), pin_commit(repo, new)


def local_env(home: Path, scale: str = "ci") -> dict:
    """asv's environment for a local check: HOME (asv's machine file) in the work dir, pip's and uv's caches kept;
    with JAXCI_OFFLINE=1, pip may install only from PIP_FIND_LINKS (no index)."""
    env = dict(os.environ)
    if env_flag("JAXCI_OFFLINE", env):
        if not env.get("PIP_FIND_LINKS"):
            raise InputError("JAXCI_OFFLINE=1: local mode installs both JAX pins and there is no package index; "
                             "set PIP_FIND_LINKS to a folder of wheels, or run it where the index is reachable")
        env["PIP_NO_INDEX"] = "1"
    env.setdefault("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
    env["HOME"] = str(home)
    return asv_env(scale, "cpu", env)


def local_check(old: str, new: str, bench: list[str], factor: float, workdir: Path,
                rounds: int | None = None) -> tuple[CheckResult, str, str]:
    from jaxci.machines.register import register

    env = local_env(workdir)  # refuses JAXCI_OFFLINE=1 without wheels before anything is cloned
    repo, base, head = make_clone(workdir, old, new)
    register(LOCAL_MACHINE, local=True, machine_file=str(workdir / ".asv-machine.json"))
    result = run_check(repo, base, head, LOCAL_MACHINE, factor, bench, env, rounds=rounds)
    return result, base, head

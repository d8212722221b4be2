"""The machine catalogue, JAX pins and memory policies in env_matrix/, read into plain data.

Each catalogue figure is `{value, source}` or `{reason}`; here it becomes a `Figure` whose value is
None when the catalogue gives a reason instead of a sourced number, so nothing downstream can mistake
a missing figure for a measured or sourced one.

Two kinds of machine: runner families (kind "runner", the default: what CI can ask for, cost and predict)
and lab machines (kind "lab": a GPU lent for a short capture, e.g. an H200). A lab machine is never a
runner family, so `load_catalogue()` returns runner families only; `load_catalogue(include_lab=True)`,
`lab_machines()` and `machine_label()` are for registration, import and labelling ("lab: H200").
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from jaxci import REPO_ROOT

BACKENDS = ("cpu", "cuda13", "tpu")
KINDS = ("runner", "lab")


class CatalogueError(ValueError):
    """A catalogue, pin or policy file is missing, malformed, or does not name what was asked."""


@dataclass(frozen=True)
class Figure:
    value: float | str | None  # a number (int or float) or a name, as the catalogue TOML gives it
    source: str | None = None
    reason: str | None = None

    def __bool__(self) -> bool:  # a figure is "there" only when it has a sourced value
        return self.value is not None


@dataclass(frozen=True)
class Machine:
    name: str
    description: str
    runner: str
    image: str
    backend: str
    spot: str
    bench: bool
    figures: dict[str, Figure] = field(default_factory=dict)
    kind: str = "runner"
    label: str = ""  # lab machines: the short name the report shows after "lab: "

    @property
    def is_lab(self) -> bool:
        return self.kind == "lab"

    def figure(self, key: str) -> Figure:
        return self.figures.get(key, Figure(None, reason=f"{key} is not in the catalogue"))

    def value(self, key: str):
        return self.figure(key).value

    @property
    def has_gpu(self) -> bool:
        return self.value("gpu_model") not in (None, "none")

    @property
    def accelerator(self) -> str | None:
        """The JAX platform of the machine's accelerator: "gpu" (CUDA or ROCm), "tpu", or None (CPU only). The
        runner model's accelerator side reads a TPU's own results where a GPU's would be read (its figures keep
        the catalogue's `gpu_*` key names: the model's names for "the accelerator"), never a GPU's."""
        if self.has_gpu:
            return "gpu"
        return "tpu" if self.backend == "tpu" else None

    def runs_on_label(self, run_id: str = "${{ github.run_id }}", spot: bool = False) -> str:
        """The `runs-on` value a workflow uses for this family."""
        if self.runner == "github":
            return self.image
        return f"runs-on={run_id}/family={self.name}/image={self.image}/spot={'true' if spot else 'false'}"


def env_matrix_dir() -> Path:
    """env_matrix/ of this checkout, or the one $JAXCI_ENV_MATRIX names (installed use, e.g. the action)."""
    explicit = os.environ.get("JAXCI_ENV_MATRIX")
    candidates = [Path(explicit)] if explicit else [REPO_ROOT / "env_matrix", Path.cwd() / "env_matrix"]
    for path in candidates:
        if (path / "machines.toml").is_file():
            return path
    raise CatalogueError(
        "env_matrix/ not found (looked in " + ", ".join(str(p) for p in candidates) +
        "); run from a checkout of jax-ci-bench or set JAXCI_ENV_MATRIX"
    )


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise CatalogueError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path}: not valid TOML: {exc}") from None


def _figure(path: Path, name: str, key: str, raw) -> Figure:
    if not isinstance(raw, dict) or not ({"value", "source"} <= raw.keys() or "reason" in raw):
        raise CatalogueError(f"{path}: machines.{name}.{key} must be {{value, source}} or {{reason}}")
    if "reason" in raw:
        return Figure(None, reason=raw["reason"])
    return Figure(raw["value"], source=raw["source"])


_TEXT_KEYS = ("description", "runner", "image", "backend", "spot", "bench")
# a lab machine is not asked for by a workflow: it needs no runner, image, spot or bench keys
_LAB_KEYS = ("description", "backend", "label")
_LAB_FIXED = {"runner": "lab", "image": "none", "spot": "never", "bench": False}


def _machine(path: Path, name: str, entry: dict) -> Machine:
    kind = entry.get("kind", "runner")
    if kind not in KINDS:
        raise CatalogueError(f"{path}: machines.{name}.kind must be one of {KINDS}, got {kind!r}")
    required = _LAB_KEYS if kind == "lab" else _TEXT_KEYS
    missing = [k for k in required if k not in entry]
    if missing:
        raise CatalogueError(f"{path}: machines.{name} lacks {', '.join(missing)}")
    if entry["backend"] not in BACKENDS:
        raise CatalogueError(f"{path}: machines.{name}.backend must be one of {BACKENDS}")
    text = {k: entry[k] for k in _TEXT_KEYS if k in entry}
    if kind == "lab":
        clash = [k for k in _LAB_FIXED if k in entry]
        if clash:
            raise CatalogueError(f"{path}: machines.{name} is a lab machine: {', '.join(clash)} do not apply "
                                 "(a lab machine is never a runner family)")
        text.update(_LAB_FIXED)
    plain = set(_TEXT_KEYS) | {"kind", "label"}
    figures = {k: _figure(path, name, k, v) for k, v in entry.items() if k not in plain}
    return Machine(name=name, figures=figures, kind=kind, label=str(entry.get("label", "")), **text)


def load_catalogue(directory: Path | None = None, *, include_lab: bool = False) -> dict[str, Machine]:
    """Runner families by name; with include_lab, lab machines too (registration, import, labels)."""
    path = (directory or env_matrix_dir()) / "machines.toml"
    data = _read_toml(path)
    machines = {name: _machine(path, name, entry) for name, entry in data.get("machines", {}).items()}
    if not any(not m.is_lab for m in machines.values()):
        raise CatalogueError(f"{path}: no [machines.*] runner families")
    return machines if include_lab else {n: m for n, m in machines.items() if not m.is_lab}


def lab_machines(directory: Path | None = None) -> dict[str, Machine]:
    """The lab machines of the catalogue (kind = "lab"): lent GPUs whose captures are committed."""
    return {n: m for n, m in load_catalogue(directory, include_lab=True).items() if m.is_lab}


def machine_label(name: str, catalogue: dict[str, Machine] | None = None) -> str:
    """How a report names a results machine: "lab: H200" for a lab machine, else the machine name
    (a runner family is its own name; a local machine keeps its local name)."""
    catalogue = load_catalogue(include_lab=True) if catalogue is None else catalogue
    entry = catalogue.get(name)
    if entry is not None and entry.is_lab:
        return f"lab: {entry.label or name}"
    return name


def same_hardware(a: str, b: str, catalogue: dict[str, Machine] | None = None) -> bool:
    """Two families with the same sourced CPU model and GPU model: a lecture's answer is the same on both (its
    seconds are one kernel's, mostly single-threaded; the instance size changes the core count and memory only)."""
    if a == b:
        return True
    catalogue = load_catalogue() if catalogue is None else catalogue
    ea, eb = catalogue.get(a), catalogue.get(b)
    if ea is None or eb is None:
        return False
    keys = ("cpu_model", "gpu_model")
    return all(ea.value(k) is not None and ea.value(k) == eb.value(k) for k in keys)


def catalogue_defaults(directory: Path | None = None) -> dict[str, Figure]:
    path = (directory or env_matrix_dir()) / "machines.toml"
    data = _read_toml(path)
    return {k: _figure(path, "defaults", k, v) for k, v in data.get("defaults", {}).items()}


def get_machine(name: str, directory: Path | None = None) -> Machine:
    machines = load_catalogue(directory)
    if name not in machines:
        raise CatalogueError(f"unknown machine {name!r}; the catalogue knows: {', '.join(sorted(machines))}")
    return machines[name]


_PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)(\[[A-Za-z0-9_,.-]+\])?==(?P<version>[A-Za-z0-9_.+-]+)$")


def upgrade_factor(directory: Path | None = None, default: float = 1.3) -> float:
    """The slowdown factor of env_matrix/upgrade.toml (the pin-bump gate's), so the release steps, the history's
    confirmations and the upgrade check use one threshold; `default` when the file or its value is unusable."""
    try:
        value = tomllib.loads(((directory or env_matrix_dir()) / "upgrade.toml").read_text()).get("factor")
    except (OSError, ValueError):
        return default
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1 else default


def pin_file(backend: str, directory: Path | None = None) -> Path:
    if backend not in BACKENDS:
        raise CatalogueError(f"unknown backend {backend!r}; expected one of {BACKENDS}")
    return (directory or env_matrix_dir()) / backend / "requirements.txt"


def read_pins(backend: str, directory: Path | None = None) -> dict[str, str]:
    """Exact pins of one backend's requirements file; anything but `name==version` lines is an error."""
    path = pin_file(backend, directory)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise CatalogueError(f"{path}: pin file not found") from None
    pins = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = _PIN.match(line)
        if not match:
            raise CatalogueError(f"{path}:{lineno}: expected an exact pin 'name==version', got {line!r}")
        pins[match["name"].lower()] = match["version"]
    if "jax" not in pins:
        raise CatalogueError(f"{path}: no jax pin")
    return pins


@dataclass(frozen=True)
class MemoryPolicy:
    name: str
    description: str
    env: dict[str, str]

    def environment(self, n_kernels: int, budget: float) -> dict[str, str]:
        """The variables one of n_kernels workers gets; {fraction} becomes budget / n, rounded down
        (never up: N rounded-up fractions could add up to more than the device)."""
        fraction = f"{math.floor(round(budget / n_kernels * 100, 9)) / 100:.2f}"  # 0.58/2 is 0.29, not 0.28
        return {k: v.replace("{fraction}", fraction) for k, v in self.env.items()}


def load_policies(directory: Path | None = None) -> tuple[dict[str, MemoryPolicy], float]:
    path = (directory or env_matrix_dir()) / "memory_policies.toml"
    data = _read_toml(path)
    budget = data.get("budget")
    if not isinstance(budget, (int, float)) or not 0 < budget <= 1:
        raise CatalogueError(f"{path}: budget must be a number in (0, 1]")
    policies = {
        name: MemoryPolicy(name, p.get("description", ""), {k: str(v) for k, v in p.get("env", {}).items()})
        for name, p in data.get("policies", {}).items()
    }
    if "default" not in policies:
        raise CatalogueError(f"{path}: a 'default' policy is required")
    return policies, float(budget)

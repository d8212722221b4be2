"""Before executing: do the lectures' imports exist in the kernel's environment?

Lectures import their own stack (matplotlib, pandas, quantecon, ...). Every lecture's top-level imports are
checked once per kernel with `importlib.util.find_spec` in that kernel's own interpreter (nothing is
imported), so a missing module is said once, with how to provide it, and never shows up as a lecture
failing at its import cell. Modules that live next to a lecture (a local `name.py` or package) are not
checked.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ENV_FILES = ("environment.yml", "environment.yaml", "requirements.txt", "pyproject.toml")
_PROBE = ("import importlib.util, json, sys\n"
          "mods = json.loads(sys.argv[1])\n"
          "def ok(m):\n"
          "    try:\n"
          "        return importlib.util.find_spec(m) is not None\n"
          "    except (ImportError, ValueError):\n"
          "        return False\n"
          "print(json.dumps([m for m in mods if not ok(m)]))\n")


@dataclass
class Preflight:
    kernel_of: dict = field(default_factory=dict)  # lecture -> kernel name
    python_of: dict = field(default_factory=dict)  # kernel name -> interpreter (or why none)
    missing: dict = field(default_factory=dict)  # kernel name -> {module: [lectures]}
    problems: list = field(default_factory=list)  # kernels that could not be checked
    env_files: list = field(default_factory=list)
    probe: object = None  # the host probe the audit judged with (jaxci.audit.repo.judging_probe), None: none

    def missing_for(self, lecture: str) -> list[str]:
        kernel = self.kernel_of.get(lecture)
        return sorted(m for m, users in self.missing.get(kernel, {}).items() if lecture in users)

    def message(self) -> str:
        """One paragraph per kernel that lacks modules; empty when nothing is missing."""
        lines = []
        for kernel, mods in sorted(self.missing.items()):
            if not mods:
                continue
            listed = ", ".join(f"{m} ({len(u)} lecture{'s' if len(u) != 1 else ''})" for m, u in sorted(mods.items()))
            how = (f"install them from {' or '.join(self.env_files)} into {self.python_of.get(kernel)}"
                   if self.env_files else f"install them into {self.python_of.get(kernel)}")
            lines.append(f"kernel {kernel!r} lacks {listed}: {how}, or pass --kernel NAME of an environment "
                         "that has them. Those lectures were not executed; their static verdicts stand.")
        lines += self.problems
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {"kernels": self.python_of, "missing": self.missing, "problems": self.problems,
                "env_files": self.env_files}


def kernel_python(name: str) -> tuple[str | None, str]:
    """The interpreter a kernelspec runs (jupyter_client maps a bare `python` to its own interpreter)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return None, f"no Jupyter kernel named {name!r}"
    exe = spec.argv[0] if spec.argv else ""
    if exe in ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}"):
        return sys.executable, ""
    if spec.language and spec.language.lower() != "python":
        return None, f"kernel {name!r} is not a Python kernel ({spec.language})"
    resolved = exe if Path(exe).is_absolute() else shutil.which(exe)
    return (resolved, "") if resolved else (None, f"kernel {name!r}: interpreter {exe!r} not found")


def missing_modules(python: str, modules: list[str]) -> list[str]:
    proc = subprocess.run([python, "-c", _PROBE, json.dumps(sorted(modules))], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode:
        raise RuntimeError(" ".join(proc.stderr.split())[-300:])
    return json.loads(proc.stdout)


def _local(module: str, lecture: Path | None) -> bool:
    if lecture is None:
        return False
    folder = lecture.parent
    return (folder / f"{module}.py").exists() or (folder / module / "__init__.py").exists()


def check(verdicts, kernel_name: str | None = None) -> Preflight:
    """Check every lecture's imports against its kernel (the notebook's own kernelspec, or kernel_name)."""
    from jaxci.audit.runner import NotebookReadError, read_notebook

    pre = Preflight()
    wanted: dict = {}  # kernel -> {module: [lectures]}
    roots = set()
    for v in verdicts:
        name = kernel_name
        if name is None and v.path_abs is not None:
            try:
                name = read_notebook(v.path_abs).metadata.get("kernelspec", {}).get("name")
            except NotebookReadError:
                name = None
        name = name or "python3"
        pre.kernel_of[v.path] = name
        if v.path_abs is not None:
            roots.add(Path(v.path_abs).resolve().parent)
        for module in v.scan.imports:
            if not _local(module, v.path_abs):
                wanted.setdefault(name, {}).setdefault(module, []).append(v.path)
    for kernel, modules in sorted(wanted.items()):
        python, why = kernel_python(kernel)
        pre.python_of[kernel] = python or why
        if python is None:
            continue  # the runner reports the missing kernel per lecture, as before
        try:
            gone = missing_modules(python, list(modules))
        except (OSError, RuntimeError, subprocess.SubprocessError, ValueError) as exc:
            pre.problems.append(f"kernel {kernel!r}: imports not checked ({type(exc).__name__}: {exc})")
            continue
        pre.missing[kernel] = {m: modules[m] for m in gone}
    top = min(roots, key=lambda p: len(p.parts), default=None)
    for folder in ([top, *top.parents][:3] if top else []):
        pre.env_files += [str(folder / f) for f in ENV_FILES if (folder / f).is_file()]
    return pre

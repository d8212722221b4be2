"""The audit's kernel against the repository's own environment file (issue 69, item 5).

The lecture repositories build in a conda environment (`environment.yml`: `python=3.13`, `anaconda=2026.07`, a
`pip:` list). The audit runs a pip kernel, so it says what it could and could not reproduce: each entry of the
file, its pip equivalent at the version the file names (where one exists), and what the kernel has.

    {"file": "environment.yml", "python": {"named": "3.13", "kernel": "3.12.1", "status": "differs"},
     "entries": [{"name": "anaconda", "channel": "conda", "named": "2026.07", "pip": null,
                  "status": "not-reproducible", "why": "..."},
                 {"name": "kaleido", "channel": "pip", "named": "", "pip": "kaleido", "kernel": "0.2.1",
                  "status": "unpinned"}, ...],
     "differences": ["python", "anaconda", ...]}

Statuses: `same` (the kernel's version satisfies what the file names), `differs`, `unpinned` (the file names no
version: the build takes the newest at build time), `absent` (not in the kernel: a build tool such as
jupyter-book, which runs outside it), `not-reproducible` (no pip equivalent), `installer` (conda's `pip`).
`requirements` gives the pip requirements a kernel is built from (`jaxci audit kernel-requirements`, which
measure/lecture_kernel.sh runs with ENV_FILE).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ENV_NAMES = ("environment.yml", "environment.yaml")
#: conda entries with no pip equivalent, and why
CONDA_ONLY = {
    "anaconda": "a conda distribution (metapackage): it fixes the versions of hundreds of packages the file does "
                "not name; pip has no equivalent, so every package it provides is the kernel's own choice here",
    "pip": "the installer itself",
    "python": "the interpreter: the kernel's Python, compared on its own line",
}
SAME, DIFFERS, UNPINNED, ABSENT, NOT_REPRODUCIBLE = "same", "differs", "unpinned", "absent", "not-reproducible"
INSTALLER = "installer"
_PROBE = ("import json, sys\nfrom importlib import metadata\n"
          "out = {(d.metadata['Name'] or '').lower().replace('_', '-'): d.version for d in metadata.distributions()}\n"
          "print(json.dumps({'python': sys.version.split()[0], 'packages': out}))\n")
#: a conda spec: a name that starts with a letter or digit (a leading '-' would become a pip option: `-e.` installs
#: the repository itself), an operator and a version of version characters only
_CONDA = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_.\-]*)\s*(?:(==|>=|<=|>|<|!=|=)\s*([A-Za-z0-9_.*+!\-]+))?\s*$")


def find(root: Path) -> Path | None:
    """The repository's environment file, if it has one at its top."""
    return next((root / n for n in ENV_NAMES if (root / n).is_file()), None)


def entries(doc) -> list[dict]:
    """The file's dependencies: conda entries ('numpy=2.1', 'anaconda=2026.07') and the `pip:` list's."""
    deps = doc.get("dependencies") if isinstance(doc, dict) else None
    out = []
    for item in deps if isinstance(deps, list) else []:
        if isinstance(item, str):
            out.append(conda_entry(item))
        elif isinstance(item, dict) and isinstance(item.get("pip"), list):
            out += [pip_entry(p) for p in item["pip"] if isinstance(p, str)]
    return out


def conda_entry(text: str) -> dict:
    """A conda spec as its pip equivalent: `name=1.2` means 1.2.* (conda's fuzzy match), `name==1.2.3` exactly."""
    m = _CONDA.match(text.split("::")[-1])
    if not m:
        return {"name": text, "channel": "conda", "named": "", "pip": None, "status": NOT_REPRODUCIBLE,
                "why": "not a conda spec this audit reads"}
    name, op, version = m.group(1).lower(), m.group(2), m.group(3) or ""
    entry = {"name": name, "channel": "conda", "named": version if op in (None, "=") else f"{op}{version}"}
    if name in CONDA_ONLY:
        return {**entry, "pip": None, "status": INSTALLER if name == "pip" else NOT_REPRODUCIBLE,
                "why": CONDA_ONLY[name]}
    if op == "=":
        return {**entry, "pip": f"{name}=={version}.*" if version.count(".") < 2 else f"{name}=={version}"}
    return {**entry, "pip": f"{name}{op or ''}{version}"}


def pip_entry(text: str) -> dict:
    """A `pip:` requirement, as the file writes it."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return {"name": text, "channel": "pip", "named": "", "pip": None, "status": NOT_REPRODUCIBLE,
                "why": "not a requirement pip reads"}
    return {"name": req.name.lower(), "channel": "pip", "named": str(req.specifier), "pip": text.strip()}


def compare(entry: dict, installed: dict[str, str]) -> dict:
    """The entry with the kernel's version and the status it has against it."""
    from packaging.requirements import Requirement
    from packaging.version import InvalidVersion

    if entry.get("pip") is None:
        return entry
    name = entry["name"].replace("_", "-")
    version = installed.get(name)
    if version is None:
        return {**entry, "kernel": None, "status": ABSENT}
    spec = Requirement(entry["pip"]).specifier
    if not str(spec):
        return {**entry, "kernel": version, "status": UNPINNED}
    try:
        ok = spec.contains(version, prereleases=True)
    except InvalidVersion:
        ok = False
    return {**entry, "kernel": version, "status": SAME if ok else DIFFERS}


def python_line(named: str | None, kernel: str | None) -> dict:
    """The interpreter: the file's `python=3.13` against the kernel's 3.12.1 (same when the named prefix holds)."""
    same = bool(named and kernel and (kernel == named or kernel.startswith(named + ".")))
    return {"named": named, "kernel": kernel, "status": SAME if same else DIFFERS if named else UNPINNED}


def record(doc, installed: dict[str, str], python: str | None, file: str) -> dict:
    """The audit's `kernel_environment` block from the parsed file and the kernel's distributions."""
    listed = [compare(e, installed) for e in entries(doc)]
    named_python = next((e["named"] for e in listed if e["name"] == "python"), None)
    py = python_line(named_python, python)
    differences = (["python"] if py["status"] == DIFFERS else []) + \
        [e["name"] for e in listed if e.get("status") in (DIFFERS, NOT_REPRODUCIBLE) and e["name"] != "python"]
    return {"file": file, "python": py, "entries": [e for e in listed if e["name"] != "python"],
            "differences": differences}


def kernel_packages(python: str) -> tuple[str | None, dict[str, str]]:
    """The kernel interpreter's Python version and installed distributions (package metadata; nothing imported)."""
    proc = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    data = json.loads(proc.stdout)
    return data.get("python"), data.get("packages") or {}


def for_kernel(root: Path, kernel: str) -> dict | None:
    """The block for the repository at `root` and the named kernel; None without an environment file; a block
    naming the problem when either side cannot be read."""
    from jaxci.audit.runner.envcheck import kernel_python
    from jaxci.util import safeyaml

    path = find(root)
    if path is None:
        return None
    try:
        doc = safeyaml.load(path)
    except (OSError, ValueError) as exc:
        return {"file": path.name, "problem": f"not read: {type(exc).__name__}"}
    python, why = kernel_python(kernel)
    if python is None:
        return {"file": path.name, "problem": why}
    try:
        version, installed = kernel_packages(python)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return {"file": path.name, "problem": f"kernel not probed: {type(exc).__name__}"}
    return {"kernel": kernel, **record(doc, installed, version, path.name)}


def stack_lines(text: str) -> list[tuple[str, str]]:
    """(normalised name, requirement) of each requirement line of a stack file (measure/lecture-kernel.txt)."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append((re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0].lower().replace("_", "-"), line))
    return out


def requirements(doc, stack: str) -> tuple[str | None, list[str]]:
    """(the Python version the environment file names, the requirement lines of a kernel built from it): every
    entry with a pip equivalent at the version the file names (`pip:` entries as written, conda `name=1.2` as
    `name==1.2.*`), then the lecture stack for what the file leaves to its conda distribution (`anaconda=2026.07`
    names no versions: pip's newest stands in), each package the file names taken at its version instead."""
    listed = entries(doc)
    python = next((e["named"] for e in listed if e["name"] == "python"), None)
    named = {e["name"].replace("_", "-"): e["pip"] for e in listed if e.get("pip")}
    lines = [f"# from the environment file: {len(named)} entr{'y' if len(named) == 1 else 'ies'}", *named.values(),
             "# the lecture stack (measure/lecture-kernel.txt), less what the file names"]
    lines += [req for name, req in stack_lines(stack) if name not in named]
    return python, lines

"""Every line that installs jax, jaxlib or numpyro: in every workflow file (each `pip install` / `conda install`
line of any job, continuation lines included) and in every requirements or environment file the workflows
install (`pip install -r FILE`, `environment-file: FILE`, `conda env create -f FILE`) or the repository
keeps at its top (`requirements*.txt`, `environment.yml`).

The version check judges each line on its own: the same `jax[cuda13]` written in three workflows is three
lines, each with its file:line, pinned or not. Reading only; the rules live in jaxci.audit.lecture_ci.core.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from jaxci.audit.reading.yamlread import load
from jaxci.util import safeio

WATCHED = ("jax", "jaxlib", "numpyro")
#: a command that installs packages (pip, uv pip, python -m pip, conda / mamba / micromamba)
INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b|\b(?:conda|mamba|micromamba)\s+"
                     r"(?:install|create)\b")
REQUIREMENT_FLAG = re.compile(r"(?:^|\s)(?:-r|--requirement)[ =]?\s*(['\"]?)([^\s'\"]+)\1")
ENV_FILE = re.compile(r"\benvironment-file:\s*(['\"]?)([^\s'\"#]+)\1")
#: `conda env create ... -f FILE`: the command, then its first -f after it (two searches, so a line repeating the
#: command without -f is read in linear time, not retried from every start)
CONDA_ENV = re.compile(r"\b(?:conda|mamba|micromamba)\s+env\s+(?:create|update)\b")
FILE_FLAG = re.compile(r"\s(?:-f|--file)[ =]?\s*(['\"]?)([^\s'\"]+)\1")
_TOKEN = re.compile(r"^(?:[A-Za-z0-9_-]+::)?(?P<name>[A-Za-z0-9_.-]+)(?P<extras>\[[^\]]*\])?(?P<spec>[^#;]*)$")


@dataclass(frozen=True)
class InstallLine:
    file: str
    line: int              # 1-based
    name: str              # jax | jaxlib | numpyro
    text: str              # the entry as written (quotes stripped): what a pin edit replaces
    extras: str            # e.g. "[cuda13]"
    spec: str              # "==0.12.0", ">=0.4", "" (unpinned)
    manager: str           # pip | conda
    via: str               # workflow | requirements | environment

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def version(self) -> str | None:
        """The exact version when the line pins one (pip `==x`, conda `=x` or `==x`)."""
        pattern = r"==?([0-9][A-Za-z0-9.+!-]*)" if self.manager == "conda" else r"===?([0-9][A-Za-z0-9.+!-]*)"
        m = re.fullmatch(pattern, self.spec)
        return m.group(1) if m else None

    def as_dict(self) -> dict:
        return {"where": self.where, "name": self.name, "entry": self.text, "spec": self.spec,
                "version": self.version, "manager": self.manager, "via": self.via}


def entry(token: str, file: str, line: int, manager: str, via: str) -> InstallLine | None:
    """One install entry (`jax[cuda13]==0.12.0`, `numpyro>=0.15`, `conda-forge::jax=0.4`) if it is watched."""
    token = token.strip().strip("'\"")
    m = _TOKEN.match(token)
    if not m or m["name"].lower() not in WATCHED:
        return None
    spec = m["spec"].strip().replace(" ", "")
    text = token.split("#", 1)[0].split(";", 1)[0].strip()
    return InstallLine(file, line, m["name"].lower(), text, m["extras"] or "", spec, manager, via)


def _workflow_lines(text: str, rel: str) -> tuple[list[InstallLine], set[str]]:
    """Watched install entries of one workflow file, line by line, and the files it installs from."""
    out: list[InstallLine] = []
    files: set[str] = set()
    going = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#"):
            continue
        files.update(m.group(2) for m in ENV_FILE.finditer(line))
        conda_env = CONDA_ENV.search(line)
        flag = conda_env and FILE_FLAG.search(line, conda_env.end())
        if flag:
            files.add(flag.group(2))
        hit = INSTALL.search(line)
        if hit or going:
            manager = going or ("conda" if hit and ("conda" in hit.group(0) or "mamba" in hit.group(0)) else "pip")
            rest = line[hit.end():] if hit else line
            files.update(m.group(2) for m in REQUIREMENT_FLAG.finditer(rest))
            for token in re.split(r"\s+", rest.split(" #", 1)[0].rstrip("\\")):
                if token and not token.startswith("-"):
                    found = entry(token, rel, n, manager, "workflow")
                    if found:
                        out.append(found)
            going = manager if line.endswith("\\") else None
    return out, files


def _requirements(root: Path, rel: str, seen: set, errors: list) -> list[InstallLine]:
    path = root / rel
    if rel in seen or not path.is_file():
        return []
    seen.add(rel)
    try:
        lines = safeio.read_text(path).splitlines()
    except safeio.UnsafeFile as exc:
        errors.append(f"{rel}: cannot read: {exc.reason}")
        return []
    out = []
    for n, text in enumerate(lines, 1):
        text = text.strip()
        nested = REQUIREMENT_FLAG.match(text)
        if nested:  # -r other.txt, relative to this file
            out += _requirements(root, (Path(rel).parent / nested.group(2)).as_posix(), seen, errors)
        elif text and not text.startswith(("#", "-")):
            found = entry(text, rel, n, "pip", "requirements")
            if found:
                out.append(found)
    return out


def _environment(root: Path, rel: str, seen: set, errors: list) -> list[InstallLine]:
    path = root / rel
    if rel in seen or not path.is_file():
        return []
    seen.add(rel)
    doc = load(path, rel)
    if doc.error or not isinstance(doc.data, dict):
        return []  # settings.read_env reports the parse error once
    out = []
    deps = doc.data.get("dependencies") or []
    for i, dep in enumerate(deps if isinstance(deps, list) else []):
        if isinstance(dep, str):
            out.append(entry(dep, rel, doc.line("dependencies", i) or 0, "conda", "environment"))
        elif isinstance(dep, dict) and isinstance(dep.get("pip"), list):
            out += [entry(item, rel, doc.line("dependencies", i, "pip", j) or 0, "pip", "environment")
                    for j, item in enumerate(dep["pip"]) if isinstance(item, str)]
    return [x for x in out if x is not None]


def collect(root, workflows) -> tuple[list[InstallLine], list[str]]:
    """Every watched install line, in workflow files first, then the files they install, then the
    repository's top-level requirements*.txt and environment files; and what could not be read."""
    root = Path(root)
    out: list = []
    files: list = []
    errors: list = []
    for wf in workflows:
        if wf.doc is None or not wf.doc.text:
            continue
        lines, used = _workflow_lines(wf.doc.text, wf.file)
        out += lines
        files += sorted(used)
    files += [p.relative_to(root).as_posix() for p in sorted(root.glob("requirements*.txt"))]
    files += ["environment.yml", "environment.yaml", "lectures/environment.yml"]
    seen: set = set()
    for rel in files:
        while rel.startswith("./"):
            rel = rel[2:]
        reader = _environment if rel.endswith((".yml", ".yaml")) else _requirements
        out += reader(root, rel, seen, errors)
    return out, errors

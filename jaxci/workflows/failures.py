"""Fail once: record the notebooks a build failed on, and skip executing them in later builds until they change.

Neither engine skips a known failure by itself. jupyter-cache (Jupyter Book 1.x, MyST-NB's cache mode) stores a
failed notebook as a project record with a traceback and never caches it, so every build that reads it executes
it again; mystmd never caches a notebook that raised (`_build/execute/` holds successes only) and executes it on
every build. The policy here, for both:

1. after the gating build, `record` writes each failed notebook (its path relative to the project) with the
   hash of its code (`content_hash`: the kernelspec name and the code cells' sources, the same for both engines)
   and the last line of its error; a recorded failure that this build skipped is kept while it is unchanged;
2. before every later build, `unchanged` lists the recorded failures whose notebook still has that hash, and the
   engine is told not to execute them: Jupyter Book 1.x through `execute.exclude_patterns` in `_config.yml`
   (`exclude_in_config`), mystmd through the page's own front matter `execute: {skip: true}` (`skip_pages`); both
   are edits to the build's checkout, never committed. The page is still built, with its code and no outputs; a
   notebook whose code changed has a new hash and runs again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
from pathlib import Path

from jaxci.util import quoting
from jaxci.util.jsonschema_import import skip_iri_syntax_checkers
from jaxci.util.quoting import glob_literal
from jaxci.util.safeio import UnsafeFile, check, check_name, load_json, read_text
from jaxci.util.validate import InputError, inside, quoted

FORMAT = 1
#: the tables and columns of jupyter-cache's database this module reads (jupyter-cache 1.x)
SCHEMA = {"nbproject": {"pk", "uri", "read_data", "traceback"}, "nbcache": {"pk", "hashkey", "uri"}}
SQLITE_HEADER = b"SQLite format 3\x00"


class FailuresError(ValueError):
    """A cache folder or a known-failures file that cannot be read: the message says which and why."""


def check_database(path) -> Path:
    """The cache folder's global.db, refused unless it is a regular file (not a link), an SQLite database
    and has jupyter-cache's tables: read-only, before jupyter-cache opens it (which would add its tables to
    an empty or foreign database and raise a traceback on a corrupt one)."""
    db = Path(path, "global.db")
    if not Path(path).is_dir() or not db.exists() and not db.is_symlink():
        raise FailuresError(f"{path}: not a jupyter-cache folder (no global.db)")
    try:
        check_name(db, links=False)
        with open(db, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except (UnsafeFile, OSError) as exc:
        raise FailuresError(f"{db}: {getattr(exc, 'reason', None) or exc}") from None
    if head != SQLITE_HEADER:
        raise FailuresError(f"{db}: not a jupyter-cache database ({'empty' if not head else 'not SQLite'})")
    try:
        with contextlib.closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as con:
            tables = {t: {c[1] for c in con.execute(f"pragma table_info({t})")} for t in SCHEMA}
    except sqlite3.Error as exc:
        raise FailuresError(f"{db}: not a jupyter-cache database ({type(exc).__name__}: corrupt?)") from None
    lacking = [t for t, columns in SCHEMA.items() if not columns <= tables[t]]
    if lacking:
        raise FailuresError(f"{db}: not a jupyter-cache database (no {' or '.join(lacking)} table as jupyter-cache "
                            "1.x writes it)")
    return db


def _cache(path):
    try:
        from jupyter_cache import get_cache
    except ImportError:
        raise FailuresError("jupyter-cache is not installed (pip install jupyter-cache)") from None
    check_database(path)
    return get_cache(str(path))


@contextlib.contextmanager
def _reading(path):
    """jupyter-cache's errors (sqlalchemy's, a RuntimeError, a notebook it cannot parse) as one line: the type
    only, since its messages may quote what a record names."""
    try:
        yield
    except (FailuresError, InputError):
        raise
    except Exception as exc:  # noqa: BLE001 (a third-party database: any error is "cannot be read")
        raise FailuresError(f"{path}: the jupyter-cache project cannot be read ({type(exc).__name__})") from None


def notebook(rec, project: Path) -> Path | None:
    """The notebook a cache record names, if it lies inside `project` (links resolved); None when it is not
    a regular file of at most safeio's text limit (missing, a FIFO, a device: it cannot match a failure).
    Outside the project it is refused: nothing it names is opened."""
    uri = Path(rec.uri)
    if not uri.is_absolute() or not inside(uri, project):
        raise FailuresError(f"cache record {rec.pk}: notebook {quoted(rec.uri, 80)} is outside the project "
                            f"{project.resolve()} (--project, default: the current folder); refused, not read")
    try:
        check(uri)
    except UnsafeFile:
        return None
    return uri


def record(cache_path, project=".", keep: dict | None = None) -> dict:
    """{"format": 1, "failures": {path: {"hash", "error"}}}: every notebook of the jupyter-cache project with a
    traceback and no cache entry, by its path relative to `project` (every notebook a record names must lie inside
    it), plus the entries of `keep` (the record this build skipped by) whose notebook is still unchanged."""
    project = Path(project)
    with _reading(cache_path):
        cache = _cache(cache_path)
        failures = {}
        for rec in cache.list_project_records():
            if not rec.traceback:
                continue
            uri = notebook(rec, project)
            if uri is not None and cache.get_cached_project_nb(rec.pk) is not None:
                continue
            failures[_relative(rec.uri, project)] = {"hash": content_hash(uri) if uri else None,
                                                     "error": _last_line(rec.traceback)}
    return {"format": FORMAT, "failures": {**_kept(keep, project), **failures}}


def record_mystmd(site, project=".", keep: dict | None = None) -> dict:
    """The same record from a mystmd build: each page of `site/content/*.json` (mystmd's built pages) holding an
    error output, by its location in the project."""
    project, content = Path(project), Path(site) / "content"
    if not content.is_dir():
        raise FailuresError(f"{quoting.line(site)}: not a mystmd site folder (no content/; run `myst build "
                            "--execute` first)")
    failures = {}
    for page in sorted(content.glob("*.json")):
        try:
            data = load_json(page)
        except (OSError, ValueError) as exc:
            raise FailuresError(f"{page}: cannot read a built page: {exc}") from None
        location = data.get("location") if isinstance(data, dict) else None
        error = _error_output(data.get("mdast") if isinstance(data, dict) else None)
        if isinstance(location, str) and error is not None and not _unusable(location):
            rel = location.lstrip("/")
            path = project / rel
            if not inside(path, project):
                raise FailuresError(f"{page}: location {quoted(location, 80)} is outside the project {project}")
            failures[rel] = {"hash": content_hash(path) if path.is_file() else None, "error": error}
    return {"format": FORMAT, "failures": {**_kept(keep, project), **failures}}


def _last_line(traceback: str) -> str:
    """The last non-blank line of a traceback, as quoting.line writes it (escape sequences dropped, every other
    control character escaped): a record holds one plain line whatever the kernel sent."""
    lines = [x for x in (quoting.line(raw).strip() for raw in str(traceback or "").splitlines()) if x]
    return lines[-1][:300] if lines else ""


def _error_output(node, depth: int = 0) -> str | None:
    """The last line of the first error output in a mystmd page's mdast, or None."""
    if depth > 200:
        return None
    if isinstance(node, dict):
        data = node.get("jupyter_data")
        if isinstance(data, dict) and data.get("output_type") == "error":
            tb = data.get("traceback")
            text = tb if isinstance(tb, str) else "\n".join(t for t in tb or [] if isinstance(t, str))
            return _last_line(text) or quoting.line(f"{data.get('ename', 'error')}: {data.get('evalue', '')}", 300)
        children = node.get("children")
        return _error_output(children, depth + 1) if children is not None else None
    if isinstance(node, list):
        return next((e for e in (_error_output(c, depth + 1) for c in node) if e is not None), None)
    return None


def _relative(uri, project: Path) -> str:
    path = Path(uri)
    return path.resolve().relative_to(project.resolve()).as_posix() if path.is_absolute() else path.as_posix()


def _kept(keep: dict | None, project: Path) -> dict:
    """The entries of the record a build skipped by that are still unchanged (they were not executed, so the
    build could not fail them again)."""
    keep = keep or {}
    return {rel: keep[rel] for rel in unchanged(keep, project)}


def content_hash(path) -> str | None:
    """The hash a failure is matched by: the kernelspec name and the code cells' sources (what both engines key
    their execution on; narrative and outputs left out). None when the notebook cannot be read."""
    path = Path(path)
    skip_iri_syntax_checkers()
    try:
        text = read_text(path)
        if path.suffix == ".ipynb":
            import nbformat

            nb = nbformat.reads(text, as_version=4)
        else:
            import jupytext

            nb = jupytext.reads(text, fmt=path.suffix.lstrip(".") or "md")
    except Exception:  # noqa: BLE001 (an unreadable notebook matches no recorded failure: it runs)
        return None
    kernel = (nb.metadata.get("kernelspec") or {}).get("name", "")
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    return hashlib.sha256(json.dumps([kernel, code]).encode()).hexdigest()


def unchanged(known: dict, project=".") -> list[str]:
    """The recorded failures (paths relative to `project`, or absolute inside it) whose notebook still has the
    recorded hash: the ones a build skips. A name that cannot be a file name (a control character: `_unusable`)
    matches no notebook: it is left out (it runs), as `passed_over` says."""
    project = Path(project)
    out = []
    for name, entry in sorted(known.items()):
        if _unusable(name):
            continue
        path = _path(name, project)
        if not inside(path, project):
            raise FailuresError(f"known failure {quoted(name, 80)} is outside the project {project.resolve()}")
        if entry.get("hash") and path.is_file() and content_hash(path) == entry["hash"]:
            out.append(name)
    return out


def _unusable(name: str) -> str:
    """Why a recorded name cannot be skipped by name ('' when it can): a control character (a NUL is no file
    name; a newline or tab cannot be one line of a glob list or of the log)."""
    bad = quoting._CONTROL.search(name)
    return f"its name holds the control character {bad.group()!r}" if bad else ""


def passed_over(known: dict) -> list[str]:
    """A note for each recorded failure that cannot be skipped by its name: it runs as it would without a record."""
    return [f"not skipping {quoting.line(name, 200)}: {why}; it runs as usual" for name in sorted(known)
            if (why := _unusable(name))]


def _path(name: str, project) -> Path:
    """A recorded notebook's file: relative to the project, or absolute (older records)."""
    return Path(name) if Path(name).is_absolute() else Path(project) / name


def exclude_in_config(config, names: list[str]) -> list[str]:
    """Add `names` (as literal globs) to `execute.exclude_patterns` of a Jupyter Book 1.x `_config.yml`, in place
    (the build's checkout); the patterns added."""
    import yaml

    from jaxci.util import safeyaml

    try:
        data = safeyaml.parse(read_text(config, safeyaml.LIMIT), config) or {}
    except (OSError, UnsafeFile) as exc:
        raise FailuresError(f"{config}: cannot read the book config: {getattr(exc, 'reason', None) or exc}") from None
    if not isinstance(data, dict) or not isinstance(data.setdefault("execute", {}), dict):
        raise FailuresError(f"{config}: not a Jupyter Book config (no mapping, or `execute` is not one)")
    try:
        patterns = [glob_literal(n, "notebook") for n in names]
    except InputError as exc:
        raise FailuresError(str(exc)) from None
    have = data["execute"].get("exclude_patterns") or []
    if not isinstance(have, list):
        raise FailuresError(f"{config}: execute.exclude_patterns is not a list")
    data["execute"]["exclude_patterns"] = have + [p for p in patterns if p not in have]
    from jaxci.util import safewrite

    safewrite.write_text(config, yaml.safe_dump(data, sort_keys=False), option="--config")
    return patterns


_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)---[ \t]*\r?\n", re.S)


def plan_pages(project, names: list[str]) -> tuple[dict, list[str]]:
    """({name: (page path, its new text, front matter with `execute: {skip: true}`)}, notes): every page planned before
    any is written. A page that cannot be edited this way (an .ipynb, front matter that is not a mapping, a page
    that cannot be read) is passed over with a note: it runs as it would without a record. A BOM and CRLF line
    ends are kept (the new front matter is the page's own, not a second block before it)."""
    from jaxci.util import safeyaml

    edits, notes = {}, []
    for name in names:
        path = _path(name, project)
        why = "" if path.suffix == ".md" else "only MyST Markdown pages can be skipped this way (front matter)"
        try:
            text = "" if why else read_text(path)
        except UnsafeFile as exc:
            why = f"cannot read it ({exc.reason})"
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        text = text[len(bom):]
        m = _FRONT.match(text)
        try:
            front = (safeyaml.parse(m.group(1), name) if m else {}) if not why else {}
        except UnsafeFile as exc:
            why = f"its front matter cannot be read ({exc.reason})"
            front = {}
        front = {} if front is None else front
        if not why and not isinstance(front, dict):
            why = "its front matter is not a mapping"
        elif not why and not isinstance(front.setdefault("execute", {}), dict):
            why = "its front matter's `execute` is not a mapping"
        if why:
            notes.append(f"not skipping {quoting.line(name, 200)}: {why}; it runs as usual")
            continue
        front["execute"]["skip"] = True
        nl = "\r\n" if (m.group(0) if m else text.partition("\n")[0] + "\n").endswith("\r\n") else "\n"
        head = "---\n" + yaml_dump(front) + "---\n"
        edits[name] = (path, bom + head.replace("\n", nl) + (text[m.end():] if m else text))
    return edits, notes


def yaml_dump(data) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_all(edits: dict) -> None:
    """Write every planned page or none: a failed write puts back the pages already written, and the error
    says so (a build then runs every page, as without a record)."""
    from jaxci.util import safewrite

    done = []
    try:
        for path, text in edits.values():
            before = read_text(path)
            safewrite.write_text(path, text)
            done.append((path, before))
    except (OSError, UnsafeFile, safewrite.UnsafeWrite) as exc:
        for path, before in reversed(done):
            safewrite.write_text(path, before)
        raise FailuresError(f"{quoting.line(exc)}; no page was changed (every page runs)") from None


def skip_pages(project, names: list[str]) -> tuple[list[str], list[str]]:
    """Set `execute: {skip: true}` in the front matter of each mystmd page (MyST Markdown), in place (the build's
    checkout), all or none of them: (the names skipped, notes on those passed over)."""
    edits, notes = plan_pages(project, names)
    write_all(edits)
    return [n for n in names if n in edits], notes


def _skip_execution(front: dict) -> None:
    """`execute: {skip: true}` set in a page's front matter."""
    execute = front.setdefault("execute", {})
    if not isinstance(execute, dict):
        raise FailuresError("its front matter's `execute` is not a mapping")
    execute["skip"] = True


def known_entry(uri, entry, source) -> dict:
    """One recorded failure as `record` writes it: a notebook path and {"hash": str or null, "error": str}."""
    if not isinstance(uri, str) or not isinstance(entry, dict):
        raise FailuresError(f"{source}: entry {quoted(uri, 80)} is not an object with hash and error")
    if not isinstance(entry.get("hash"), (str, type(None))) or not isinstance(entry.get("error", ""), str):
        raise FailuresError(f"{source}: entry {quoted(uri, 80)}: hash must be a string or null, error a string")
    return {"hash": entry.get("hash"), "error": entry.get("error", "")}


def load_known(path) -> dict:
    try:
        data = load_json(path)
    except (OSError, ValueError) as exc:
        raise FailuresError(f"{path}: cannot read known failures: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("failures"), dict):
        raise FailuresError(f"{path}: not a known-failures file (written by `jaxci failures record`)")
    return {uri: known_entry(uri, entry, path) for uri, entry in data["failures"].items()}


def to_skip(cache_path, same: list[str], remove: bool = False, project=".") -> list[str]:
    """Globs (one a line, for nb_execution_excludepatterns) of the unchanged recorded failures `same` (`unchanged`);
    with a jupyter-cache folder and remove=True they are also taken out of its project, so its executors do not run
    them. Every name is checked as a glob before anything is removed."""
    try:
        patterns = [glob_literal(name, "notebook") for name in same]
    except InputError as exc:
        raise FailuresError(str(exc)) from None
    if cache_path is not None:
        with _reading(cache_path):
            cache = _cache(cache_path)
            records = {rec.uri: rec for rec in cache.list_project_records()}
            for rec in records.values():
                notebook(rec, Path(project))  # a record naming a file outside the project is refused
            if remove:
                for name in same:
                    uri = str(_path(name, project).resolve())
                    if uri in records:
                        cache.remove_nb_from_project(uri)
    return patterns

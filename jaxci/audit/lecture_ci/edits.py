"""Minimal text edits on YAML and requirement files, and the unified diff a maintainer can `git apply`.

The files are never re-dumped: an edit replaces one substring on one line or inserts whole lines before
a line, so comments, quoting and layout stay as the maintainer wrote them. Positions come from the
YAML node marks (jaxci.audit.reading.yamlread).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from jaxci.util.patch import diff_path, file_diff, git_lines

if TYPE_CHECKING:
    from jaxci.audit.lecture_ci import workflows


@dataclass(frozen=True)
class Edit:
    file: str        # relative to the repository root
    line: int        # 1-based
    op: str          # "replace" (old -> new on that line) | "insert" (new lines before that line)
    new: str
    old: str = ""


def replace(file: str, line: int, old: str, new: str) -> Edit:
    return Edit(file, line, "replace", new, old)


def insert(file: str, line: int, lines: list[str]) -> Edit:
    return Edit(file, line, "insert", "".join(text + "\n" for text in lines))


def insert_into_mapping(doc, path: tuple, lines: list[str]) -> Edit | None:
    """Insert `lines` (already formatted without indentation) as the first entries of the block mapping
    at `path`, at the indentation of its first key; None when it is empty or written in flow style."""
    node = doc.node(*path)
    if not isinstance(node, yaml.MappingNode) or node.flow_style or not node.value:
        return None
    first = node.value[0][0]
    pad = " " * first.start_mark.column
    return insert(doc.rel, first.start_mark.line + 1, [pad + text for text in lines])


def _last_line_after(node) -> int:
    """1-based line just after everything `node` spans (its last nested value included)."""
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    end = node.end_mark
    return end.line + 1 if end.column == 0 else end.line + 2  # a block scalar ends at column 0 of the next line


def insert_after_entry(doc, path: tuple, lines: list[str]) -> Edit | None:
    """Insert `lines` as sibling entries right after the mapping entry at `path` (its key's indentation),
    so comments written above other keys stay with them; None when the entry is absent or inline."""
    key = doc.key_node(*path)
    parent = doc.node(*path[:-1])
    if key is None or not isinstance(parent, yaml.MappingNode) or parent.flow_style:
        return None
    pad = " " * key.start_mark.column
    value = doc.node(*path)
    if value is not None and value.start_mark.index < key.end_mark.index:
        # an alias (`runs-on: *gpu`): its node is the anchor's, written elsewhere; the entry is its key's line
        return insert(doc.rel, key.start_mark.line + 2, [pad + text for text in lines])
    return insert(doc.rel, _last_line_after(value), [pad + text for text in lines])


def insert_step_before(doc, step_path: tuple, lines: list[str]) -> Edit | None:
    """Insert a new list item (`lines`: its first line starts with "- ", the rest are its keys, unindented)
    right before the step at `step_path`, at that step's dash column, above the comments written for it."""
    node = doc.node(*step_path)
    if node is None:
        return None
    text = doc.text.splitlines()
    row = node.start_mark.line
    dash = text[row].rfind("-", 0, node.start_mark.column)
    if dash < 0 or text[row][:dash].strip():
        return None
    while row > 0 and text[row - 1].strip().startswith("#") and \
            len(text[row - 1]) - len(text[row - 1].lstrip()) == dash:
        row -= 1
    pad = " " * dash
    return insert(doc.rel, row + 1, [pad + lines[0]] + [pad + "  " + x for x in lines[1:]])


def kernel_steps(report) -> tuple[list[Edit], list[str]]:
    """The kernelspec install step before the first notebook-executing step of every build job (none where
    the job installs that kernel already), and where each went."""
    from jaxci.audit.lecture_ci.workflows import builds_in
    from jaxci.audit.writing.emit import INSTALL_CMD, INSTALL_STEP, KERNEL

    edits, where = [], []
    for job in (j for w in report.workflows for j in w.jobs if j.builds and not j.container):
        if any(s.run and "kernelspec install" in s.run and KERNEL in s.run for s in job.steps):
            continue
        step = next((s for s in job.steps if s.run and builds_in("", s.run)), None)
        if step is None:
            continue
        path = ("jobs", job.id, "steps", step.index)
        lines = [f"- name: {INSTALL_STEP}", f"run: {INSTALL_CMD}"]
        shell = job.doc.node(*path, "shell")
        if isinstance(shell, yaml.ScalarNode) and shell.start_mark.line == shell.end_mark.line:
            raw = job.doc.text.splitlines()[shell.start_mark.line][shell.start_mark.column:shell.end_mark.column]
            lines.append(f"shell: {raw}")  # the build's shell: a conda env is only active in `bash -l {0}`
        edit = insert_step_before(job.doc, path, lines)
        if edit:
            edits.append(edit)
            where.append(f"job `{job.id}` ({job.where}), before the step at {job.file}:{step.line}")
    return edits, where


def apply(texts: dict[str, str], edits: list[Edit]) -> dict[str, str]:
    """New text per file; edits on one file apply bottom-up so earlier line numbers stay valid.
    An edit whose old text is not on its line is skipped (the file changed since it was read)."""
    out = {}
    for file in sorted({e.file for e in edits}):
        lines = texts[file].splitlines(keepends=True)
        eol = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"   # an inserted line ends as the file's do
        no_final_newline = bool(lines) and not lines[-1].endswith("\n")
        if no_final_newline:
            lines[-1] += "\n"
        seen = set()
        for e in sorted((e for e in edits if e.file == file), key=lambda e: (e.line, e.op == "replace"),
                        reverse=True):
            if e in seen:
                continue
            seen.add(e)
            i = e.line - 1
            if e.op == "insert":
                lines[i:i] = [x + eol for x in e.new.splitlines()]
            elif 0 <= i < len(lines) and e.old in lines[i]:
                lines[i] = lines[i].replace(e.old, e.new, 1)
        text = "".join(lines)
        out[file] = text[:-1] if no_final_newline and text.endswith("\n") else text
    return out


def read_exact(root: Path, file: str) -> str:
    """A file's text as git sees it: UTF-8 with its line ends kept (read_text turns CRLF into LF, and a diff of
    the translated text does not apply to the file)."""
    return (Path(root) / file).read_bytes().decode("utf-8")


def changed_files(root: Path, edits: list[Edit]) -> dict[str, tuple[str, str]]:
    """file -> (old text, new text) for every file the edits change."""
    texts = {file: read_exact(root, file) for file in {e.file for e in edits}}
    new = apply(texts, edits)
    return {file: (texts[file], new[file]) for file in sorted(new) if new[file] != texts[file]}


def unified_diff(root: Path, edits: list[Edit]) -> str:
    """A `git apply`-able diff of every edited file (paths a/<file>, b/<file>; jaxci.util.patch refuses a
    path that cannot be written into a diff header, before any file is read)."""
    files = sorted({diff_path(e.file) for e in edits})
    texts = {file: read_exact(root, file) for file in files}
    return "".join(file_diff(file, texts[file], apply(texts, [e for e in edits if e.file == file])[file],
                             _windows_if_lines_agree(texts[file], [e for e in edits if e.file == file]))
                   for file in files)


def _windows_if_lines_agree(text: str, edits: list[Edit]) -> list | None:
    """`windows` where the edits' line numbers (YAML's and str.splitlines', which also break at U+2028, \\x85,
    \\f ...) are git's; None otherwise, so jaxci.util.patch diffs the whole file in git's lines (a hunk cut at a
    U+2028 inside a quoted name did not apply)."""
    return windows(text, edits) if len(text.splitlines()) == len(git_lines(text)) else None


#: untouched lines between two edits that keep them in one window (difflib merges hunks closer than 2 x 3 lines)
_APART = 7


def windows(text: str, edits: list[Edit]) -> list[tuple[int, str, str, list | None]]:
    """[(first old line, 0-based; the old text of the window; its new text; its hunk's lines or None)]: the file
    cut between edits more than _APART lines apart, with 3 lines of context. Each window's hunk is written from
    its edits directly (an edit inserts lines or replaces one in place: no matching needed), checked against
    `apply`; where they disagree, jaxci.util.patch diffs the window with difflib. Linear in the file, however many
    jobs a pull request's workflow has (difflib's matching over the whole file is quadratic)."""
    lines = text.splitlines(keepends=True)
    clusters: list[list[Edit]] = []
    for e in sorted(edits, key=lambda e: (e.line, e.op == "replace")):
        if clusters and e.line - 1 - _end(clusters[-1][-1]) < _APART:
            clusters[-1].append(e)
        else:
            clusters.append([e])
    out = []
    for cluster in clusters:
        a = max(0, cluster[0].line - 1 - 3)
        b = min(len(lines), max(_end(e) for e in cluster) + 3)
        old = "".join(lines[a:b])
        moved = [Edit(e.file, e.line - a, e.op, e.new, e.old) for e in cluster]
        new = apply({cluster[0].file: old}, moved)[cluster[0].file]
        hunk = _hunk(lines[a:b], moved)
        ok = hunk is not None and "".join(x[1:] for x in hunk if x[0] != "+") == old and \
            "".join(x[1:] for x in hunk if x[0] != "-") == new
        out.append((a, old, new, hunk if ok else None))
    return out


def _hunk(lines: list[str], edits: list[Edit]) -> list[str] | None:
    """The lines of one hunk (' ' context, '-' old, '+' new) for `edits` on `lines` (their line numbers relative
    to them), in the order `apply` leaves them; None where an insert lies past the last line."""
    inserts: dict[int, list[str]] = {}
    replaced: dict[int, str] = {}
    for e in dict.fromkeys(edits):
        i = e.line - 1
        if e.op == "insert":
            if not 0 <= i < len(lines):
                return None
            inserts.setdefault(i, []).extend(e.new.splitlines(keepends=True))
    for e in sorted(dict.fromkeys(e for e in edits if e.op == "replace"), key=lambda e: e.line, reverse=True):
        i = e.line - 1
        line = replaced.get(i, lines[i] if 0 <= i < len(lines) else "")
        if 0 <= i < len(lines) and e.old in line:
            replaced[i] = line.replace(e.old, e.new, 1)
    out, run = [], []  # a run of changed lines is written as difflib writes it: its old lines, then its new
    for i, line in enumerate(lines):
        run += ["+" + x for x in inserts.get(i, [])]
        if i in replaced:
            run += ["-" + line, "+" + replaced[i]]
            continue
        out += [x for x in run if x[0] == "-"] + [x for x in run if x[0] == "+"] + [" " + line]
        run = []
    return out + [x for x in run if x[0] == "-"] + [x for x in run if x[0] == "+"]


def _end(e: Edit) -> int:
    """The old line (0-based) just after what an edit touches: its line for a replace, the line it goes before
    for an insert."""
    return e.line if e.op == "replace" else e.line - 1


#: the sharded executed audit, offered beside the patch (a new workflow is the maintainer's choice, not an edit)
SHARDED_AUDIT = ("optional, not in this patch: the executed audit on every pull request as a matrix of shards "
                 "with the jax-env action, merged into one audit that the next run reuses for unchanged lectures: "
                 "copy jax-ci-bench's templates/audit-sharded.yml to .github/workflows/jaxci-audit.yml "
                 "(docs/audit.md, \"Sharded and incremental audits\")")


def container_spans(report) -> list[tuple[str, int, int, str]]:
    """(file, first line, last line, "job `id` runs in IMAGE") of every job that runs in a container: its purpose
    is that container's environment (a hosted-notebook image check, say), so the patch leaves it alone."""
    spans = []
    for job in (j for w in report.workflows for j in w.jobs if j.container):
        node = job.doc.node("jobs", job.id)
        if node is not None:
            spans.append((job.file, node.start_mark.line + 1, node.end_mark.line + 1,
                          f"job `{job.id}` ({job.where}) runs in {job.container}"))
    return spans


def outside_containers(edits: list[Edit], spans) -> tuple[list[Edit], list[str]]:
    """The edits that touch no container job, and one note per container job left alone."""
    kept = [e for e in edits if not any(e.file == f and first <= e.line <= last for f, first, last, _ in spans)]
    return kept, [f"left alone: {what}, its own environment (no kernelspec step, no version pin, no timeout)"
                  for *_, what in spans]


def package_reasons(report) -> list[str]:
    """Each package pin the patch writes, where, and why (the CI audit's finding that asked for it)."""
    return [f"{f.where}: {f.fix}: {f.reason}" for f in report.findings
            if f.kind == "versions" and f.edits and f.fix]


def update_bot(root: Path, packages: list[str]) -> list[str]:
    """Whether the repository's update bot sees the pins: Dependabot reads the ecosystems its dependabot.yml
    names, never a workflow's `run:` lines."""
    if not packages:
        return []
    from jaxci.util import safeyaml

    path = Path(root) / ".github" / "dependabot.yml"
    try:
        doc = safeyaml.load(path) if path.is_file() else None
    except (OSError, ValueError):
        doc = None
    updates = doc.get("updates") if isinstance(doc, dict) else None
    kinds = sorted({str(u.get("package-ecosystem")) for u in updates or [] if isinstance(u, dict)})
    if "pip" in kinds:
        return []
    seen = ", ".join(kinds) or "no dependabot.yml"
    return [f"the pins stay in the workflows' `run:` lines, where the build installs the JAX wheels after the "
            f"environment file; the update bot ({seen}) does not read those lines, so a new JAX release will not "
            "reach this repository as a pull request: run jax-ci-bench's release watch (docs/history.md) or move "
            "the install into a requirements file with a `pip` Dependabot entry"]


def join_emitted(report, config) -> None:
    """Add the CI audit's file changes to the lecture audit's --emit-config patch (jaxci.audit.writing.emit's
    EmittedConfig), so one `git apply` carries both: with them, when the patch pins lectures to the
    python3-jax-cpu kernel, the step that installs that kernel in every build job. CI findings without an
    edit become notes; jobs that run in a container are left alone."""
    from jaxci.audit.writing.emit import INSTALL_STEP, FileChange, pins_kernel

    extra, where = kernel_steps(report) if pins_kernel(config) else ([], [])
    if where:
        config.steps = [s for s in config.steps if INSTALL_STEP not in s]
        config.notes.append("the kernelspec install step is added to " + "; ".join(where))
    if any(j.builds for w in report.workflows for j in w.jobs):
        config.notes.append(SHARDED_AUDIT)
    spans = container_spans(report)
    edits, alone = outside_containers(report.edits + extra, spans)
    config.notes += alone
    if not edits:
        return
    config.packages += package_reasons(report)
    config.notes += update_bot(Path(report.root), config.packages)
    taken = {c.path for c in config.changes}
    for path, (old, new) in changed_files(Path(report.root), edits).items():
        if path in taken:  # never two diffs of one file in a patch
            config.notes.append(f"{path}: CI edits left out (the lecture audit edits this file too): "
                                "apply --ci-patch after this patch")
            continue
        kinds = sorted({f.kind for f in report.findings if any(e.file == path for e in f.edits)
                        or (f.label_edit and f.label_file == path)}
                       | ({"kernelspec install"} if any(e.file == path for e in extra) else set()))
        config.changes.append(FileChange(path, old, new, "CI audit: " + ", ".join(kinds)))
    unpatched = [f for f in report.findings if not (f.edits or f.label_edit)]
    if unpatched:
        config.notes.append("CI findings to act on by hand: "
                            + "; ".join(f"{f.kind} at {f.where}" for f in unpatched))


def job_insert(job, lines) -> Edit | None:
    """New job keys go right after `runs-on` (else first in the job), keeping comments with their keys."""
    return insert_after_entry(job.doc, ("jobs", job.id, "runs-on"), lines) or \
        insert_into_mapping(job.doc, ("jobs", job.id), lines)


def replace_value(doc, path, new: str) -> Edit | None:
    node = doc.node(*path)
    if not isinstance(node, yaml.ScalarNode) or node.start_mark.line != node.end_mark.line:
        return None
    line_text = doc.text.splitlines()[node.start_mark.line]
    old = line_text[node.start_mark.column:node.end_mark.column]
    return replace(doc.rel, node.start_mark.line + 1, old, new) if old else None


def label_edits(job: workflows.Job, changes: dict) -> list[Edit]:
    """Edits that set RunsOn label keys (family, image, spot) on a job, keeping the label's layout."""
    doc, node = job.doc, job.doc.node("jobs", job.id, "runs-on")
    lines = doc.text.splitlines()
    if isinstance(node, yaml.ScalarNode) and node.start_mark.line == node.end_mark.line:
        raw = str(node.value)
        parts = raw.split("/")
        for key, value in changes.items():
            hit = [i for i, p in enumerate(parts) if p.split("=", 1)[0] == key]
            if hit:
                parts[hit[0]] = f"{key}={value}"
            else:
                parts.append(f"{key}={value}")
        new = "/".join(parts)
        line = lines[node.start_mark.line]
        return [replace(doc.rel, node.start_mark.line + 1, raw, new)] if raw in line else []
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        out = []
        for key, value in changes.items():
            item = next((it for it in node.value if isinstance(it, yaml.ScalarNode)
                         and str(it.value).split("=", 1)[0] == key), None)
            if item is not None:
                out.append(replace(doc.rel, item.start_mark.line + 1, str(item.value), f"{key}={value}"))
            else:
                last = node.value[-1]
                pad = " " * max(0, last.start_mark.column - 2)
                out.append(insert(doc.rel, last.end_mark.line + 1 + (1 if last.end_mark.column else 0),
                                     [f"{pad}- {key}={value}"]))
        return out
    return []


def yaml_quote(value: str) -> str:
    return '"' + value.replace('"', '\\"') + '"'

"""An executed audit made fit to commit beside the project (`jaxci audit publish RAW_DIR audits/NAME@COMMIT`):
names and numbers only.

An audit JSON quotes its lectures where that helps a reader at the terminal: a cell's first line, the code line a
size or a trip count came from, the sentence a GPU claim was read in, an exception's message. None of that may be
copied into this repository, so publishing keeps every name (lectures, functions, modules, exceptions), every
number and every cell/line reference, and drops the quoted text. What the report reads (paths, statuses, seconds,
predictions, pins, timeouts) is untouched.
"""

from __future__ import annotations

import re

#: keys whose value is lecture code or text, dropped whole
QUOTED = frozenset({"first_line", "gpu_narrative", "gpu_shown"})
#: keys whose value is a chain of code lines ("cell 17 line 28: x = ... <- cell 17 line 26: n = 100"): kept as
#: the chain of references only
CHAINS = frozenset({"carry_why", "trips_why"})
#: keys whose value is an exception's text: kept as the exception's name
ERRORS = frozenset({"errors", "error", "expected_error"})

_REF = re.compile(r"cell \d+(?: line \d+)?")
_CODE_AFTER_REF = re.compile(r"(cell \d+ line \d+): .*?(?= <- |; |$)")
#: an absolute path of two or more parts (a POSIX one, or a home folder's): the auditing host's layout, which a
#: published audit never keeps (issue 83: a link's resolved target, `--output /work/...` in run.txt)
_HOST_PATH = re.compile(r"(?<![\w.~/-])(?:~/|/)(?:[\w.@+-]+/)+([\w.@+-]*)")
_QUOTE = re.compile(r"(?<!\w)'[^'\n]{16,}'(?!\w)|(?<!\w)\"[^\"\n]{16,}\"(?!\w)")
#: the clauses our own error lines begin with: a platform, a cell (and line), 'kernel failed', 'cannot parse'
_OURS = re.compile(r"cpu|cuda|gpu|tpu|error|kernel failed|cannot parse|cell \d+(?: line \d+)?")
#: an exception's (dotted) name
_NAME = re.compile(r"[A-Za-z_][\w.]{0,119}")


def reference_chain(text: str) -> str:
    """'cell 17 line 28: r = f(n) <- cell 17 line 26: n = 100' -> 'cell 17 line 28 <- cell 17 line 26'; text with
    no reference keeps its words up to the first quoted code (our own wording, e.g. 'default of f(max_iter=...)')."""
    refs = _REF.findall(text)
    return " <- ".join(refs) if refs else _QUOTE.sub("'…'", text.split(": ", 1)[0])


def exception_name(text: str) -> str:
    """An error line up to its exception's name, whatever the name ('cpu: cell 9: URLError: <urlopen ...>' ->
    'cpu: cell 9: URLError', 'cell 3: StopIteration: token=...' -> 'cell 3: StopIteration'): the rule is the
    line's shape (our own clauses, then a name), not the name's ending, so no message of any exception is kept.
    Our own sentences (a timeout, 'kernel failed') keep their clauses and lose whatever follows an unknown one."""
    parts = text.split("\n", 1)[0].split(": ")
    kept = []
    for i, part in enumerate(parts):
        if _OURS.fullmatch(part):
            kept.append(part)
            continue
        if _NAME.fullmatch(part) or i == len(parts) - 1:
            kept.append(part)  # the exception's name, or our own last clause ('cell 33 exceeded the ... timeout')
        else:
            kept.append("…")  # a clause of the lecture's text
        break
    return _QUOTE.sub("'…'", ": ".join(kept))[:160]


def names_and_numbers(text: str) -> str:
    """Any other string: code after a 'cell N line M:' reference, long quoted excerpts and the host's absolute
    paths (each kept as `…/` and its last part) removed."""
    return without_host_paths(_QUOTE.sub("'…'", _CODE_AFTER_REF.sub(r"\1", text)))


def without_host_paths(text: str) -> str:
    """`text` with every absolute path of the auditing host (/work/x/runs/a/audit.json, ~/data/f.csv) shown as
    its last part (…/audit.json): what a published file may say of where the audit ran."""
    return _HOST_PATH.sub(lambda m: "…/" + m.group(1), text)


def scrub(value, key: str = ""):
    """The audit JSON (or any part of it) with every quoted lecture text removed, by the rules above."""
    if isinstance(value, dict):
        return {k: scrub(v, k) for k, v in value.items() if k not in QUOTED}
    if isinstance(value, list):
        return [scrub(v, key) for v in value]
    if not isinstance(value, str):
        return value
    if key in CHAINS:
        return reference_chain(value)
    if key in ERRORS:
        return exception_name(value)
    return names_and_numbers(value)


def relative_paths(audit: dict) -> dict:
    """Each run's absolute lecture path (the checkout's folder on the machine that ran it) as the lecture's own."""
    for lecture in audit.get("lectures", []):
        for run in (lecture.get("runs") or {}).values():
            if isinstance(run, dict) and "path" in run:
                run["path"] = lecture.get("path", "")
    return audit


def publish(audit: dict, provenance: dict) -> dict:
    """The audit to commit: scrubbed, paths relative, and `published` saying where and how it was run."""
    out = {**scrub(relative_paths(audit)), "published": scrub(provenance)}
    if isinstance(out.get("ci"), dict) and "root" in out["ci"]:
        out["ci"]["root"] = "."  # the auditing host's checkout path says nothing about the repository
    return out

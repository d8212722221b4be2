"""The CI audit's rule on the book's per-cell timeout (a rule of jaxci.audit.lecture_ci.core's audit)."""

from __future__ import annotations

from jaxci.audit.lecture_ci import edits as ed
from jaxci.audit.lecture_ci.report import CELL_TIMEOUT, Finding

#: a per-cell timeout more than this many times the proposed one is "far above need" (policy)
FAR_ABOVE = 4.0


def book_timeout(audit) -> None:
    """The book's per-cell timeout by the one rule (jaxci.policy.timeouts.advise): changed only when every
    executed lecture is measured; otherwise the measured lectures that need more get their own value and
    the book keeps its own (no advice lowers it without a measurement of the lecture it would cut)."""
    from jaxci.policy import timeouts

    book = audit.report.book
    if book is None or book.file is None or book.error:
        return
    from jaxci.audit.reading.book import JUPYTER_BOOK_DEFAULT_TIMEOUT

    current = book.timeout if book.timeout_state == "set" else \
        JUPYTER_BOOK_DEFAULT_TIMEOUT if book.timeout_state == "absent" else None
    advice = timeouts.advise(current, {f.path: (f.slowest_cell_s, current) for f in audit.run})
    slowest = max((t.slowest_high_s for t in advice.lectures), default=None)
    need = max((t.seconds for t in advice.lectures), default=None)
    own = {t.path: t.seconds for t in advice.raised}
    unmeasured = f"{len(advice.unmeasured)} of {len(audit.run)} lecture(s) not measured" if advice.unmeasured \
        else ""
    basis = (f"slowest measured cell {slowest:.1f} s: {timeouts.rule_text()}" if slowest is not None
             else "not measured: no lecture's cells were timed")
    inputs = {"configured": book.timeout, "slowest_cell_s": slowest, "proposed_s": advice.book_s,
              "needed_s": need, "per_lecture_s": own, "unmeasured": advice.unmeasured}
    where = book.where(book.timeout_line)
    per_lecture = ("; ".join(f"`{p}`: `execution: timeout: {v}` in its front matter" for p, v in own.items())
                   + f" (the book keeps {'no limit' if current is None else f'{current:g} s'}: {unmeasured})"
                   ) if own else ""
    changed = advice.book_s is not None and advice.book_s != current
    fix = (f"timeout: {advice.book_s} ({basis})" if changed else per_lecture or
           f"keep it until the lectures are timed (`jaxci audit {audit.root} --execute`): no advice lowers a "
           "limit without a measurement")
    edits = []
    if changed and book.timeout_state in ("none", "set"):
        edits = [e for e in [ed.replace_value(book.doc, book.timeout_path, str(advice.book_s))] if e]
    elif changed:
        edits = [e for e in [ed.insert_after_entry(book.doc, ("execute", "execute_notebooks"),
                                                   [f"timeout: {advice.book_s}"])
                             or ed.insert_into_mapping(book.doc, ("execute",), [f"timeout: {advice.book_s}"])] if e]
    label = "measured" if slowest is not None else "not measured"
    if book.timeout_state == "none":
        audit.add(Finding(CELL_TIMEOUT, where, "no per-cell timeout: a hung cell runs until the job stops",
                         "one stuck cell holds the runner for the whole job timeout", label, fix, inputs, edits))
    elif book.timeout_state == "absent" and slowest is not None and book.file.endswith("_config.yml") \
            and need is not None and current is not None and need > current and (changed or own):
        audit.add(Finding(CELL_TIMEOUT, book.where(book.mode_line), f"no execute.timeout: Jupyter Book's default "
                         f"of 30 s is below the slowest measured cell ({slowest:.1f} s)",
                         "the build fails on a cell that is merely slow", "measured", fix, inputs, edits))
    elif book.timeout_state == "set" and slowest is not None:
        if need is not None and book.timeout is not None and need > book.timeout and (changed or own):
            audit.add(Finding(CELL_TIMEOUT, where, f"per-cell timeout {book.timeout:g} s is below what the "
                             f"slowest measured cell ({slowest:.1f} s) needs by the rule", "that lecture fails "
                             "the build although it would finish", "measured", fix, inputs, edits))
        elif changed and advice.book_s is not None and book.timeout is not None \
                and book.timeout > FAR_ABOVE * advice.book_s:
            audit.add(Finding(CELL_TIMEOUT, where, f"per-cell timeout {book.timeout:g} s is far above need "
                             f"(more than {FAR_ABOVE:g} x the proposed {advice.book_s} s, every lecture "
                             "measured)", "a cell that hangs (a GPU launch-bound loop, a dead kernel) holds the "
                             "runner that long before failing", "measured", fix, inputs, edits))

"""No logic reads the project's own sentences back (issue 72): what a later step decides on travels as a typed field
set where the sentence is written. This guard walks jaxci/ for a prefix, suffix, substring or regular-expression
test applied to a field that holds one of our sentences (a row's decision, a finding's fix, a check's caption, a
loop's description ...), and the behaviour tests below pin each replacement. Source text only; nothing runs."""

import ast
from pathlib import Path

import nbformat

from jaxci.analysis.concurrency import Cell
from jaxci.analysis.lecture_record import AuditView, LectureRecord
from jaxci.audit.reading.sizes import PYTHON_LOOPS, Loop, SizeFinding
from jaxci.audit.reading.static import scan_notebook
from jaxci.report import guidance_lines as gl
from jaxci.report import maintainers

PACKAGE = Path(__file__).resolve().parents[1] / "jaxci"
#: attributes and keys that hold sentences the project writes (a reader's text, never a decision's input)
PROSE = {"decision", "basis", "fix", "message", "reason", "why", "what", "case", "verdict", "where", "label_text",
         "narrative", "status_text", "carry_why", "trips_why", "inputs", "caption", "headline", "title",
         "not_executed", "timeout_origin", "gpu_narrative"}
#: reads still standing: none. The last three became fields audit.json version 2 writes (a lecture's `selected`,
#: its `timeout_kind`, the scan's `gpu_shown`); a version-1 audit gets them once, in its one reader's upgrade step
#: (jaxci.audit.writing.record), by comparing whole sentences its writer wrote, never by searching one
STANDING: dict = {}
TESTS = {"startswith", "endswith"}
REGEX = {"search", "match", "fullmatch", "findall", "finditer", "sub", "split"}
COMPILED = {"search", "match", "fullmatch", "findall", "finditer"}  # a compiled pattern's methods: the text first


def _prose(node) -> str | None:
    """The prose field an expression reads (`x.decision`, `row["case"]`, `x.get("why")`, `str(...)` or `... or ""`
    of one), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("lower", "strip"):
        return _prose(node.func.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        return _prose(node.args[0])
    if isinstance(node, ast.BoolOp):
        return _prose(node.values[0])
    if isinstance(node, ast.Attribute) and node.attr in PROSE:
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in PROSE:
        return str(node.slice.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in PROSE):
        return str(node.args[0].value)
    return None


def _reads(tree) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in TESTS and _prose(node.func.value):
                out.append((node.lineno, f"{_prose(node.func.value)}.{node.func.attr}"))
            on_re = isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
            text = node.args[1:2] if on_re else node.args[:1] if node.func.attr in COMPILED else []
            if node.func.attr in REGEX and text and _prose(text[0]):
                out.append((node.lineno, f"{'re.' if on_re else ''}{node.func.attr}({_prose(text[0])})"))
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            left, right = node.left, node.comparators[-1]
            if isinstance(left, ast.Constant) and isinstance(left.value, str) and _prose(right):
                out.append((node.lineno, f"{left.value!r} in {_prose(right)}"))
    return sorted(out)


def test_no_module_reads_our_own_sentences():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        reads = [what for _, what in _reads(ast.parse(path.read_text(), str(path)))]
        if reads:
            found[path.relative_to(PACKAGE.parent).as_posix()] = reads
    assert found == STANDING


def test_the_guard_catches_the_reads_it_replaced():
    """The reads issue 72 removed, as they were written, are each caught."""
    old = '''
f.label_edit = f.kind == SPOT or f.fix.startswith("run the build on")
if more and " alone " not in out[5].decision: pass
if not re.search(pattern, row["case"]): pass
match = _AROUND.search(lp.what)
local = pin.what.startswith(("jax.default_device", "jax.devices"))
hits = [n for n in narrative if "text about GPU speed" not in n.what]
'''
    assert [what for _, what in _reads(ast.parse(old))] == [
        "fix.startswith", "' alone ' in decision", "re.search(case)", "search(what)", "what.startswith",
        "'text about GPU speed' in what"]


# ---- what replaced each read ------------------------------------------------------------------------------

def test_a_pin_line_is_a_type_not_a_phrase():
    """The pin how-to follows the first line written as a PinLine, whatever its words; a line that merely ends
    like one is not one."""
    sections = [("a", ["- plain line", gl.PinLine("- move it (reworded)"), "- ends like one: " + gl.PIN_CODE])]
    out = gl._pin_once(sections, "HOW")
    assert out[0][1] == ["- plain line", "- move it (reworded)", "HOW", "- ends like one: " + gl.PIN_CODE]


def test_the_jax_pin_line_follows_whether_a_workflow_installs_jax():
    """A workflow's install line whose file name reads "pinned..." or "unpinned..." changes nothing."""
    lines = {"ci": {"installs": [{"name": "jax", "where": "pinned-env.yml:3"}]}}
    assert maintainers.repo_pin(lines) == (None, "unpinned (pinned-env.yml:3)", True)
    assert maintainers.repo_pin({"ci": {"installs": []}})[2] is False
    assert maintainers.repo_pin({"ci": {"installs": [{"name": "jax", "version": "0.4.35", "where": "x:1"}]}}) == \
        ("0.4.35", "x:1", True)


def test_the_audit_records_selection_timeout_kind_and_what_shows_the_gpu():
    """--only's choice, whose timeout applies and the scan's GPU display are fields; a version-1 audit is upgraded
    to them in its reader, whatever the words of today's sentences."""
    from jaxci.audit.writing import record
    from jaxci.policy import timeouts, wholebuild

    v1 = {"format": "jaxci-audit", "version": 1, "lectures": [
        {"path": "a.md", "not_executed": record.V1_NOT_SELECTED, "timeout_origin": "_config.yml execute.timeout"},
        {"path": "b.md", "not_executed": "executed by shard 2/2", "timeout_origin": record.V1_NOTEBOOK_ORIGIN},
        {"path": "c.md", "not_executed": ""}]}
    lectures = record.validated(v1)["lectures"]
    assert [lec["selected"] for lec in lectures] == [False, True, True]
    assert [lec["timeout_kind"] for lec in lectures] == [timeouts.BOOK_TIMEOUT, timeouts.NOTEBOOK_TIMEOUT, None]
    not_run = maintainers.not_run(AuditView.from_dict({"lectures": lectures}))
    assert not_run == [("b.md", "executed by shard 2/2")]
    reworded = {"lectures": [{"path": "a.md", "not_executed": "left out (reworded)", "selected": False}]}
    assert maintainers.not_run(AuditView.from_dict(reworded)) == []
    shown = {"path": "d.md", "timeout": 60, "timeout_origin": "its metadata (reworded)",
             "timeout_kind": timeouts.NOTEBOOK_TIMEOUT}
    assert timeouts.book_value(AuditView.from_dict({"lectures": [shown]})) == (None, "")
    md = "# A\n\nOn a GPU this runs much faster than on a CPU.\n"
    code = "import jax\nprint(jax.devices())\n"
    speed = scan_notebook(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(md)]), "s.ipynb")
    shows = scan_notebook(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), "p.ipynb")
    assert speed.gpu_narrative and not speed.gpu_shown and shows.gpu_shown == shows.gpu_narrative
    narrated = {"scan": {"gpu_narrative": ["cell 1: prints jax.devices()"]}}
    assert not wholebuild.shows_the_gpu(LectureRecord.from_dict(narrated))


def test_workers_died_is_the_count_not_the_status_words():
    cell = Cell("m", "gpu", "p", 2, values={"died": 1.0}, status="something else")
    assert cell.workers_died and not Cell("m", "gpu", "p", 2, values={"died": 0.0}, status="1 died").workers_died


def test_the_scan_records_what_later_steps_decide_on():
    """A Python loop's jitted function, a mapped size and a pin's setting are fields of the scan's records."""
    code = '''
import jax, jax.numpy as jnp
@jax.jit
def step(x):
    return x * 2
x = jnp.zeros(1000)
for t in range(500):
    x = step(x)
grid = jax.vmap(lambda a: a)(jnp.zeros((300, 4)))
jax.config.update("jax_platforms", "cpu")
'''
    scan = scan_notebook(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), "lecture.ipynb")
    (loop,) = [lp for lp in scan.loops if lp.in_python]
    assert loop.kind in PYTHON_LOOPS and loop.jitted == "step"
    assert any(f.mapped for f in scan.size_findings) and not all(f.mapped for f in scan.size_findings)
    assert [p.setting for p in scan.pins] == ["jax_platforms"]
    assert not Loop("lax.scan", 1, 1).in_python and not SizeFinding(1, 1, "vmap over [3]", 3).mapped

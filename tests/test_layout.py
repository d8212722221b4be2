"""The layout's rules, read from the source (jaxci/__init__.py says where a change belongs):

- library modules never import a command module and hold no argparse;
- jaxci's top level holds only the runtime that benchmarks import, and the dispatcher;
- benchmarks import from jaxci only that runtime (and the notebook runner);
- asv's result format is read in one module, jaxci.results.records;
- every subpackage says in its docstring what it owns;
- no module is over MAX_LINES lines: past that, it is split by concern.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JAXCI = ROOT / "jaxci"
RUNTIME = {"harness", "workloads", "jaxmon", "nvml", "catalogue", "accel"}
TOP_LEVEL = RUNTIME | {"__init__", "__main__", "cli"}
#: what benchmarks may import from jaxci (the runtime, and the notebook runner the notebooks suite drives)
BENCHMARK_IMPORTS = {f"jaxci.{m}" for m in RUNTIME} | {"jaxci.audit.runner", "jaxci.audit.repo"}
#: the one module that reads asv's result files
RESULTS_READERS = ("jaxci.results.records", "jaxci.results.asvfiles")  # the one adapter: the set, and one file
#: asv's readers and writers of result files (asv.machine's machine *file* belongs to registration)
ASV_FORMAT = {"asv.results", "asv.util.load_json", "asv.util.write_json"}
#: the length at which a module is split by concern
MAX_LINES = 500


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function; `from a import b` counts as a and a.b."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def library_modules():
    for path in sorted(JAXCI.rglob("*.py")):
        name = module_name(path)
        if not name.startswith("jaxci.commands") and name not in ("jaxci.cli", "jaxci.__main__"):
            yield name, path


def test_the_library_never_imports_a_command_module():
    offenders = {name: sorted(i for i in imports(path) if i.startswith("jaxci.commands"))
                 for name, path in library_modules()}
    assert not {k: v for k, v in offenders.items() if v}


def test_no_module_is_longer_than_max_lines():
    lengths = {module_name(path): len(path.read_text().splitlines()) for path in JAXCI.rglob("*.py")}
    assert not {name: n for name, n in lengths.items() if n > MAX_LINES}, "split these by concern"


def test_argparse_lives_only_in_commands():
    assert not [name for name, path in library_modules() if "argparse" in imports(path)]


def test_every_command_of_the_dispatcher_is_a_commands_module():
    from jaxci.cli import COMMANDS

    assert COMMANDS and all(module.startswith("jaxci.commands.") for module, _ in COMMANDS.values())


def test_the_top_level_is_the_runtime_and_the_dispatcher():
    assert {p.stem for p in JAXCI.glob("*.py")} == TOP_LEVEL


def test_benchmarks_import_only_the_runtime():
    used = {}
    for path in sorted((ROOT / "benchmarks").rglob("*.py")):
        found = {i for i in imports(path) if i.startswith("jaxci")}
        # `from jaxci.nvml import gpu_present` counts jaxci.nvml and jaxci.nvml.gpu_present: keep the module
        extra = {i for i in found if i not in BENCHMARK_IMPORTS and i.rsplit(".", 1)[0] not in BENCHMARK_IMPORTS}
        extra.discard("jaxci")
        if extra:
            used[str(path.relative_to(ROOT))] = sorted(extra)
    assert not used


def test_asv_result_files_are_read_in_one_module():
    readers = []
    for path in [*JAXCI.rglob("*.py"), *(ROOT / "scripts").glob("*.py")]:
        name = module_name(path)
        if name in RESULTS_READERS:
            continue
        text = path.read_text()
        if imports(path) & ASV_FORMAT or "result_columns" in text or "Results.load" in text:
            readers.append(name)
    assert not readers, f"read asv's result format through {RESULTS_READERS}: {readers}"


@pytest.mark.parametrize("package", sorted(p.parent for p in JAXCI.rglob("__init__.py")), ids=str)
def test_every_subpackage_says_what_it_owns(package):
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text()))
    assert doc and len(doc.split()) >= 12, f"{package}: a one-paragraph docstring: what it owns, what it may import"


def test_a_library_module_has_a_docstring():
    missing = [name for name, path in library_modules()
               if path.stem != "__init__" and not ast.get_docstring(ast.parse(path.read_text()))]
    assert not missing


#: library modules that write paths a user named (an output option, a GitHub file, a report or site folder)
USER_PATH_WRITERS = {"jaxci.workflows.plan", "jaxci.workflows.release_watch", "jaxci.report.page",
                     "jaxci.report.offline", "jaxci.traces.profile"}
#: the calls that open or write a file themselves, bypassing jaxci.util.safewrite
PLAIN_WRITES = {"open", "write_text", "write_bytes", "copyfile", "copy", "copy2", "copytree", "fdopen"}


def plain_writes(path: Path) -> list[str]:
    """`open(...)`, `x.write_text(...)`, `shutil.copyfile(...)`, ... in a module: calls that write a file
    without safewrite (a FIFO blocks them, a link leads them elsewhere). Reading opens count too: a command
    module reads through safeio."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            through = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id in ("safewrite", "safeio")
            if name in PLAIN_WRITES and not through:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}()")
    return found


def test_commands_and_user_path_writers_write_only_through_safewrite():
    modules = [p for p in sorted((JAXCI / "commands").glob("*.py"))]
    modules += [p for p in sorted(JAXCI.rglob("*.py")) if module_name(p) in USER_PATH_WRITERS]
    assert len(modules) > len(USER_PATH_WRITERS)
    offenders = [hit for path in modules for hit in plain_writes(path)]
    assert not offenders, f"write user-named paths through jaxci.util.safewrite: {offenders}"


#: what jaxci.analysis may import from jaxci ("what we compute from results"): itself and pure helpers
ANALYSIS_IMPORTS = ("jaxci.analysis", "jaxci.util.versions", "jaxci.util.scales",
                    "jaxci.util.quoting", "jaxci.util.bounds")   # pure: a Markdown cell; a job's longest seconds
#: what jaxci.policy may import from jaxci ("what we advise"): the computations, the catalogue, itself (the billing
#: rule is policy.jobcost)
POLICY_IMPORTS = ("jaxci.analysis", "jaxci.policy", "jaxci.catalogue")
#: what reads or writes outside the process: none of it in jaxci.analysis or jaxci.policy
IO_CALLS = ("open(", ".read_text(", ".read_bytes(", ".write_text(", ".write_bytes(", "os.environ", "subprocess",
            "tomllib.load", "json.load(")
#: known exceptions, each with its reason (a finding, not a licence: remove it when the module is fixed)
IO_EXCEPTIONS: dict = {}


def _outside(path: Path, allowed: tuple) -> list[str]:
    return sorted(i for i in imports(path) if i.startswith("jaxci.")
                  and not any(i == a or i.startswith(a + ".") for a in allowed))


@pytest.mark.parametrize("package, allowed", [("analysis", ANALYSIS_IMPORTS), ("policy", POLICY_IMPORTS)])
def test_analysis_computes_and_policy_advises(package, allowed):
    """analysis/ imports only itself (no policy.jobcost, no results reader); policy/ only analysis, the catalogue
    and itself; neither does I/O (docs/layout.md)."""
    bad = {}
    for path in sorted((JAXCI / package).glob("*.py")):
        name = module_name(path)
        if name in IO_EXCEPTIONS:
            continue
        text = path.read_text()
        found = _outside(path, allowed) + [call for call in IO_CALLS if call in text]
        if found:
            bad[name] = found
    assert not bad


def test_the_rules_above_can_fail(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("from jaxci.policy.jobcost import billed_seconds\nfrom jaxci.results.records import Record\n")
    assert _outside(sample, ANALYSIS_IMPORTS) == ["jaxci.policy.jobcost", "jaxci.policy.jobcost.billed_seconds",
                                                  "jaxci.results.records", "jaxci.results.records.Record"]
    assert _outside(sample, POLICY_IMPORTS) == ["jaxci.results.records", "jaxci.results.records.Record"]


def test_one_function_per_rule():
    """Each rule's copies stay removed: each rule has one definition."""
    import re

    rules = {r"^def gpu_wins\(": "jaxci.policy.margins", r"^def cell_timeout\(": "jaxci.policy.timeouts",
             r"^def job_timeout\(": "jaxci.policy.jobcost", r"^def curve_crossover\(": "jaxci.analysis.predict",
             r'^FORMAT = "jaxci-published-figures"': "jaxci.evidence.published"}
    for pattern, home in rules.items():
        where = [module_name(p) for p in sorted(JAXCI.rglob("*.py")) if re.search(pattern, p.read_text(), re.M)]
        assert where == [home], (pattern, where)
    copies = [module_name(p) for p in sorted(JAXCI.rglob("*.py"))
              if re.search(r"ceil\([^)]*(MARGIN|margin)[^)]*/ ?60\)", p.read_text())]
    assert not copies  # a per-cell rule written again (slowest x margin / 60) outside policy.timeouts


#: what each seam of jaxci.audit may import from jaxci (jaxci/audit/*/__init__.py says the same in words)
AUDIT_SEAMS = {
    "reading": ("jaxci.audit.reading", "jaxci.util"),
    "runner": ("jaxci.audit.reading", "jaxci.audit.runner", "jaxci.util", "jaxci.jaxmon", "jaxci.nvml", "jaxci.accel"),
    "judging": ("jaxci.audit.reading", "jaxci.audit.judging", "jaxci.analysis", "jaxci.policy",
                "jaxci.catalogue", "jaxci.results.records", "jaxci.accel"),
    "writing": ("jaxci.audit.reading", "jaxci.audit.judging", "jaxci.audit.writing", "jaxci.policy", "jaxci.util",
                "jaxci.accel", "jaxci.analysis.prediction", "jaxci.analysis.lecture_record"),
}


def _seam_imports(path: Path) -> set[str]:
    """imports() plus `from jaxci import jaxmon` read as jaxci.jaxmon (imports() counts it as `jaxci.jaxmon` too)."""
    return {i for i in imports(path) if i.startswith("jaxci.")}


@pytest.mark.parametrize("seam", sorted(AUDIT_SEAMS))
def test_each_audit_seam_imports_only_what_its_docstring_allows(seam):
    """Reading never runs or judges, the runner never judges or writes, judging reads a run through its fields:
    so each part can be read, tested and replaced on its own."""
    allowed = AUDIT_SEAMS[seam]
    bad = {}
    for path in sorted((JAXCI / "audit" / seam).glob("*.py")):
        found = sorted(i for i in _seam_imports(path) if not any(i == a or i.startswith(a + ".") for a in allowed))
        if found:
            bad[module_name(path)] = found
    assert not bad


def test_the_audit_package_is_its_seams_and_the_pipeline():
    """jaxci/audit/ holds its seams as subpackages; at its top only the pipeline (repo) that benchmarks import."""
    audit = JAXCI / "audit"
    assert {p.stem for p in audit.glob("*.py")} == {"__init__", "repo"}
    assert {p.name for p in audit.iterdir() if (p / "__init__.py").exists()} == {*AUDIT_SEAMS, "lecture_ci"}


def test_one_process_tree_killer():
    """Every kill of a process tree goes through jaxci.util.proc: no other module reads a process's /proc entry,
    sends a kill or a group kill, or sets itself a subreaper (/proc/cpuinfo or /proc/loadavg are machine facts)."""
    import re

    pattern = re.compile(r"/proc/\{|/proc/self/task|os\.kill(pg)?\(|\.prctl\(")
    walkers = [module_name(p) for p in sorted(JAXCI.rglob("*.py"))
               if module_name(p) != "jaxci.util.proc" and pattern.search(p.read_text())]
    assert not walkers

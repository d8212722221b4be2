"""The jaxci dispatcher: every listed command exists and answers --help; unknown commands are refused."""

import importlib

import pytest

from jaxci.cli import COMMANDS, main
from tests.suiteutil import python


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_module_has_main_and_help(name):
    module = importlib.import_module(COMMANDS[name][0])
    assert callable(module.main)
    with pytest.raises(SystemExit) as exc:
        module.main(["--help"])
    assert exc.value.code == 0


def test_unknown_command_is_refused(capsys):
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


@pytest.mark.parametrize("evidence, imported", [("--evidence=", "[]"), ("--pin-cpu", "[]"), (None, "['asv']")])
def test_env_command_does_not_import_jax_or_asv(evidence, imported):
    """`jaxci env` needs no JAX and no numpy; asv only to read the GPU measurements of --evidence (the jax-env action
    installs it for that), never without them."""
    extra = f", {evidence!r}" if evidence else ""
    code = ("import sys; from jaxci.cli import main; main(['env', '--kernels', '2', '--device-memory-mib', '15360',"
            f" '--peak-mib', '1024', '--format', 'json'{extra}]);"
            " print(sorted(m for m in ('jax', 'asv', 'numpy') if m in sys.modules))")
    out = python("-c", code, cwd=None, check=True).stdout
    assert out.strip().splitlines()[-1] == imported


def _jaxci_imports(path, modules) -> set[str]:
    """Every jaxci module a file imports, at the top or inside a function (`from pkg import mod` is an
    import of pkg.mod, not of pkg's __init__)."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("jaxci.")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("jaxci"):
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
            names |= subs if len(subs) == len(node.names) else subs | {node.module}
    return names


def test_no_import_cycle_between_jaxci_modules():
    """Any cycle among jaxci's modules, through function-level imports too, fails here; the checks upgrade.py and
    the workflow-inputs modules share live in jaxci.util.validate."""
    from graphlib import CycleError, TopologicalSorter
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    files = {".".join(p.relative_to(root).with_suffix("").parts): p for p in (root / "jaxci").rglob("*.py")}
    modules = {name.removesuffix(".__init__"): path for name, path in files.items()}
    graph = {m: {i for i in _jaxci_imports(p, modules) if i in modules and i != m and i != "jaxci"}
             for m, p in modules.items()}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as cycle:
        pytest.fail(f"import cycle: {cycle.args[1]}")
    assert "jaxci.util.validate" in graph["jaxci.results.upgrade"]
    assert not {"jaxci.workflows.inputs", "jaxci.workflows.plan"} & graph["jaxci.results.upgrade"]

"""The static scan's typed records (device pins read by their platforms, sizes stored once) and
the one reader of the book config (one rule for every per-cell timeout, both audits agree)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import nbformat
import pytest

from jaxci.audit import repo
from jaxci.audit.lecture_ci import settings
from jaxci.audit.reading import book
from jaxci.audit.reading.pins import Pin
from jaxci.audit.reading.static import LectureScan, scan_notebook


def scan(*cells: str, metadata: dict | None = None) -> LectureScan:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells], metadata=metadata or {})
    return scan_notebook(nb, "lecture.ipynb")


# ---------------------------------------------------------------- device pins

PINS = [  # (code, platforms, pinned to the CPU?)
    ("%env JAX_PLATFORMS=cuda,cpu", ("cuda", "cpu"), False),
    ("%env JAX_PLATFORMS=cpu", ("cpu",), True),
    ("import os\nos.environ['JAX_PLATFORMS'] = 'cuda,cpu'", ("cuda", "cpu"), False),
    ("import os\nos.environ['JAX_PLATFORMS'] = 'cpu'", ("cpu",), True),
    ("import os\nos.environ.setdefault('JAX_PLATFORMS', 'cpu,cuda')", ("cpu", "cuda"), True),
    ("import os\nos.environ.update(JAX_PLATFORM_NAME='gpu')", ("gpu",), False),
    ("import jax\njax.config.update('jax_platforms', 'cuda,cpu')", ("cuda", "cpu"), False),
    ("import jax\njax.config.update('jax_platforms', 'cpu')", ("cpu",), True),
    ("import jax\njax.config.update('jax_platform_name', 'cpu')", ("cpu",), True),
    ("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = ''", ("cpu",), True),  # every GPU hidden
    ("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'", (), False),
    ("import numpyro\nnumpyro.set_platform('cpu')", ("cpu",), True),
    ("import os\nplatform = 'cpu'\nos.environ['JAX_PLATFORMS'] = platform", (), False),  # not a literal
]


@pytest.mark.parametrize("code, platforms, pinned", PINS, ids=[p[0].splitlines()[-1] for p in PINS])
def test_a_pin_is_read_by_its_platforms_in_order(code, platforms, pinned):
    s = scan(code)
    (pin,) = s.pins
    assert isinstance(pin, Pin) and pin.cell == 0 and pin.line >= 1
    assert pin.platforms == platforms and pin.pinned_cpu is pinned and s.pinned_cpu is pinned


def test_a_gpu_first_list_mentioning_cpu_is_not_a_pin():
    """The pin's text names "cpu", but JAX takes the GPU first: not pinned."""
    s = scan("%env JAX_PLATFORMS=cuda,cpu")
    assert s.device_pins == ["cell 0: JAX_PLATFORMS=cuda,cpu"]  # the text the report shows
    assert not s.pinned_cpu and s.cpu_pin is None


def test_the_pin_that_pins_is_the_one_cited():
    s = scan("%env JAX_PLATFORMS=cuda,cpu", "import jax\njax.config.update('jax_platforms', 'cpu')")
    assert [p.pinned_cpu for p in s.pins] == [False, True]
    assert s.cpu_pin.text() == "cell 1: config jax_platforms=cpu"
    record = s.as_dict()
    assert record["pinned_cpu"] is True and record["device_pins"] == [p.text() for p in s.pins]
    assert record["pins"][0] == {"cell": 0, "line": 1, "platforms": ["cuda", "cpu"],
                                 "what": "JAX_PLATFORMS=cuda,cpu", "pinned_cpu": False}


def test_default_device_names_its_platform():
    s = scan("import jax\nwith jax.default_device(jax.devices('cpu')[0]):\n    x = 1")
    assert {p.what: p.platforms for p in s.pins} == {"jax.default_device(jax.devices('cpu')[0])": ("cpu",),
                                                     "jax.devices(cpu)": ("cpu",)}
    assert s.pinned_cpu


def test_a_gpu_first_lecture_is_not_said_to_pin_the_cpu(tmp_path):
    (tmp_path / "gpu_first.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%env JAX_PLATFORMS=cuda,cpu\nimport jax.numpy as jnp\nx = jnp.ones(10)")])))
    (v,) = repo.audit_static(tmp_path)
    assert not v.scan.pinned_cpu and not any("already pins the CPU" in r for r in v.reasons)


# ---------------------------------------------------------------- sizes stored once

def test_sizes_are_stored_once_and_rendered():
    s = scan("import jax.numpy as jnp\nx = jnp.zeros((1000, 20))\ny = jnp.ones(10)")
    assert "sizes" not in {f.name for f in dataclasses.fields(LectureScan)}
    assert [(f.cell, f.line, f.elements) for f in s.size_findings] == [(0, 2, 20_000), (0, 3, 10)]
    assert s.sizes == ["cell 0: zeros[1000, 20] = 20,000 elements", "cell 0: ones[10] = 10 elements"]
    record = s.as_dict()
    assert record["sizes"] == s.sizes and [f["elements"] for f in record["size_findings"]] == [20_000, 10]


# ---------------------------------------------------------------- the book config: one reader, one rule

TIMEOUTS = [  # (the YAML after `timeout:`, or None for no key; state; seconds the build applies)
    ('"abc"', book.INVALID, None),
    ("true", book.INVALID, None),
    ("-1", book.NONE, None),
    ("null", book.NONE, None),
    ("0", book.NONE, None),
    ("30", book.SET, 30.0),
    ("1.5", book.SET, 1.5),
    (".nan", book.INVALID, None),
    ("[1]", book.INVALID, None),
    (None, book.ABSENT, book.JUPYTER_BOOK_DEFAULT_TIMEOUT),
]


@pytest.mark.parametrize("value, state, seconds", TIMEOUTS, ids=[str(t[0]) for t in TIMEOUTS])
def test_both_audits_read_a_timeout_by_one_rule(tmp_path, value, state, seconds):
    lines = ["execute:", "  execute_notebooks: force", "  exclude_patterns: ['drafts/*']"]
    if value is not None:
        lines.append(f"  timeout: {value}")
    (tmp_path / "_config.yml").write_text("\n".join(lines) + "\n")
    lecture = book.read(tmp_path / "_config.yml", "_config.yml")
    ci = settings.read_book(tmp_path)
    assert lecture.timeout_state == ci.timeout_state == state
    assert lecture.timeout == seconds and ci.timeout == (seconds if state == book.SET else None)
    assert lecture.exclude == ci.exclude == ["drafts/*"]  # a refused timeout does not hide the other settings
    if state == book.INVALID:
        assert lecture.error == ci.error and lecture.error.startswith("_config.yml:4: execute.timeout is ")
        assert "not a number of seconds" in lecture.error
    else:
        assert lecture.error is None and ci.error is None


def test_a_boolean_is_refused_by_name_not_read_as_one_second(tmp_path):
    (tmp_path / "_config.yml").write_text("execute:\n  timeout: true\n")
    assert "is true (a boolean)" in book.read(tmp_path / "_config.yml", "_config.yml").error
    s = scan("x = 1", metadata={"mystnb": {"execution_timeout": True}})
    assert s.timeout_override is None and not s.timeout_origin
    assert any("notebook metadata mystnb.execution_timeout is true (a boolean)" in n for n in s.notes)


def test_notebook_metadata_follows_the_same_rule():
    assert (scan("x = 1", metadata={"execution": {"timeout": 120}}).timeout_override) == 120.0
    no_limit = scan("x = 1", metadata={"mystnb": {"execution_timeout": -1}})
    assert no_limit.timeout_override is None and no_limit.timeout_origin == "notebook metadata mystnb.execution_timeout"


def test_myst_timeout_by_the_same_rule(tmp_path):
    (tmp_path / "myst.yml").write_text("project:\n  jupyter:\n    execute_timeout: 'abc'\n")
    for config in (book.read(tmp_path / "myst.yml", "myst.yml"), settings.read_book(tmp_path)):
        assert config.timeout_state == book.INVALID and "myst.yml:3: project.jupyter.execute_timeout is" in config.error


def test_execute_not_a_mapping_is_an_error_for_both(tmp_path):
    (tmp_path / "_config.yml").write_text("execute: 5\n")
    assert book.read(tmp_path / "_config.yml", "_config.yml").error == settings.read_book(tmp_path).error
    assert "'execute' is not a mapping" in settings.read_book(tmp_path).error


@pytest.mark.parametrize("value", ['"abc"', "true", "[1, 2]", "{a: 1}"])
def test_jaxci_audit_on_a_bad_timeout_says_so_in_one_line(tmp_path, value):
    (tmp_path / "_config.yml").write_text(f"execute:\n  execute_notebooks: force\n  timeout: {value}\n")
    (tmp_path / "lecture.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import jax.numpy as jnp\nx = jnp.ones(10)")])))
    run = subprocess.run([sys.executable, "-m", "jaxci", "audit", str(tmp_path), "--no-progress"],
                         capture_output=True, text=True, timeout=300)
    assert "Traceback" not in run.stderr + run.stdout and run.returncode in (0, 1), run.stderr
    said = [line for line in run.stderr.splitlines() if "execute.timeout" in line]
    assert len(said) == 1 and "not a number of seconds" in said[0]

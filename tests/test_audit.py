"""jaxci audit: static scan and classification of fixture lecture repositories, bad input, output formats,
merging measured times (synthetic runs), and --execute on a small fixture repository."""

import copy
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxci.audit import repo
from jaxci.audit.judging import classify, judge
from jaxci.audit.reading import book
from jaxci.audit.runner import CellTiming, NotebookRun
from jaxci.audit.writing import render
from jaxci.commands.audit import main
from tests.auditutil import by_path, myst

FIXTURES = Path(__file__).parent / "fixtures" / "lectures"
BOOK, BAD, EXEC = FIXTURES / "book", FIXTURES / "bad", FIXTURES / "exec"

EXPECTED = {  # lecture: (regime, recommendation)
    "f64_scan.md": (classify.SMALL_F64_SEQ, classify.PIN_CPU),
    "f32_loop.md": (classify.SMALL_F32_SEQ, classify.PIN_CPU),
    "nuts_small.md": (classify.NUTS_SMALL, classify.PIN_CPU),
    "grid.md": (classify.MODERATE, classify.MEASURE),
    "large.md": (classify.LARGE, classify.KEEP_GPU),
    "large_and_scan.md": (classify.MIXED, classify.MEASURE),
    "trivial.md": (classify.TRIVIAL, classify.PIN_CPU),
    "no_jax.md": (classify.TRIVIAL, classify.PIN_CPU),
    "magics.md": (classify.SMALL_F32_SEQ, classify.PIN_CPU),
    "pinned.ipynb": (classify.SMALL_F32_SEQ, classify.PIN_CPU),
    "drafts/draft.md": (classify.TRIVIAL, classify.PIN_CPU),
}


@pytest.fixture(scope="module")
def book_verdicts():
    return by_path(repo.audit_static(BOOK))


def test_every_lecture_found_and_readme_is_not_a_lecture(book_verdicts):
    assert set(book_verdicts) == set(EXPECTED)


@pytest.mark.parametrize("lecture", sorted(EXPECTED))
def test_regime_and_recommendation(book_verdicts, lecture):
    v = book_verdicts[lecture]
    assert v.status == "ok", v.errors
    assert (v.regime, v.recommendation) == EXPECTED[lecture], v.reasons
    assert v.reasons


def test_every_regime_is_known():
    # the expert fixtures cover the rest (tests/test_audit_expert.py checks the union is every regime)
    assert {regime for regime, _ in EXPECTED.values()} <= set(classify.REGIMES)


def test_findings(book_verdicts):
    f64 = book_verdicts["f64_scan.md"].scan
    assert f64.uses_jax and f64.float64 and f64.loop_length == 100_000
    assert any("lax.scan" in s for s in f64.sequential)
    assert any("directive mentioning the GPU" in g for g in f64.gpu_narrative)

    loop = book_verdicts["f32_loop.md"].scan
    assert not loop.float64 and any("jitted `update`" in s and "2000 iterations" in s for s in loop.sequential)

    nuts = book_verdicts["nuts_small.md"].scan
    assert nuts.uses_numpyro and nuts.float64
    mcmc = [n for n in nuts.nuts if "num_chains" in n]
    assert mcmc == [{"cell": 1, "num_chains": 4, "chain_method": "sequential", "num_warmup": 400,
                     "num_samples": 400}]
    assert any(n.get("dense_mass") is True for n in nuts.nuts)
    assert nuts.max_elements == 200

    large = book_verdicts["large.md"].scan
    assert large.max_elements == 25_000_000 and not large.sequential
    assert any("GPU speed" in g for g in large.gpu_narrative)

    assert book_verdicts["grid.md"].scan.grid

    pinned = book_verdicts["pinned.ipynb"].scan
    assert pinned.pinned_cpu and any("JAX_PLATFORMS=cpu" in p for p in pinned.device_pins)
    assert any("prints jax.devices()" in g for g in pinned.gpu_narrative)
    assert any("while_loop" in s for s in pinned.sequential)

    magics = book_verdicts["magics.md"].scan
    assert any("fori_loop (length 10000)" in s for s in magics.sequential)  # found inside %%time
    assert any("nvidia-smi" in g for g in magics.gpu_narrative)

    no_jax = book_verdicts["no_jax.md"].scan
    assert not no_jax.uses_jax and not no_jax.sequential  # a loop over nothing JAX is not sequential JAX


def test_short_python_loop_is_not_sequential(tmp_path):
    (tmp_path / "sizes.md").write_text(myst("import jax\nimport jax.numpy as jnp\nfor n in [100, 500, 1000]:\n"
                                            "    jax.jit(lambda a: a @ a)(jnp.ones((n, n)))"))
    (v,) = repo.audit_static(tmp_path)
    assert v.scan.short_loops and not v.scan.sequential


def test_pin_list_only_names_jax_lectures(book_verdicts):
    pins = judge.pin_list(list(book_verdicts.values()))
    assert "f64_scan.md" in pins and "nuts_small.md" in pins
    assert "no_jax.md" not in pins and "large.md" not in pins


def test_book_config(book_verdicts):
    v = book_verdicts["f64_scan.md"]
    assert v.config.timeout == 600 and v.config.mode == "cache"
    assert "excluded from execution by exclude_patterns" in book_verdicts["drafts/draft.md"].notes


def test_book_config_defaults_and_myst(tmp_path):
    def read(name, text):
        (tmp_path / name).write_text(text)
        return (book.read_jupyter_book if name == "_config.yml" else book.read_myst)(tmp_path / name)

    config = read("_config.yml", "title: x\n")
    assert config.timeout == book.JUPYTER_BOOK_DEFAULT_TIMEOUT and "default" in config.timeout_origin
    config = read("_config.yml", "execute:\n  timeout: -1\n  execute_notebooks: 'off'\n")
    assert config.timeout is None and config.notes
    assert read("myst.yml", "project:\n  jupyter:\n    execute_timeout: 120\n").timeout == 120
    assert "no execution timeout" in read("myst.yml", "project:\n  title: x\n").notes[0]
    assert "cannot read" in read("myst.yml", "project: [unclosed\n").error


def test_bad_inputs_reported_and_others_audited(tmp_path):
    verdicts = by_path(repo.audit_static(BAD))
    assert verdicts["fine.md"].status == "ok" and verdicts["fine.md"].regime == classify.TRIVIAL
    assert verdicts["latin1.md"].status == "unreadable" and "not UTF-8" in verdicts["latin1.md"].errors[0]
    assert verdicts["truncated.ipynb"].status == "unreadable" and "JSON" in verdicts["truncated.ipynb"].errors[0]
    assert "malformed" in verdicts["not_a_notebook.ipynb"].errors[0]
    syntax = verdicts["syntax_error.md"]
    assert syntax.status == "error" and "cell 1 line 1: SyntaxError" in syntax.errors[0]
    assert syntax.scan.sequential  # the other cells were still scanned


def test_unreadable_file(tmp_path):
    (tmp_path / "gone.ipynb").symlink_to(tmp_path / "missing.ipynb")
    (v,) = repo.audit_static(tmp_path)
    assert v.status == "unreadable" and "cannot read" in v.errors[0]


def test_cli_exit_codes_and_formats(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main([str(BOOK), "--format", "json", "--output", str(tmp_path / "a.json")]) == 0
    data = json.loads((tmp_path / "a.json").read_text())
    assert {lecture["path"] for lecture in data["lectures"]} == set(EXPECTED) and not data["failed"]
    assert "f64_scan.md" in data["pin_to_cpu"]

    assert main([str(BOOK), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["lecture"]: r["recommendation"] for r in rows} == {k: v[1] for k, v in EXPECTED.items()}

    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main([str(BAD)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("| lecture |") and "latin1.md" in out
    assert "latin1.md: unreadable" in err and "syntax_error.md: error" in err
    text = summary.read_text()
    assert "lecture(s) failed" in text and "| lecture |" in text

    assert main([str(tmp_path / "nope")]) == 2


def run_of(platform, *cells, status="ok"):
    run = NotebookRun("x.md", status=status, platform=platform)
    run.cells = [CellTiming(i, "", wall, wall, compile_s=c) for i, (wall, c) in enumerate(cells)]
    return run


def test_merge_measured_times_synthetic(book_verdicts):
    def merged(lecture, **runs):
        v = copy.deepcopy(book_verdicts[lecture])
        v.runs = runs
        judge.merge(v)
        return v

    v = merged("grid.md", cpu=run_of("cpu", (1.0, 0.5), (2.0, 0.2)), cuda=run_of("cuda", (9.0, 5.0), (3.0, 1.0)))
    assert v.recommendation == classify.PIN_CPU and "measured GPU/CPU time 4.00" in v.reasons[-1]
    assert v.proposed_timeout == 60  # 2 s slowest cell x 3 -> a minute
    assert v.over_timeout == []  # book timeout 600 s

    v = merged("large.md", cpu=run_of("cpu", (300.0, 1.0)), cuda=run_of("cuda", (30.0, 2.0)))
    assert v.recommendation == classify.KEEP_GPU
    assert v.proposed_timeout == 120  # from the GPU run it stays on: 30 s x 3 = 90 -> 120
    v = merged("large.md", cpu=run_of("cpu", (700.0, 1.0)))
    assert v.over_timeout == ["cpu cell 0: 700.0 s > 600 s"] and v.proposed_timeout == 2100
    assert v.recommendation == classify.KEEP_GPU  # no GPU measured: the static verdict stands


def test_markdown_and_summary_render(book_verdicts):
    verdicts = list(book_verdicts.values())
    table = render.to_markdown(verdicts, executed=False)
    assert table.count("\n") == len(verdicts) + 2
    assert "cpu_s" not in table.splitlines()[0]
    summary = render.summary(verdicts, executed=False)
    assert "Pin to the CPU" in summary and "`f64_scan.md`" in summary and "--execute" in summary


@pytest.mark.slow
def test_execute_fixture_repository(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = tmp_path / "audit.json"
    code = main([str(EXEC), "--execute", "--platforms", "cpu", "--format", "json", "--output", str(out),
                 "--no-progress", "--cell-timeout", "60"])
    assert code == 1
    data = {lecture["path"]: lecture for lecture in json.loads(out.read_text())["lectures"]}
    jit = data["jit_cell.md"]
    assert jit["status"] == "ok"
    cells = jit["runs"]["cpu"]["cells"]
    assert cells[1]["compile_s"] > 0 and cells[1]["compilations"] >= 1
    assert jit["timeout"] == 1 and any(o.startswith("cpu cell 3: ") for o in jit["over_timeout"])  # slept 1.3 s
    assert jit["proposed_timeout"] == 60
    assert data["kills_kernel.md"]["status"] == "dead" and "cell 1" in data["kills_kernel.md"]["errors"][0]
    assert data["raises.md"]["status"] == "error" and "ValueError" in data["raises.md"]["errors"][0]
    assert data["missing_kernel.md"]["status"] == "no-kernel"


def test_loop_inside_a_jitted_function_is_not_dispatch(tmp_path):
    (tmp_path / "unrolled.md").write_text(myst("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n"
                                               "    for i in range(100):\n        x = jnp.sin(x)\n    return x\n\n"
                                               "f(jnp.ones(3))"))
    (v,) = repo.audit_static(tmp_path)
    assert not v.scan.sequential and v.regime == classify.TRIVIAL


def test_single_lecture_finds_the_book_config_above_it():
    (v,) = repo.audit_static(BOOK / "drafts" / "draft.md")
    assert v.config is not None and v.config.timeout == 600


def test_static_audit_does_not_import_jax():
    code = ("import sys\nfrom jaxci.commands.audit import main\n"
            f"main([{str(BOOK)!r}, '--format', 'csv', '--output', '/dev/null'])\n"
            "assert 'jax' not in sys.modules and 'numpyro' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, GITHUB_STEP_SUMMARY=""))

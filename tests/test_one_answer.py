"""One answer per question: from one results set (the committed results/), every catalogue
family's decision sheet, the static audit's thresholds, `jaxci env` and `jaxci predict` at the sheet's
break-even give the same number, to the precision the sheet prints.

`python -m tests.test_one_answer [RESULTS]` prints one line per family and question (for the closing note).
Nothing here asserts a timing: each check compares two commands' answers computed from the same records."""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from jaxci import REPO_ROOT
from jaxci.analysis import crossover as cx
from jaxci.analysis.kernels import CROSSOVER_BENCHMARK
from jaxci.analysis.predict import threshold
from jaxci.analysis.prediction import LecturePrediction, PredictedSide
from jaxci.audit.judging import family as fam
from jaxci.audit.lecture_ci import decision
from jaxci.audit.lecture_ci.core import job_commands
from jaxci.audit.lecture_ci.engine import engine_of
from jaxci.audit.lecture_ci.lectures import LectureFacts
from jaxci.audit.lecture_ci.workflows import read_workflows
from jaxci.catalogue import load_catalogue
from jaxci.commands import audit, env, predict
from jaxci.evidence.inputs import reference
from jaxci.policy import builds, concurrency, timeouts
from jaxci.report import decisions, memory_advice, page
from jaxci.report.build import build
from tests.frozen import RESULTS as FROZEN_RESULTS

RESULTS = FROZEN_RESULTS


@dataclass
class Check:
    family: str
    question: str
    sheet: str        # what the decision sheet prints
    other: str        # what the other command answers
    where: str        # the other command
    agree: bool

    def line(self) -> str:
        return (f"{self.family:14s} {self.question:36s} sheet {self.sheet:>14s} | {self.where}: {self.other}"
                f" -> {'agree' if self.agree else 'DISAGREE'}")


def _in_row(family, question, sheet, said, text, row, where) -> Check:
    """Whether the decision sheet's row `row` (its `text`) prints what the other command `said`."""
    return Check(family, question, sheet, f"in row {row}" if said in text else f"absent from row {row}", where,
                 said in text)


def _run(main, argv: list[str]) -> tuple[int, str]:
    """A command's exit status and stdout, run in this process (its stderr dropped)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = main(argv)
    return rc, out.getvalue()


def _predict(results, family, kernel, n, dtype, device) -> dict:
    """`jaxci predict ... --format json`."""
    argv = ["--family", family, "--kernel", kernel, "--n", str(n), "--dtype", dtype, "--device", device,
            "--results", str(results), "--format", "json"]
    return json.loads(_run(predict.main, argv)[1] or "{}")


def _env(argv: list[str]) -> dict:
    rc, out = _run(env.main, [*argv, "--format", "json"])
    assert rc == 0
    return json.loads(out)


def _gpu_faster(results, family, kernel, n, dtype) -> bool | None:
    cpu, gpu = (_predict(results, family, kernel, n, dtype, device) for device in ("cpu", "gpu"))
    if cpu.get("seconds") is None or gpu.get("seconds") is None:
        return None
    return gpu["seconds"] < cpu["seconds"]


def _size(n) -> str:
    return "inf" if n is None or math.isinf(n) else f"{n:,.0f}"


def checks(results=RESULTS) -> list[Check]:
    """Every family x question that two commands answer, from one results set."""
    catalogue = load_catalogue(include_lab=True)
    families = [n for n, m in catalogue.items() if not m.is_lab]
    report = build(results, families=families)  # the reference files: the nearest evidence every command takes
    out = []
    for s in decisions.sheets(report, families):
        entry, f = catalogue[s.family], s.family
        row = {d.q: d for d in s.rows}
        audit = fam.from_results(results, f, catalogue, published=reference())
        if entry.has_gpu:
            # Q2: each kernel the audit decides with: the sheet's (report's) crossover, the audit's threshold,
            # and predict on each side of it
            for kernel in ("matmul", "elementwise"):
                for dtype in ("float32", "float64"):
                    bench, case = CROSSOVER_BENCHMARK[kernel]
                    p = next(p for p in report.predicted_crossovers if p.family == f and p.benchmark == bench
                             and p.case == case and p.dtype == dtype)
                    mine = threshold(p.kind, p.n, p.points[0][0]) if p.points else None
                    fig = audit.crossovers.get((kernel, dtype))
                    theirs = fig.value if fig else None
                    out.append(Check(f, f"2 crossover {kernel} {dtype}", _size(mine), _size(theirs),
                                     "audit threshold", _size(mine) == _size(theirs)))
                    if p.kind == cx.CROSSING:
                        n = int(p.n)
                        at, below = (_gpu_faster(results, f, kernel, n, dtype),
                                     _gpu_faster(results, f, kernel, n - 1, dtype))
                        out.append(Check(f, f"2 predict flips {kernel} {dtype}", _size(n),
                                         f"n={n:,}: {'GPU' if at else 'CPU'}, n={n - 1:,}: "
                                         f"{'GPU' if below else 'CPU'} faster", "jaxci predict",
                                         at is True and below is False))
            for kernel, words in (("elementwise", "elementwise maps from n ≈ {} elements"),
                                  ("matmul", "dense op=matmul float32 from n ≈ {}")):
                bench, case = CROSSOVER_BENCHMARK[kernel]
                p = next(p for p in report.predicted_crossovers if p.family == f and p.dtype == "float32"
                         and p.benchmark == bench and p.case == case)
                if p.kind == cx.CROSSING:
                    printed = words.format(f"{p.n:,.0f}")
                    out.append(_in_row(f, f"2 sheet prints {kernel} float32", _size(p.n), printed, row[2].decision,
                                       2, "decision sheet"))
        # Q1: the FP64 ratio the sheet prints, from predict's two calls
        dev = "gpu" if entry.has_gpu else "cpu"
        p64, p32 = (_predict(results, f, "matmul", decisions.DENSE_N, dtype, dev) for dtype in ("float64", "float32"))
        if p64.get("seconds") and p32.get("seconds"):
            ratio = f"≈ {p64['seconds'] / p32['seconds']:.0f}x float32"
            out.append(_in_row(f, "1 fp64 / fp32 matmul", ratio, ratio, row[1].decision, 1, "jaxci predict"))
        # Q4: the NUTS seconds the sheet prints on the CPU, from predict
        nuts = _predict(results, f, "nuts", decisions.NUTS_ITERATIONS, "float64", "cpu")
        if nuts.get("seconds"):
            from jaxci.report.text import seconds

            said = seconds(nuts["seconds"])
            out.append(_in_row(f, "4 NUTS on the CPU", said, f"CPU {said}", row[4].basis, 4, "jaxci predict"))
        # Q5 and Q7: what `jaxci env --machine F` sets and advises, against the sheet's rows
        args = ["--machine", f, "--kernels", "1"] + ([] if entry.has_gpu else ["--pin-cpu"])
        env = _env(args)
        named = [k for k in ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS")
                 if k in row[5].decision]
        out.append(Check(f, "5 environment variables", ", ".join(named), ", ".join(k for k in named if k in
                                                                                  env["env"]), "jaxci env",
                         bool(named) and all(k in env["env"] for k in named)))
        keep = "keep the repository's own" in row[7].decision
        out.append(Check(f, "7 per-cell timeout", "keep own" if keep else "a number",
                         "keep own" if env["cell_timeout_s"] is None else f"{env['cell_timeout_s']} s", "jaxci env",
                         keep == (env["cell_timeout_s"] is None)))
    return out


def margin_checks() -> list[Check]:
    """The GPU-wins margin: question 6's build and the CI audit's tier decision place one lecture alike."""
    out = []
    for cpu, gpu in ((100.0, 90.0), (100.0, 70.0), (100.0, 120.0)):
        pred = LecturePrediction(PredictedSide(cpu), PredictedSide(gpu))
        report_side = builds.placement(pred, True)
        facts = LectureFacts(path="x.md", uses_jax=True, predicted={"g4dn.2xlarge": pred})
        audit_side = "gpu" if decision.wins_on_gpu(facts, "g4dn.2xlarge") else "cpu"
        out.append(Check("g4dn.2xlarge", f"6 lecture cpu {cpu:g} s gpu {gpu:g} s", report_side, audit_side,
                         "CI audit tier", report_side == audit_side))
    return out


def _audit_ci(root: Path, family: str) -> str:
    return _run(audit.main, [str(root), "--machine", family])[1]


def _engine_read(root: Path, vcpu):
    job = read_workflows(root)[0].jobs[0]
    return engine_of(job_commands(job), root, vcpu)


#: a fixture repository per engine (its workflow runs the engine as written, on g4dn.2xlarge or g5.2xlarge)
ENGINE_REPOS = {"jupyter-book-1": "split_gpu", "mystmd": "mystmd_gpu"}


def concurrency_checks(results=RESULTS) -> list[Check]:
    """Question 3 per engine: the one rule (jaxci.policy.concurrency.decide), the sheet's row 3, `jaxci env` at N
    and N + 1, the CI audit of a fixture repository built by that engine, and the README's action example."""
    catalogue = load_catalogue()
    report = build(results, families=["g4dn.2xlarge"])
    out = []
    for family in ("g4dn.2xlarge", "g5.2xlarge"):
        entry = catalogue[family]
        row = decisions.sheet(report, family).rows[2]
        for answer in memory_advice.answers(report, family, entry):
            name = concurrency.ENGINE_NAMES[answer.engine]
            said = f"{name}: {answer.setting}, jax-env `concurrency: {answer.concurrency}`"
            out.append(_in_row(family, f"3 {answer.engine} setting", f"N = {answer.n}", said, row.decision, 3,
                               "decision sheet"))
            at, above = (_env(["--machine", family, "--kernels", str(k), "--evidence", str(results)])
                         for k in (answer.concurrency, answer.n + 1))
            one = "default" if answer.concurrency == 1 else answer.policy  # one kernel: JAX's default, measured alive
            agree = at["beyond"] == "" and f"is above {answer.n}" in above["beyond"] \
                and (at["policy"], above["policy"]) == (one, answer.policy)
            out.append(Check(family, f"3 {answer.engine} env flags N > {answer.n}", f"N = {answer.n}",
                             f"{answer.concurrency}: {at['policy']}, {answer.n + 1}: "
                             f"{'flagged' if above['beyond'] else 'silent'}", "jaxci env", agree))
            repo = ENGINE_REPOS.get(answer.engine)
            if repo:
                root = REPO_ROOT / "tests" / "fixtures" / "ci_repos" / repo
                text = _audit_ci(root, family)
                read = _engine_read(root, entry.value("vcpu"))
                mine = concurrency.decide(memory_advice.measured_on_gpu(report), read, has_gpu=True, family=family,
                                          vcpu=entry.value("vcpu"))
                want = f"with: {{concurrency: {mine.concurrency}, machine:"
                out.append(Check(family, f"3 {answer.engine} CI audit", f"{mine.setting}, concurrency: "
                                 f"{mine.concurrency}", "proposed" if want in text and mine.setting in text
                                 else "not proposed", f"jaxci audit {repo}", read.name == answer.engine
                                 and mine.n == answer.n and want in text and mine.setting in text))
    readme = (REPO_ROOT / "README.md").read_text()
    shown = int(readme.split("with: {concurrency: ", 1)[1].split(",", 1)[0])
    top = concurrency.best(memory_advice.measured_on_gpu(report))
    out.append(Check("README", "3 the action example", f"N <= {top.n}", f"concurrency: {shown}", "README",
                     shown <= top.n))
    return out


def hygiene_checks(results=RESULTS) -> list[Check]:
    """Question 7 per engine: the one wording (jaxci.policy.timeouts.engine_hygiene) in the sheet's row 7, the CI
    audit's fail-once finding on a fixture repository of that engine, the template the wording names (its skip
    step tells that engine), the README, and `jaxci env`'s per-cell timeout by the one rule."""
    report = build(results, families=["g4dn.2xlarge"])
    row = decisions.sheet(report, "g4dn.2xlarge").rows[6]
    readme = (REPO_ROOT / "README.md").read_text()
    out = []
    for engine, template in timeouts.FAIL_ONCE.items():
        said = timeouts.engine_hygiene(engine)
        out.append(_in_row("g4dn.2xlarge", f"7 {engine} wording", engine, said, row.decision, 7, "decision sheet"))
        if template is None:
            continue
        steps = yaml.safe_load((REPO_ROOT / template).read_text())["jobs"]["build"]["steps"]
        skip = next(s["run"] for s in steps if "jaxci failures skip" in s.get("run", ""))
        flag = {"jupyter-book-1": "--config", "mystmd": "--pages"}[engine]
        out.append(Check("template", f"7 {engine} skip step", flag, "present" if flag in skip else "absent",
                         template, flag in skip))
        out.append(Check("README", f"7 {engine} template", template, "named" if template in readme else "absent",
                         "README", template in readme))
        repo = ENGINE_REPOS[engine]
        text = _audit_ci(REPO_ROOT / "tests" / "fixtures" / "ci_repos" / repo, "g4dn.2xlarge")
        out.append(Check("g4dn.2xlarge", f"7 {engine} CI audit", template, "proposed" if f"copy `{template}`" in text
                         else "not proposed", f"jaxci audit {repo}", f"copy `{template}`" in text))
    env = _env(["--machine", "g4dn.2xlarge", "--kernels", "1", "--slowest-cell-s", "250"])
    rule = timeouts.cell_timeout(250)
    out.append(Check("g4dn.2xlarge", "7 per-cell rule", f"{rule} s", f"{env['cell_timeout_s']} s", "jaxci env",
                     env["cell_timeout_s"] == rule))
    return out


@pytest.fixture(scope="module")
def all_checks():
    return checks()


@pytest.mark.parametrize("question, least", [(concurrency_checks, 14), (hygiene_checks, 10)])
def test_questions_3_and_7_agree_in_every_engine(question, least):
    found = question()
    assert len(found) >= least and all(c.agree for c in found), "\n".join(c.line() for c in found if not c.agree)


def test_every_family_and_question_agrees(all_checks):
    bad = [c.line() for c in all_checks if not c.agree]
    assert not bad, "\n".join(bad)


def test_every_catalogue_gpu_family_is_checked_for_each_crossover(all_checks):
    gpus = {n for n, m in load_catalogue().items() if m.has_gpu}
    seen = {c.family for c in all_checks if c.question.startswith("2 crossover")}
    assert gpus and seen == gpus
    assert any(c.question.startswith("2 predict flips") for c in all_checks)


def test_the_g4dn_break_even_is_where_predict_flips(all_checks):
    flips = [c for c in all_checks if c.family == "g4dn.2xlarge" and c.question == "2 predict flips matmul float32"]
    assert flips and flips[0].agree


def test_a_100_vs_90_lecture_is_placed_alike():
    checks = margin_checks()
    assert all(c.agree for c in checks)
    assert checks[0].sheet == "cpu"  # 90 s is not below 0.8 x 100 s: the one margin keeps it on the CPU


def test_a_disagreement_is_reported():
    """The comparison can fail: a threshold one unit off prints apart."""
    assert _size(224.0) != _size(225.0) and _size(math.inf) == "inf"


def test_the_published_figures_are_read_once_from_the_path_given(tmp_path, monkeypatch):
    """One parser, one read: the page's reference points come from the file build() was given, and the two tables
    come from the same parse."""
    from jaxci.report import build as build_module

    fig = {"case": "2000x2000 matmul, compiled", "kernel": "matmul", "n": 2000, "resolution_s": 0.0005, "source": "t"}
    mine = tmp_path / "figures.json"
    mine.write_text(json.dumps({
        "format": "jaxci-published-figures", "version": 1, "rates_document": "m.md", "rates": [],
        "sources": {"t": {"document": "incidents.md", "section": "s", "cited": "c"}},
        "runners": {"about": "x", "ubuntu-latest": "CPU runner", "g4dn.2xlarge": "T4 runner"},
        "incidents": [{**fig, "family": "ubuntu-latest", "device": "cpu", "published_s": 0.123},
                      {**fig, "family": "g4dn.2xlarge", "device": "gpu", "published_s": 0.004}]}))
    reads = []
    original = build_module.read_figures
    monkeypatch.setattr(build_module, "read_figures", lambda path: reads.append(path) or original(path))
    report = build(RESULTS, incidents=mine, measurements=mine, families=["g4dn.2xlarge"])
    assert reads == [mine]
    pts = page._published_points(report)
    assert {(p.column, p.n, p.seconds) for p in pts} == {("CPU runner", 2000, 0.123), ("T4 runner", 2000, 0.004)}
    assert {r["incident_s"] for r in report.incidents} == {0.123, 0.004}
    assert {r["published_s"] for r in report.model_checks} == {0.123, 0.004}
    assert page._published_points(build(RESULTS, incidents=tmp_path / "absent.json", families=["g4dn.2xlarge"])) == []


def test_a_family_with_published_figures_is_added_in_the_data_file_alone(tmp_path):
    """The registry of published evidence per family is the data file: a family's figures and its runner's name
    there are enough for its points, its column and its check against the model (no code names a family)."""
    fig = {"case": "2000x2000 matmul, compiled", "kernel": "matmul", "n": 2000, "resolution_s": 0.0005, "source": "t"}
    mine = tmp_path / "figures.json"
    mine.write_text(json.dumps({
        "format": "jaxci-published-figures", "version": 1, "rates_document": "m.md", "rates": [],
        "sources": {"t": {"document": "incidents.md", "section": "s", "cited": "c"}},
        "runners": {"g5.2xlarge": "A10G runner"},
        "incidents": [{**fig, "family": "g5.2xlarge", "device": "gpu", "published_s": 0.002},
                      {**fig, "family": "c7i.2xlarge", "device": "cpu", "published_s": 0.05}]}))
    report = build(RESULTS, incidents=mine, measurements=mine, families=["g4dn.2xlarge"])
    pts = page._published_points(report)
    assert {(p.column, p.family, p.device) for p in pts} == {("A10G runner", "g5.2xlarge", "gpu"),
                                                             ("c7i.2xlarge", "c7i.2xlarge", "cpu")}  # unnamed: itself
    assert {(r["family"], r["device"]) for r in report.incidents} == {("g5.2xlarge", "gpu"), ("c7i.2xlarge", "cpu")}


def main(argv=None) -> int:
    results = Path((argv or sys.argv[1:] or [str(RESULTS)])[0])
    lines = checks(results) + margin_checks() + concurrency_checks(results) + hygiene_checks(results)
    for c in lines:
        print(c.line())
    bad = sum(not c.agree for c in lines)
    print(f"{len(lines)} checks, {bad} disagree")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The JAX release watch (jaxci/workflows/release_watch.py, .github/workflows/jax-release-watch.yml), offline: a local
PEP 503 index served by `python -m http.server` on 127.0.0.1 offers a fake new JAX release; asv and gh are fakes."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from jaxci.catalogue import read_pins
from jaxci.commands import release_watch as watch_cmd
from jaxci.workflows import release_watch as watch
from tests.workflowutil import REPO, key_values

FAKE = "0.99.0"
PIN = read_pins("cpu")["jax"]

HEADER = ("| Change   | Before [22816611] <jax-v{p}>   | After [c9952c01] <jax-v{r}>   |   Ratio | "
          "Benchmark (Parameter)   |\n|----------|------|------|---------|------|\n")


def table(rows, previous=PIN, release=FAKE) -> str:
    return "All benchmarks:\n\n" + HEADER.format(p=previous, r=release) + "".join(
        f"| {c} | {b} | {a} | {ratio} | {name} |\n" for c, b, a, ratio, name in rows)


FORI = "loops.ForiAccumulate.time_warm(10000, 'float64', 'cpu')"
SCAN = "loops.Scan.time_warm(1000, 1, 'float64', 'cpu')"
DENSE = "dense.Dense.time_warm('matmul', 64, 'float32', 'cpu')"
FIRST = table([("+", "160±3μs", "73.9±0.5ms", "461.00", FORI), ("+", "20.0±1μs", "33.0±9μs", "1.65", SCAN),
               ("~", "1.00±0.5ms", "1.60±0.6ms", "1.60", DENSE), ("", "5.0±0.1μs", "5.1±0.1μs", "1.02",
                                                                     "dispatch.TinyOp.time_warm('float32', 'cpu')")])
RERUN = table([("+", "158±2μs", "74.2±0.4ms", "469.00", FORI), ("", "21.0±1μs", "21.5±1μs", "1.02", SCAN)])


class FakeRunner:
    def __init__(self, compares):
        self.compares, self.calls = list(compares), []

    def history(self, releases, bench, machine):
        self.calls.append(("history", tuple(releases), bench, machine))
        return 0

    def compare(self, old, new, machine, factor):
        self.calls.append(("compare", old, new, machine, factor))
        return self.compares.pop(0)

    def rerun(self, release, bench, machine):
        self.calls.append(("rerun", release, bench, machine))
        return 0


# ---- the package index: a local folder served on 127.0.0.1 ------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """A PEP 503 simple index with jax at the pin and a fake newer release, served by python -m http.server."""
    root = tmp_path / "index"
    jax = root / "simple" / "jax"
    jax.mkdir(parents=True)
    links = []
    for version in (PIN, FAKE):
        name = f"jax-{version}-py3-none-any.whl"
        (jax / name).write_bytes(b"not a real wheel: pip index versions reads the names only")
        links.append(f'<a href="{name}">{name}</a><br>')
    (jax / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")
    (root / "simple" / "index.html").write_text('<!DOCTYPE html><html><body><a href="jax/">jax</a></body></html>\n')
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                               "--directory", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/simple"
    deadline = time.monotonic() + 20
    while True:
        try:
            urllib.request.urlopen(url + "/jax/", timeout=2).read()
            break
        except OSError:
            if time.monotonic() > deadline:
                server.kill()
                pytest.fail("the local index did not start")
            time.sleep(0.1)
    # only this index: no pip configuration, find-links or extra index of the machine running the tests
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT"):
        monkeypatch.delenv(var, raising=False)
    yield url
    server.terminate()
    server.wait(timeout=10)


def plan_outputs(tmp_path, *args) -> dict:
    out = tmp_path / "github_output"
    assert watch_cmd.main(["plan", *args, "--github-output", str(out)]) == 0
    return key_values(out.read_text())


def test_plan_finds_the_fake_release_on_the_local_index(local_index, tmp_path):
    values = plan_outputs(tmp_path, "--index-url", local_index, "--event", "schedule", "--ref", "refs/heads/main",
                          "--run-id", "7")
    assert values["any"] == "true"
    matrix = json.loads(values["matrix"])["include"]
    assert {(e["release"], e["previous"]) for e in matrix} == {(FAKE, PIN)}
    families = {e["family"]: e for e in matrix}
    assert "ubuntu-latest" in families and families["ubuntu-latest"]["runs_on"] == "ubuntu-latest"
    gpus = [e for e in matrix if e["gpu"]]
    assert gpus and all(not e["spot"] and "spot=false" in e["runs_on"] for e in gpus)  # trusted: GPU, on-demand
    assert all(0 < e["timeout_minutes"] <= watch.MAX_TIMEOUT for e in matrix)


def test_an_untrusted_event_gets_no_gpu_family(local_index, tmp_path):
    values = plan_outputs(tmp_path, "--index-url", local_index, "--event", "workflow_dispatch",
                          "--ref", "refs/heads/experiment")
    matrix = json.loads(values["matrix"])["include"]
    assert matrix and not [e for e in matrix if e["gpu"]]


def test_nothing_new_gives_an_empty_plan(tmp_path, monkeypatch):
    monkeypatch.setattr(watch_cmd, "index_versions", lambda name, index_url=None, timeout=120: ["0.11.2", PIN])
    values = plan_outputs(tmp_path, "--event", "schedule")
    assert values["any"] == "false" and values["matrix"] == '{"include":[]}'


@pytest.mark.parametrize("bad", ["1" * 5000 + ".0", "0.12.1,0.12.2", "$(id)", "latest"])
def test_a_bad_release_input_is_one_line_and_exit_2(bad, capsys, monkeypatch):
    monkeypatch.setattr(watch_cmd, "index_versions", lambda name, index_url=None: [PIN])
    assert watch_cmd.main(["plan", "--release", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 300


def test_find_and_previous_release():
    versions = ["0.11.2", "0.12.0", PIN, "0.12.1", "0.13.0"]
    assert watch.newer_releases(PIN, versions) == ["0.12.1", "0.13.0"]
    assert watch.find(PIN, versions) == [{"release": "0.12.1", "previous": PIN},
                                         {"release": "0.13.0", "previous": "0.12.1"}]
    assert watch.find(PIN, versions, only="0.12.0") == [{"release": "0.12.0", "previous": "0.11.2"}]
    with pytest.raises(watch.WatchError):
        watch.find(PIN, versions, only="0.14.0")


# ---- the noise rule ------------------------------------------------------------------------------------------

def test_a_regression_is_reported_only_when_it_holds_on_the_rerun():
    runner = FakeRunner([FIRST, RERUN])
    report = watch.measure(FAKE, PIN, "ubuntu-latest", runner)
    assert report.status == "regression"
    assert [c["name"] for c in report.confirmed] == [FORI]
    assert report.confirmed[0]["ratio"] == "461.00" and report.confirmed[0]["rerun_ratio"] == "469.00"
    assert report.noise == [SCAN]  # x1.65 on the first run, x1.02 on the rerun
    reruns = [c for c in runner.calls if c[0] == "rerun"]
    assert [c[1] for c in reruns] == [FAKE, PIN]  # both releases measured again
    bench = reruns[0][2]
    assert re.search(bench, FORI) and re.search(bench, SCAN) and not re.search(bench, DENSE)
    assert runner.calls[0] == ("history", (PIN, FAKE), watch.WATCH_BENCH, "ubuntu-latest")


def test_nothing_flagged_is_clean_without_a_rerun_and_no_table_is_a_failure():
    clean = FakeRunner([table([("~", "1.00±0.5ms", "1.60±0.6ms", "1.60", DENSE)])])
    assert watch.measure(FAKE, PIN, "m", clean).status == "clean"
    assert not [c for c in clean.calls if c[0] == "rerun"]
    failed = watch.measure(FAKE, PIN, "m", FakeRunner(["asv: no results for jax-v0.99.0\n"]))
    assert failed.status == "failed" and "no table" in failed.reason
    below = FakeRunner([table([("+", "1.0ms", "1.4ms", "1.40", DENSE)])])  # '+' at asv's own factor, below 1.5
    assert watch.measure(FAKE, PIN, "m", below, factor=1.5).status == "clean"


def test_watch_bench_selects_exactly_the_warm_benchmarks():
    names = ["loops.Scan.time_warm(1000, 1, 'float64', 'cpu')", "dense.Dense.time_warm", "kalman.KalmanGrad.time_warm",
             "loops.LoopsCompile.time_compile('scan')", "dense.DenseColdStart.time_cold('matmul')",
             "nuts.Nuts.time_warm(1)", "concurrency.X.time_warm", "dispatch.Transfer.time_transfer('h2d')"]
    assert [n for n in names if re.search(watch.WATCH_BENCH, n)] == names[:3]


# ---- the issue -----------------------------------------------------------------------------------------------

class FakeGh:
    def __init__(self, existing=None):
        self.existing, self.done = dict(existing or {}), []

    def find(self, release):
        return self.existing.get(release)

    def create(self, title, body):
        self.done.append(("create", title, body))
        self.existing[title.split()[1]] = 41
        return "https://github.com/o/r/issues/41"

    def edit(self, number, title, body):
        self.done.append(("edit", number, title))
        return f"#{number} updated"


def _reports():
    a = watch.measure(FAKE, PIN, "ubuntu-latest", FakeRunner([FIRST, RERUN]))
    b = watch.measure(FAKE, PIN, "g4dn.2xlarge", FakeRunner([FIRST, RERUN]))
    c = watch.measure("0.99.1", FAKE, "ubuntu-latest", FakeRunner([table([], FAKE, "0.99.1")]))
    return [a, b, c]


def test_one_issue_per_release_opened_then_updated(tmp_path):
    reports = _reports()
    (release, title, body), = watch.issues_to_file(reports)
    assert release == FAKE and title == f"JAX {FAKE} is slower than {PIN} (release watch)"
    assert body.startswith(f"<!-- jaxci release-watch release={FAKE} -->")
    assert "### g4dn.2xlarge" in body and "### ubuntu-latest" in body
    assert f"| {FORI} | 160±3μs | 73.9±0.5ms | 461.00 | 469.00 |" in body
    assert (f"jaxci history --releases {PIN},{FAKE} --scale ci --bench '{watch.WATCH_BENCH}' --machine ubuntu-latest"
            in body)
    assert f"asv compare jax-v{PIN} jax-v{FAKE} --machine ubuntu-latest --factor 1.5" in body
    assert "noise" in body and SCAN in body
    gh = FakeGh()
    assert watch.file_issues(reports, gh) == [f"jax {FAKE}: opened https://github.com/o/r/issues/41"]
    assert watch.file_issues(reports, gh) == [f"jax {FAKE}: #41 updated"]
    assert [d[0] for d in gh.done] == ["create", "edit"]


def test_file_dry_run_prints_the_issue_from_saved_reports(tmp_path, capsys):
    for r in _reports():
        watch.save_report(r, tmp_path / "artifacts" / r.machine)
    assert watch_cmd.main(["file", "--reports", str(tmp_path / "artifacts"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# JAX {FAKE} is slower than {PIN}") and "1 issue(s) would be opened" in out
    (tmp_path / "artifacts" / "watch-bad-x.json").write_text("{")
    assert watch_cmd.main(["file", "--reports", str(tmp_path / "artifacts"), "--dry-run"]) == 2


def test_a_saved_table_cannot_forge_the_issue(tmp_path, capsys):
    """Issue 83: a report's table reached the issue with a heading, a link and an open code fence. A table of rows
    only is read; each cell is quoted and no cell is a link."""
    import dataclasses

    report = next(r for r in _reports() if r.status == "regression")
    forged = report.table + "\n\n## Forged heading\n[click here](https://evil.example)\n```\n"
    watch.save_report(dataclasses.replace(report, table=forged), tmp_path / "bad" / report.machine)
    assert watch_cmd.main(["file", "--reports", str(tmp_path / "bad"), "--dry-run"]) == 2
    assert "is not a table row" in capsys.readouterr().err
    linked = report.table + "\n| [click](https://evil.example) <!-- x | 1 | 2 | 2.0 | x |"
    watch.save_report(dataclasses.replace(report, table=linked), tmp_path / "ok" / report.machine)
    assert watch_cmd.main(["file", "--reports", str(tmp_path / "ok"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "\\[click\\](https://evil.example) &lt;!-- x" in out and "<!-- x" not in out


def test_gh_cli_finds_the_issue_by_its_marker(tmp_path):
    fake = tmp_path / "gh"
    log = tmp_path / "gh.log"
    listing = json.dumps([{"number": 5, "title": f"JAX {FAKE} x", "body": "someone else's"},
                          {"number": 9, "title": f"JAX {FAKE} y", "body": watch.MARKER.format(release=FAKE)}])
    (tmp_path / "listing.json").write_text(listing)
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\ncat > /dev/null\n"
                    f"case \"$2\" in list) cat {tmp_path / 'listing.json'};; create) echo https://x/issues/10;; esac\n")
    fake.chmod(0o755)
    gh = watch.GhCli("o/r", gh=str(fake))
    assert gh.find(FAKE) == 9  # the one with the marker, not the other issue naming the release
    assert gh.find("0.99.7") is None
    assert gh.create("t", "b") == "https://x/issues/10"
    assert "--repo o/r" in log.read_text()


def test_the_workflow_only_calls_jaxci_and_files_in_one_job():
    wf = yaml.safe_load((REPO / ".github" / "workflows" / "jax-release-watch.yml").read_text())
    on = wf.get("on", wf.get(True))
    assert set(on) == {"schedule", "workflow_dispatch"} and on["schedule"][0]["cron"].endswith("* * *")
    runs = {name: " ".join(s.get("run", "") for s in job["steps"]) for name, job in wf["jobs"].items()}
    assert "jaxci release-watch plan" in runs["plan"]
    assert "jaxci release-watch measure" in runs["measure"]
    assert "jaxci release-watch file" in runs["file"]
    writes = {n: {k for k, v in j["permissions"].items() if v == "write"} for n, j in wf["jobs"].items()}
    assert writes == {"plan": set(), "measure": set(), "file": {"issues"}}


def test_tables_shown_without_rows_skipped_on_both_sides():
    text = watch._table(table([("", "n/a", "n/a", "n/a", "loops.Scan.time_warm(10000000, 8, 'float32', 'gpu')"),
                               ("+", "160±3μs", "73.9±0.5ms", "461.00", FORI),
                               ("", "failed", "n/a", "n/a", DENSE)]))
    out = watch.shown(text)
    assert FORI in out and DENSE in out and "10000000" not in out and out.startswith("| Change")


def test_the_real_runner_keeps_one_scale_for_history_rerun_and_compare(tmp_path, monkeypatch):
    seen = []

    def fake_run(args, **kw):
        seen.append((args, kw["env"]))
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(watch.subprocess, "run", fake_run)
    runner = watch.AsvRunner(tmp_path, scale="ci", backend="cpu", log=open(os.devnull, "w"))
    runner.history([PIN, FAKE], watch.WATCH_BENCH, "m")
    runner.rerun(FAKE, watch.WATCH_BENCH, "m")
    runner.compare(PIN, FAKE, "m", 1.5)
    assert seen[0][0][-6:] == ["--scale", "ci", "--backend", "cpu", "--base", "HEAD"]   # its own chain
    assert all(env["JAXCI_SCALE"] == "ci" and env["JAXCI_BACKEND"] == "cpu" for _, env in seen)
    assert "--skip-existing-successful" not in seen[1][0] and seen[1][0][-1] == f"jax-v{FAKE}^!"


def test_the_committed_demo_report_is_a_report_and_says_what_the_docs_say():
    """docs/history.md quotes a real measure run; its report is committed beside it and must read back."""
    (report,) = watch.load_reports(REPO / "docs" / "watch-demo")
    assert (report.release, report.previous, report.status) == ("0.11.1", "0.11.0", "regression")
    assert len(report.confirmed) == 10 and all(r["name"].startswith("loops.") for r in report.confirmed)
    ratios = sorted(float(r["ratio"]) for r in report.confirmed)
    assert (ratios[0], round(ratios[-1])) == (4.25, 1027)   # "x4.25 .. x1,027" in docs/history.md

"""Reports and patches: hostile release-watch reports, gh output, jupyter-cache databases, known-failures
files, index URLs and file names that reach a patch, a glob, a shell block or an issue, each run as a user runs
it (tests/badinput.py): exit 2 and one line naming what and where, or exit 0 with a stated result; never a
traceback, a hang, or a read or write outside what was named."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from tests.badinput import REPO, Case, outcome_tests, run_case

FIX = REPO / "tests" / "fixtures"
GIT = shutil.which("git")
HOSTILE = "run.sh b/run.sh\nold mode 100644\nnew mode 100755\n--- a/notes.md\n+++ b/notes.md"
GLOB = "x\n*.ipynb"


def report(**changes) -> dict:
    """A confirmed regression report as `release-watch measure` writes it, with `changes` applied."""
    base = {"release": "0.12.1", "previous": "0.12.0", "machine": "c7i.2xlarge", "factor": 1.5,
            "status": "regression", "table": "| + | 1.00ms | 2.00ms | 2.00 | dense.D.time_warm |",
            "rerun_table": "", "noise": [], "reason": "", "scale": "ci",
            "confirmed": [{"name": "dense.D.time_warm", "before": "1.00ms", "after": "2.00ms", "ratio": "2.00",
                           "rerun_ratio": "2.00"}]}
    return {**base, **changes}


REPORTS = {
    "machine": report(machine="x; touch PWNED #"),
    "previous": report(previous="0.12.0; touch PWNED"),
    "scale": report(scale="ci $(touch PWNED)"),
    "mention": report(confirmed=[{"name": "@jax-ml/core <!-- hidden -->", "before": "1.00ms", "after": "2.00ms",
                                  "ratio": "2.00", "rerun_ratio": "2.00"}],
                      table="| + | 1ms | 2ms | 2.0 | cc @octocat --> <!-- |"),
    "factor": report(factor="1.5"),
    "confirmed": report(confirmed=["a", "b"]),
    "release": report(release=0.121),
    "good": report(),
}


def _cache_project(folder: Path, project: Path, notebooks: dict[str, str], failed: str | None = None) -> None:
    """A jupyter-cache folder whose project holds `notebooks` (name -> code); `failed` has a traceback."""
    import jupyter_cache
    import nbformat as nbf

    project.mkdir(parents=True, exist_ok=True)
    cache = jupyter_cache.get_cache(str(folder))
    for name, code in notebooks.items():
        nbf.write(nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(code)]), str(project / name))
        cache.add_nb_to_project(str(project / name))
    if failed:
        with sqlite3.connect(folder / "global.db") as db:
            db.execute("update nbproject set traceback=? where uri=?", ("ValueError: boom", str(project / failed)))


def setup(tmp: Path) -> None:
    """Every hostile input of the cases below, under `tmp`."""
    pytest.importorskip("jupyter_cache")
    for name, data in REPORTS.items():
        (tmp / "rw" / name).mkdir(parents=True)
        (tmp / "rw" / name / "watch-a.json").write_text(json.dumps(data))
    (tmp / "rw" / "plain-file").write_text("{}")
    (tmp / "foreign.json").write_text(json.dumps({"aws_secret_access_key": "AKIA-not-real", "status": "x"}))
    (tmp / "rw" / "link").mkdir()
    (tmp / "rw" / "link" / "watch-a.json").symlink_to(tmp / "foreign.json")
    bin_dir = tmp / "bin"
    for name, output in (("gh-text", "not json at all"), ("gh-list", "[1, 2]"),
                         ("gh-number", json.dumps([{"number": "x",
                                                    "body": "<!-- jaxci release-watch release=0.12.1 -->"}]))):
        (bin_dir / name).mkdir(parents=True)
        gh = bin_dir / name / "gh"
        gh.write_text(f"#!/bin/sh\ncat > /dev/null\necho '{output}'\n")
        gh.chmod(0o755)
    setup_caches(tmp / "jc")
    setup_patches(tmp / "patch")


def setup_caches(root: Path) -> None:
    """jupyter-cache folders: corrupt, empty, foreign, linked databases; records naming files outside the
    project; a failed notebook whose name would be a glob matching every notebook."""
    from jaxci.workflows.failures import content_hash

    for name, data in (("corrupt", b"SQLite format 3\x00" + b"\xff" * 300), ("empty", b"")):
        (root / name).mkdir(parents=True)
        (root / name / "global.db").write_bytes(data)
    (root / "foreign").mkdir()
    with sqlite3.connect(root / "foreign" / "global.db") as db:
        db.execute("create table accounts (name text, password text)")
    _cache_project(root / "real", root / "proj", {"a.ipynb": "1"}, failed="a.ipynb")
    (root / "linked").mkdir()
    (root / "linked" / "global.db").symlink_to(root / "real" / "global.db")
    (root / "secret.txt").write_text("TOPSECRET-LINE\n")
    _cache_project(root / "outside", root / "proj", {"b.ipynb": "2"}, failed="b.ipynb")
    with sqlite3.connect(root / "outside" / "global.db") as db:
        db.execute("update nbproject set uri=?", (str(root / "secret.txt"),))
    _cache_project(root / "glob", root / "proj-glob", {GLOB: "raise ValueError", "a[1].ipynb": "raise KeyError"})
    for tag, name in (("glob", GLOB), ("brackets", "a[1].ipynb")):
        uri = str(root / "proj-glob" / name)  # keyed by the hash `jaxci failures record` writes for it
        known = {"format": 1, "failures": {uri: {"hash": content_hash(uri), "error": "ValueError"}}}
        (root / f"known-{tag}.json").write_text(json.dumps(known))
    (root / "known-entry.json").write_text(json.dumps({"format": 1, "failures": {str(root / "proj" / "a.ipynb"): 5}}))


def setup_patches(root: Path) -> None:
    """Lecture folders and a workflow whose names cannot be written into a diff header."""
    lecture = FIX / "lectures" / "expert" / "scalar_scan.md"
    for name, folder in (("forged", HOSTILE), ("newline", "a\nb"), ("plain", "notes")):
        (root / name / folder).mkdir(parents=True)
        shutil.copy(lecture, root / name / folder / "scalar_scan.md")
    ci = root / "ci"
    shutil.copytree(FIX / "ci_repos" / "split_gpu", ci)
    (ci / ".github" / "workflows" / "build.yml").rename(ci / ".github" / "workflows" / "build\nx.yml")


WATCH = ("release-watch", "file", "--dry-run", "--reports")
GH = ("release-watch", "file", "--repo", "o/r", "--reports", "{tmp}/rw/good")
FAIL = ("failures", "record", "--out", "{tmp}/k.json", "--cache")
CASES = [
    *[Case((*WATCH, f"{{tmp}}/rw/{key}"), 2, expect,
           shown=f"jaxci release-watch file --dry-run --reports R ({key}: {REPORTS[key][key]!r})")
      for key, expect in (("machine", "a machine name is"), ("previous", "is not a JAX release"), ("scale", "scale"))],
    Case((*WATCH, "{tmp}/rw/mention"), 0, "&#64;jax-ml/core &lt;!-- hidden --&gt;",
         shown="jaxci release-watch file --dry-run --reports R (a benchmark named '@jax-ml/core <!-- hidden -->')"),
    Case(("audit", "{tmp}/patch/forged", "--output", "{tmp}/a.md", "--emit-config", "{tmp}/forged.patch",
                  "--no-progress"), 2, "cannot be written into a patch",
         shown="jaxci audit L --emit-config P (a lecture under $'run.sh b/run.sh\\nold mode 100644\\n...')"),
    Case(("audit", "{tmp}/patch/newline", "--output", "{tmp}/a.md", "--emit-config", "{tmp}/nl.patch",
                  "--no-progress"), 2, "cannot be written into a patch",
         shown="jaxci audit L --emit-config P (a lecture under $'a\\nb')"),
    Case(("audit", "{tmp}/patch/ci", "--output", "{tmp}/a.md", "--ci-patch", "{tmp}/ci.patch",
                  "--no-progress"), 2, "cannot be written into a patch",
         shown="jaxci audit R --ci-patch P (a workflow named $'build\\nx.yml')"),
    Case(("failures", "skip", "--cache", "{tmp}/jc/glob", "--known", "{tmp}/jc/known-glob.json",
                  "--project", "{tmp}/jc/proj-glob"), 0,
         "its name holds the control character", shown="jaxci failures skip (a failed notebook named $'x\\n*.ipynb')"),
    Case(("failures", "skip", "--cache", "{tmp}/jc/glob", "--known", "{tmp}/jc/known-brackets.json",
                  "--project", "{tmp}/jc/proj-glob"), 0,
         "a[[]1].ipynb", shown="jaxci failures skip (a failed notebook named 'a[1].ipynb')"),
    *[Case((*FAIL, f"{{tmp}}/jc/{name}"), 2, expect, shown=f"jaxci failures record --cache C ({what})")
      for name, expect, what in (
          ("corrupt", "not a jupyter-cache database", "global.db corrupt"),
          ("empty", "not a jupyter-cache database", "global.db empty"),
          ("foreign", "not a jupyter-cache database", "global.db of another program"),
          ("linked", "symbolic link", "global.db a symbolic link"),
          ("outside", "outside the project", "a record's uri set to a file outside the current folder"))],
    Case((*FAIL, "{tmp}/jc/outside", "--project", "{tmp}/jc/proj"), 2, "outside the project",
         shown="jaxci failures record --cache C --project P (a record's uri set to a file outside P)"),
    Case(("failures", "skip", "--cache", "{tmp}/jc/real", "--known", "{tmp}/jc/known-entry.json",
                  "--project", "{tmp}/jc/proj"), 2,
         "not an object", shown="jaxci failures skip --known K (an entry that is the number 5)"),
    *[Case((*WATCH, f"{{tmp}}/rw/{key}"), 2, key,
           shown=f"jaxci release-watch file ({key}: {json.dumps(REPORTS[key][key])})")
      for key in ("factor", "confirmed", "release")],
    Case((*WATCH, "{tmp}/nonexistent"), 2, "no such folder"),
    Case((*WATCH, "{tmp}/rw/plain-file"), 2, "not a folder"),
    Case((*WATCH, "{tmp}/rw/link"), 2, "symbolic link",
         shown="jaxci release-watch file --reports R (R/watch-a.json a link to a JSON outside R)"),
    *[Case(GH, 2, "gh issue list", env={"PATH": f"{{tmp}}/bin/{name}:{os.environ.get('PATH', '')}"},
           shown=f"jaxci release-watch file --repo o/r (gh prints {shown_as})")
      for name, shown_as in (("gh-text", "'not json at all'"), ("gh-list", "[1, 2]"),
                             ("gh-number", "a number that is \"x\""))],
    Case(("release-watch", "plan", "--index-url", "not a url"), 2, "--index-url"),
    Case(("release-watch", "plan", "--index-url", "ftp://example.org/simple"), 2, "--index-url"),
]


scratch, test_bad_input_outcome = outcome_tests(CASES, setup)


def _case(*args, rc=2, expect=""):
    return Case(args, rc, expect)


def test_refused_inputs_lose_nothing_and_echo_nothing(scratch):
    """The refusals write no patch and no known-failures file, leave every database byte for byte as it was,
    and never print what a foreign file or a record's target holds."""
    jc = scratch / "jc"
    before = {p: p.read_bytes() for p in (jc / "empty" / "global.db", jc / "foreign" / "global.db",
                                          jc / "corrupt" / "global.db")}
    for case in CASES:
        out = run_case(case, scratch)
        assert "AKIA-not-real" not in out.stdout + out.stderr and "aws_secret" not in out.stdout + out.stderr
        assert "TOPSECRET" not in out.stdout + out.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert not any((scratch / name).exists() for name in ("forged.patch", "nl.patch", "ci.patch", "k.json"))
    assert [p.name for p in (jc / "foreign").iterdir()] == ["global.db"]  # jupyter-cache added nothing
    assert not (scratch / "PWNED").exists() and not (REPO / "PWNED").exists()


def test_the_issue_quotes_what_a_report_holds(scratch):
    """The dry run of a report naming '@jax-ml/core <!-- hidden -->': no mention, no comment but the marker."""
    import shlex

    out = run_case(_case(*WATCH, "{tmp}/rw/mention", rc=0), scratch)
    assert out.rc == 0, out.stderr
    assert "@" not in out.stdout and out.stdout.count("<!--") == 1 and out.stdout.count("-->") == 1
    good = run_case(_case(*WATCH, "{tmp}/rw/good", rc=0), scratch).stdout
    block = good.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert shlex.split(block[0])[-2:] == ["--machine", "c7i.2xlarge"] and len(shlex.split(block[1])) == 8


def test_report_record_takes_what_measure_writes(tmp_path):
    """The validation passes every report `measure` saves (a round trip), so it refuses only bad ones."""
    from jaxci.workflows import release_watch as watch

    saved = watch.WatchReport("0.12.1", "0.12.0", "c7i.2xlarge", 1.5, "noise", "| x |", noise=["a.b(1, 'c')"],
                              reason="", scale="full")
    path = watch.save_report(saved, tmp_path)
    assert watch.load_reports(tmp_path) == [saved] and path.parent == tmp_path


def test_a_normal_patch_still_applies(scratch, tmp_path):
    """The check refuses only unsafe names: a lecture under notes/ gives a patch `git apply --check` takes."""
    if GIT is None:
        pytest.skip("needs git")
    work = tmp_path / "plain"
    shutil.copytree(scratch / "patch" / "plain", work)
    patch = tmp_path / "plain.patch"
    out = run_case(_case("audit", str(work), "--output", str(tmp_path / "a.md"), "--emit-config", str(patch),
                     "--no-progress", rc=0), scratch)
    assert out.rc == 0 and "diff --git a/notes/scalar_scan.md b/notes/scalar_scan.md" in patch.read_text()
    subprocess.run([GIT, "init", "-q"], cwd=work, check=True)
    subprocess.run([GIT, "apply", "--check", str(patch)], cwd=work, check=True)


def test_diff_paths_and_lines(tmp_path):
    """diff_path refuses what git would read as another header line; file_diff splits lines on \\n only, so
    a file holding U+2028 or a form feed gives a patch git applies exactly."""
    from jaxci.util.patch import diff_path, file_diff
    from jaxci.util.validate import InputError

    for bad in ("a\nb.md", "a\tb.md", 'a"b.md', "a\\b.md", "/etc/x", "../x", "a//b", " a.md", ""):
        with pytest.raises(InputError):
            diff_path(bad)
    assert diff_path("lectures/a b é.md") == "lectures/a b é.md"
    if GIT is None:
        return
    old, new = "one\u2028two\fthree\nfour", "one\u2028two\fthree\nfive"
    (tmp_path / "x.md").write_text(old, encoding="utf-8")
    (tmp_path / "p.diff").write_text(file_diff("x.md", old, new), encoding="utf-8")
    subprocess.run([GIT, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([GIT, "apply", "p.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "x.md").read_text(encoding="utf-8") == new


def test_a_glob_matches_exactly_its_notebook():
    import fnmatch

    from jaxci.util.quoting import glob_literal
    from jaxci.util.validate import InputError

    for name in ("a[1].ipynb", "b*.ipynb", "c?.md", "d[!x].md"):
        pattern = glob_literal(name)
        assert fnmatch.fnmatchcase(name, pattern)
        assert not [n for n in ("a1.ipynb", "bx.ipynb", "cc.md", "dy.md", "x.ipynb") if fnmatch.fnmatchcase(n, pattern)]
    with pytest.raises(InputError):
        glob_literal(GLOB)


def test_a_silent_index_is_a_bounded_wait(scratch):
    """A listener that accepts and never answers: the plan gives up after --index-timeout (a hang guard, not
    a timing check: run_case's own limit is 60 s) with one line."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])  # keep it open, say nothing
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.getsockname()[1]}/simple"
        out = run_case(_case("release-watch", "plan", "--index-url", url, "--index-timeout", "2"), scratch)
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()
    assert out.rc == 2 and "no answer from the package index within 2 s" in out.line, (out.rc, out.stderr)
    assert out.stderr.strip().count("\n") == 0 and held  # pip did connect, and was ended

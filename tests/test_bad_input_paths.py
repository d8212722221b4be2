"""Writes, links, FIFOs. Every output path goes through jaxci.util.safewrite (a FIFO, a
device, a link or a failed write is one line and exit 2, before the work where it can be checked first);
`report --offline-assets` follows no link out of the folders it was given and leaves nothing on failure; the
audit's scratch copy keeps no link and lecture discovery reads nothing outside the named folder, and no
message echoes a file's bytes; `history --restore-refs` acts on the current directory's repository only;
`gpu_capture --out` is refused inside a results tree. Each case is a fresh `python -m jaxci` process
(tests/badinput.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.badinput import FIXTURES, REPO, Case, outcome_tests, run_case, user_env

P = "{tmp}/p40"
EXEC = "{fixtures}/exec"
RW = ("release-watch", "measure", "--release", "0.12.1", "--previous", "0.12.0", "--machine", "m", "--out", "{tmp}")
CASES = [
    # one writer: FIFOs, devices, links (each refused at once, never blocking)
    Case(("env", "--pin-cpu", "--github-env", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci env --pin-cpu --github-env FIFO"),
    Case(("env", "--pin-cpu", "--github-output", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci env --pin-cpu --github-output FIFO"),
    Case(("env", "--pin-cpu", "--github-output", f"{P}/out.txt", "--github-env", f"{P}/fifo"), 2,
         "is a FIFO", shown="jaxci env --pin-cpu --github-output F --github-env FIFO (F stays empty)"),
    Case(("history", "--validate", "0.11.0", "--github-output", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci history --validate 0.11.0 --github-output FIFO"),
    Case(("history", "--validate", "", "--github-output", "/dev/full"), 2, "is a character device",
         shown="jaxci history --validate '' --github-output /dev/full"),
    Case(("release-watch", "plan", "--github-output", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci release-watch plan --github-output FIFO"),
    Case((*RW, "--summary", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci release-watch measure ... --summary FIFO (before anything is measured)"),
    Case(("inputs", "plan", "--run-id", "1", "--github-output", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci inputs plan --run-id 1 --github-output FIFO"),
    Case(("failures", "record", "--cache", f"{P}/nocache", "--out", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci failures record --cache C --out FIFO"),
    Case(("audit", EXEC, "--summary", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci audit L --summary FIFO"),
    Case(("audit", EXEC), 2, "is a FIFO", env={"GITHUB_STEP_SUMMARY": f"{P}/fifo"},
         shown="GITHUB_STEP_SUMMARY=FIFO jaxci audit L"),
    Case(("audit", EXEC, "--output", "/dev/full"), 2, "is a character device"),
    Case(("audit", EXEC, "--emit-config", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci audit L --emit-config FIFO"),
    Case(("audit", EXEC, "--ci", "--ci-patch", f"{P}/link-out"), 2, "is a symbolic link",
         shown="jaxci audit L --ci --ci-patch LINK (to a file elsewhere)"),
    Case(("profile", "scan", "--trace-out", f"{P}/fifo"), 2, "is a FIFO",
         shown="jaxci profile scan --trace-out FIFO"),
    Case(("report", f"{P}/results", "--out", f"{P}/out-link"), 2, "is a symbolic link",
         shown="jaxci report R --out D (D/findings.md a link elsewhere)"),
    # report --offline-assets: links in the cache and the site, sizes, special files
    *[Case(("report", f"{P}/results", "--html", f"{P}/html-{cache}", "--offline-assets", f"{P}/{cache}",
                  "--no-progress"), 2, frag, shown=f"jaxci report R --html H --offline-assets C ({what})")
      for cache, frag, what in (
          ("cache-key", "leading out of", "an asset in C a link to a private key"),
          ("cache-etc", "leading out of", "C/bootstrap@3.1.1/package/dist/fonts a link to /etc"),
          ("cache-big", "over the limit of 8.0 MiB", "a 2 GiB asset"),
          ("cache-fifo", "is a FIFO", "an asset a FIFO"))],
    *[Case(("report", f"{P}/results", "--html", f"{P}/{html}", "--offline-assets", f"{P}/cache",
                  "--no-progress"), 2, frag, shown=f"jaxci report R --html H --offline-assets C ({what})")
      for html, frag, what in (
          ("html-graph", "leading out of", "H/graph.html a link to a page elsewhere"),
          ("html-vendor", "is a symbolic link", "H/vendor a link to a folder elsewhere"),
          ("html-manifest", "is a symbolic link", "H/vendor/MANIFEST.json a link elsewhere"),
          ("html-findings", "is a symbolic link", "H/findings a link to a folder elsewhere"),
          ("html-index", "leading out of", "H/index.html a link to a page elsewhere"))],
    Case(("report", f"{P}/results", "--html", f"{P}/html-ok", "--offline-assets", f"{P}/cache",
                "--no-progress"), 0, "vendored 13 files", shown="jaxci report R --html H --offline-assets C"),
    # lectures that are links out of the named folder; messages that would echo a file's bytes
    Case(("audit", f"{P}/lectures-environ", "--no-ci"), 1, "leading out of",
         shown="jaxci audit L (L/x.ipynb -> /proc/self/environ)"),
    Case(("audit", f"{P}/lectures-notjson", "--no-ci"), 1, "malformed notebook: NotJSONError",
         shown="jaxci audit L (L/x.ipynb holds 'SECRET=...', not JSON)"),
    Case(("audit", f"{P}/lectures-config", "--no-ci"), 0, "cannot read: is a symbolic link leading out",
         shown="jaxci audit L (L/_config.yml -> a file elsewhere)", pick="cannot read"),
    # history --restore-refs: only the current directory's repository
    Case(("history", "--restore-refs", "--repo", f"{P}"), 2, "is not in a git repository",
         shown="jaxci history --restore-refs --repo DIR (not a git repository)"),
    Case(("history", "--restore-refs", "--repo", f"{P}/emptyrepo"), 2, "is not a jax-ci-bench checkout",
         shown="jaxci history --restore-refs --repo R (an empty git repository)"),
    # gpu_capture --out into results/
    Case(("--budget", "100", "--out", "results/lab-h200"), 2, "inside the results tree",
         script="scripts/gpu_capture.py", shown="python scripts/gpu_capture.py --budget 100 --out results/lab-h200"),
    Case(("--budget", "100", "--out", f"{P}/results/m/capture"), 2, "inside the results tree",
         script="scripts/gpu_capture.py",
         shown="python scripts/gpu_capture.py --budget 100 --out R/m/capture (R a results tree)"),
]


def fake_cache(cache: Path) -> None:
    """The npm packages scripts/fetch-asv-assets.sh unpacks, as small stand-ins (the contents are not read)."""
    from jaxci.report import offline

    for pkg, path in set(offline.ASSETS.values()):
        (cache / pkg / "package" / path).parent.mkdir(parents=True, exist_ok=True)
        (cache / pkg / "package" / path).write_text(f"/* {pkg} {path} */\n")
    for pkg, folders in offline.EXTRA.items():
        for folder in folders:
            (cache / pkg / "package" / folder).mkdir(parents=True, exist_ok=True)
            for name in ("a.woff", "b.ttf", "c.svg"):
                (cache / pkg / "package" / folder / name).write_text(name)


def asv_site(html: Path) -> None:
    """asv's published pages, as far as the vendoring reads them: index.html and graph.html with CDN tags."""
    from jaxci.report import offline

    html.mkdir()
    tags = "".join(f'<script src="{u}" integrity="sha-x" crossorigin="anonymous"></script>' for u in offline.ASSETS)
    for name in ("index.html", "graph.html"):
        (html / name).write_text(f"<html><head>{tags}</head><body></body></html>")


def setup(tmp: Path) -> None:
    from tests.test_import_transaction import results_tree

    root = tmp / "p40"
    root.mkdir()
    os.mkfifo(root / "fifo")
    (root / "secret").write_text("PRIVATE KEY\n")
    (root / "link-out").symlink_to(root / "secret")
    shutil.copytree(results_tree(root / "src", machine="m"), root / "results")
    (root / "out-link").mkdir()
    (root / "out-link" / "findings.md").symlink_to(root / "secret")
    js, fonts = "jquery@3.3.1/package/dist/jquery.min.js", "bootstrap@3.1.1/package/dist/fonts"
    for name in ("cache", "cache-key", "cache-etc", "cache-big", "cache-fifo"):
        fake_cache(root / name)
    for name in ("cache-key", "cache-etc", "cache-big", "cache-fifo", "graph", "vendor", "manifest", "findings",
                 "index", "ok"):
        asv_site(root / f"html-{name}")
    (root / "cache-key" / js).unlink()
    (root / "cache-key" / js).symlink_to(root / "secret")
    shutil.rmtree(root / "cache-etc" / fonts)
    (root / "cache-etc" / fonts).symlink_to("/etc")
    os.truncate(root / "cache-big" / js, 2 << 30)
    (root / "cache-fifo" / js).unlink()
    os.mkfifo(root / "cache-fifo" / js)
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "page.html").write_text("<html><body>not asv's</body></html>")
    (root / "html-manifest" / "vendor").mkdir()
    for html, path, target in (("graph", "graph.html", "elsewhere/page.html"), ("vendor", "vendor", "elsewhere"),
                               ("manifest", "vendor/MANIFEST.json", "secret"), ("findings", "findings", "elsewhere"),
                               ("index", "index.html", "elsewhere/page.html")):
        (root / f"html-{html}" / path).unlink(missing_ok=True)
        (root / f"html-{html}" / path).symlink_to(root / target)
    lectures(root)
    (root / "emptyrepo").mkdir()
    subprocess.run(["git", "init", "-q", str(root / "emptyrepo")], check=True)


SECRET = "jaxci-test-secret-4f1c"


def lectures(root: Path) -> None:
    environ = root / "lectures-environ"
    environ.mkdir()
    (environ / "x.ipynb").symlink_to("/proc/self/environ")
    notjson = root / "lectures-notjson"
    notjson.mkdir()
    (notjson / "x.ipynb").write_text(f"SECRET={SECRET}\n")
    config = root / "lectures-config"
    shutil.copytree(FIXTURES / "exec", config, ignore=shutil.ignore_patterns("raises.md", "*.ipynb", "_config.yml"))
    (config / "_config.yml").symlink_to(root / "secret")


scratch, test_bad_input_outcome = outcome_tests(CASES, setup)


def test_refusals_wrote_nothing_and_read_nothing_outside(scratch):
    """After every case: the FIFO is still a FIFO, the linked-to files unchanged, no vendor/ left behind by a
    refused vendoring, no half-appended GitHub file, no secret in any message."""
    root = scratch / "p40"
    assert stat.S_ISFIFO(os.lstat(root / "fifo").st_mode)
    assert (root / "secret").read_text() == "PRIVATE KEY\n"
    assert (root / "elsewhere" / "page.html").read_text() == "<html><body>not asv's</body></html>"
    assert sorted(p.name for p in (root / "elsewhere").iterdir()) == ["page.html"]
    for name in ("cache-key", "cache-etc", "cache-big", "cache-fifo"):
        assert not (root / f"html-{name}" / "vendor").exists()
        assert not [p for p in (root / f"html-{name}").iterdir() if p.name.startswith(".vendor")]
    assert not (root / "out.txt").exists() or (root / "out.txt").read_text() == ""


def test_vendoring_follows_links_only_inside_and_leaves_no_partial_copy(scratch, tmp_path):
    root = scratch / "p40"
    run_case(next(c for c in CASES if c.shown == "jaxci report R --html H --offline-assets C"), scratch)
    html = root / "html-ok"
    manifest = json.loads((html / "vendor" / "MANIFEST.json").read_text())
    assert len(manifest) == 13 and all(len(v["sha256"]) == 64 for v in manifest.values())
    assert "vendor/jquery@3.3.1/dist/jquery.min.js" in (html / "graph.html").read_text()
    # a link inside the cache is followed (as its content); a failure part-way leaves vendor/ as it was
    cache = tmp_path / "cache"
    fake_cache(cache)
    js = cache / "jquery@3.3.1/package/dist/jquery.min.js"
    (cache / "real.js").write_text("inside")
    js.unlink()
    js.symlink_to(cache / "real.js")
    from jaxci.report import offline

    site = tmp_path / "html"
    asv_site(site)
    offline.vendor(site, cache)
    assert (site / "vendor/jquery@3.3.1/dist/jquery.min.js").read_text() == "inside"
    assert not (site / "vendor/jquery@3.3.1/dist/jquery.min.js").is_symlink()
    before = {p: p.read_bytes() for p in (site / "vendor").rglob("*") if p.is_file()}
    (cache / "bootstrap@3.1.1/package/dist/fonts/z.woff").symlink_to(root / "secret")
    with pytest.raises(offline.safeio.UnsafeFile, match="leading out of"):
        offline.vendor(site, cache)
    assert {p: p.read_bytes() for p in (site / "vendor").rglob("*") if p.is_file()} == before
    assert not [p for p in site.iterdir() if p.name.startswith(".vendor")]


def test_the_lecture_link_and_a_malformed_lecture_echo_no_bytes(scratch):
    """/proc/self/environ behind a lecture link is not read, and a file's bytes never reach the message or
    the job summary."""
    summary = scratch / "summary.md"
    for folder in ("lectures-environ", "lectures-notjson"):
        case = Case(("audit", f"{P}/{folder}", "--no-ci", "--summary", str(summary)), 1, "",
                    env={"JAXCI_PROBE": SECRET})
        out = run_case(case, scratch)
        assert out.rc == 1 and SECRET not in out.stdout + out.stderr, out.stderr
    assert SECRET not in summary.read_text() and "leading out of" in summary.read_text()


def test_the_scratch_copy_keeps_no_link_out_of_the_lecture_folder(tmp_path):
    from jaxci.audit.runner import scratch_copy

    victim = tmp_path / "victim"
    victim.write_text("keep")
    lec = tmp_path / "lec"
    (lec / "data").mkdir(parents=True)
    (lec / "data" / "x.csv").write_text("1,2")
    (lec / "cfg.txt").symlink_to(victim)
    (lec / "inside.csv").symlink_to(lec / "data" / "x.csv")
    (lec / "alias").symlink_to(lec / "data")
    (lec / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(lec / "pipe")
    root, work, notes = scratch_copy(lec)
    try:
        work = Path(work)
        assert not (work / "cfg.txt").exists() and not (work / "cfg.txt").is_symlink()
        assert (work / "inside.csv").read_text() == "1,2" and not (work / "inside.csv").is_symlink()
        assert (work / "alias" / "x.csv").resolve() == (work / "data" / "x.csv").resolve()
        (work / "inside.csv").write_text("changed")
        assert (lec / "data" / "x.csv").read_text() == "1,2"
        assert not (work / "pipe").exists() and not (work / "dangling").is_symlink()
        assert any("cfg.txt" in n and "leading out" in n for n in notes) and any("dangling" in n for n in notes)
    finally:
        shutil.rmtree(root)


def test_an_executed_cell_writing_through_a_link_clobbers_nothing(tmp_path):
    """End to end: `cfg.txt -> victim` in the lecture folder, a cell `open('cfg.txt','w')`:
    the write lands in the scratch copy, the victim is unchanged, and the row says the link was left out."""
    import nbformat

    victim = tmp_path / "victim"
    victim.write_text("keep")
    lec = tmp_path / "lec"
    lec.mkdir()
    (lec / "cfg.txt").symlink_to(victim)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbformat.v4.new_code_cell("open('cfg.txt', 'w').write('clobbered')"))
    nbformat.write(nb, lec / "writer.ipynb")
    proc = subprocess.run([sys.executable, "-m", "jaxci", "audit", str(lec), "--execute", "--platforms", "cpu",
                           "--no-progress", "--no-ci", "--format", "json"], cwd=REPO, env=user_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert victim.read_text() == "keep" and (lec / "cfg.txt").is_symlink()
    (row,) = json.loads(proc.stdout)["lectures"]
    assert any("cfg.txt" in n and "left out" in n for n in row["notes"]), row["notes"]


def test_restore_refs_outside_a_checkout_touches_no_repository(tmp_path):
    """Run from a folder that is no repository, --restore-refs refuses and the checkout jaxci runs from gains no
    ref; run inside a checkout, it says which one it restored."""
    before = subprocess.run(["git", "-C", str(REPO), "for-each-ref"], capture_output=True, text=True).stdout
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "jaxci", "history", "--restore-refs"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "is not in a git repository" in proc.stderr and str(tmp_path) in proc.stderr
    assert subprocess.run(["git", "-C", str(REPO), "for-each-ref"], capture_output=True, text=True).stdout == before


def test_a_file_size_limit_is_one_line_not_a_traceback(tmp_path):
    """EFBIG (RLIMIT_FSIZE) while `audit --output` writes: one line naming --output and the path, exit 2."""
    import resource

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))

    env = {**user_env(), "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    out = tmp_path / "t.md"
    proc = subprocess.run([sys.executable, "-m", "jaxci", "audit", str(FIXTURES / "exec"), "--no-ci", "--output",
                           str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=limit)
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 2 and lines == [f"jaxci audit: --output {out}: cannot write it (File too large)"], \
        proc.stderr
    assert not out.exists() and not list(tmp_path.iterdir())

"""`jaxci report RESULTS_DIR [--html HTML_DIR [--offline-assets CACHE]] [--out DIR] [--format md|json|summary]`.

Prints the crossover table and FP64 ratios (md), the whole report (json), or a short summary (summary: the
decision sheets of the chosen families, then one evidence line; what scripts/bench.sh ends with); --out writes
findings.md, guidance.md and report.json; --html writes HTML_DIR/findings/ and links it from asv's index.html (run
after `asv publish`, which writes the same page itself through its publisher plugin, commands/asv_findings.py);
--offline-assets CACHE (the npm packages scripts/fetch-asv-assets.sh unpacks) vendors the libraries asv's pages load
from public CDNs into HTML_DIR/vendor/ and points the pages at them (jaxci/report/offline.py).
Both destinations are checked before the results are read (a folder, outside RESULTS_DIR, the files it will
write not folders); progress goes to stderr while the result files are read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from jaxci.catalogue import CatalogueError
from jaxci.commands.argtypes import OneLineParser, refuse
from jaxci.results.records import ResultsError
from jaxci.util.validate import InputError, inside, quoted

OUT_FILES = ("findings.md", "guidance.md", "report.json")


class Refused(InputError):
    """A refusal of the report's input: one line, as every InputError."""


def check_destination(option: str, folder: Path, results_dir: Path, files: tuple[str, ...]) -> None:
    """A folder the report writes into: a folder (or creatable), outside the results, its files writable."""
    import os

    if folder.exists() and not folder.is_dir():
        raise Refused(f"{option} {folder}: is a file; give a folder")
    if not folder.exists() and not folder.resolve().parent.is_dir():
        raise Refused(f"{option} {folder}: folder {folder.resolve().parent} does not exist")
    if inside(folder, results_dir):
        raise Refused(f"{option} {folder}: inside the results folder {results_dir}; the next report would read "
                      "what this one writes: give a folder outside it")
    from jaxci.util import safewrite

    for name in files:
        path = folder / name
        if path.is_dir() or (path.exists() and not path.is_file()):
            raise Refused(f"{option} {path}: is a folder or special file, not a file the report can write")
        if folder.is_dir():
            try:
                safewrite.check_target(path)
            except safewrite.UnsafeWrite as exc:
                raise Refused(f"{option} {exc}") from None
        if path.exists() and not os.access(path, os.W_OK):
            raise Refused(f"{option} {path}: not writable")
    if folder.exists() and not os.access(folder, os.W_OK):
        raise Refused(f"{option} {folder}: not writable")


def check_html(folder: Path, results_dir: Path) -> None:
    from jaxci.util import safeio

    check_destination("--html", folder, results_dir, ())
    findings = folder / "findings"
    if findings.is_symlink():  # written through, it would put the page wherever the link points
        raise Refused(f"--html {findings}: is a symbolic link; the report writes the folder findings/ there")
    if findings.exists() and not findings.is_dir():
        raise Refused(f"--html {findings}: is a file; the report writes the folder findings/ there")
    if folder.exists():  # else both are created (its parent was checked above)
        check_destination("--html", findings, results_dir, (*OUT_FILES, "index.html"))
    for name in ("index.html", "error.html"):
        page = folder / name
        if page.exists() or page.is_symlink():
            try:
                safeio.read_text(safeio.within(page, folder), 64 * 1024 * 1024, links=False)
            except safeio.UnsafeFile as exc:
                raise Refused(f"--html {exc.path}: {exc.reason}: not asv's page, which the report links from; "
                              "run `asv publish` again") from None


class ReadProgress:
    """'reading N/M result files' on stderr, at most every 2 s (and at the end when it took that long)."""

    def __init__(self, stream=sys.stderr, every_s: float = 2.0):
        self.stream, self.every_s = stream, every_s
        self.start = self.last = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if now - self.last >= self.every_s or (done == total and now - self.start >= self.every_s):
            self.last = now
            print(f"jaxci report: reading result files: {done:,}/{total:,} ({now - self.start:.0f} s)",
                  file=self.stream, flush=True)


def _maintainer_pages(chosen: list[str]) -> tuple[str, ...]:
    """Every page --maintainers writes (README.md, one per family), so each is checked before the report is built
    and nothing is written when one of them cannot be (a link at the last page's name)."""
    from types import SimpleNamespace

    from jaxci.catalogue import load_catalogue
    from jaxci.report import maintainers

    cat = load_catalogue()
    known = SimpleNamespace(catalogue=cat, families=[f for f in chosen or [] if f in cat])
    return ("README.md", *(f"{f}.md" for f in maintainers.families(known)))


def _reason(errors: list[str], results_dir) -> str:
    """What the loader said, shortened to one line: the first reason (its paths within the folder) and how many
    more."""
    from jaxci.results.records import loader_reason

    if not errors:
        return "expected <machine>/*.json from asv run"
    first = loader_reason(errors[0], results_dir)
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return f"the loader says: {first}{more}"


def _sheet_inputs(family: list[str], audit: str | None) -> tuple[list[str], dict | None]:
    """--family names checked against the catalogue's runner families; --audit read as the audit's JSON."""
    from jaxci.catalogue import load_catalogue

    families = load_catalogue()
    for name in family:
        if name not in families or families[name].is_lab:
            raise Refused(f"--family {quoted(name, 80)}: not a runner family of env_matrix/machines.toml "
                          f"(known: {', '.join(sorted(n for n, m in families.items() if not m.is_lab))})")
    data = None
    if audit:  # read and validated once (jaxci.audit.writing.record): every sheet and advice gets the checked record
        from jaxci.audit.writing import record

        try:
            data = record.read(audit)
        except record.AuditError as exc:
            raise Refused(f"--audit {audit}: {exc}") from None
    return family, data


def _committed(args, results_dir: Path) -> list:
    """--audits' committed audits (default: audits/ beside the results); a folder that cannot be read is said on
    stderr and left out, the others kept; an --audits folder that does not exist is refused."""
    from jaxci.report import committed_audits as audits

    folder = Path(args.audits) if args.audits else audits.beside(results_dir)
    if args.audits and not folder.is_dir():
        raise Refused(f"--audits {folder}: no such folder")
    found, problems = audits.load(folder)
    for line in problems:
        print(f"jaxci report: --audits: {line}: left out", file=sys.stderr)
    return found


def _check_assets(args) -> None:
    from jaxci.report import offline

    if not args.html:
        raise Refused("--offline-assets needs --html HTML_DIR (the asv site whose pages it rewrites)")
    try:
        offline.check_cache(Path(args.offline_assets))
        offline.check_sources(Path(args.offline_assets))
    except (offline.AssetsMissing, offline.safeio.UnsafeFile) as exc:
        raise Refused(f"--offline-assets {exc}") from None
    try:
        offline.check_target(Path(args.html))
    except offline.safeio.UnsafeFile as exc:
        raise Refused(f"--html {exc}") from None


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="jaxci report", description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", help="asv results directory (results/<machine>/*.json)")
    parser.add_argument("--html", metavar="HTML_DIR", help="asv's html directory: write findings/ there and link it")
    parser.add_argument("--offline-assets", metavar="CACHE",
                        help="with --html: copy asv's CDN libraries from CACHE (scripts/fetch-asv-assets.sh) into "
                             "HTML_DIR/vendor/ and rewrite asv's pages to load them, so they work offline")
    parser.add_argument("--out", metavar="DIR", help="write findings.md, guidance.md and report.json here")
    parser.add_argument("--format", choices=("md", "json", "summary"), default="md", help="what to print (default: md)")
    parser.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--family", action="append", default=[], metavar="NAME",
                        help="a decision sheet for this catalogue family (repeatable; default: the families the "
                             "results name, else g4dn.2xlarge and c7i.2xlarge)")
    parser.add_argument("--audit", metavar="FILE", help="an audit JSON (jaxci audit --execute --format json): "
                                                       "lecture build times for questions 6 and 7")
    parser.add_argument("--audits", metavar="DIR", default=None,
                        help="the committed executed audits of real repositories (audits/<repository>@<commit>/, "
                             "jaxci audit publish): build minutes per family for question 6 and the maintainers' "
                             "report (default: audits/ beside RESULTS_DIR, when there)")
    parser.add_argument("--model-input", action="append", default=[], metavar="MACHINE",
                        help="a local machine of RESULTS_DIR whose results the runner model reads too (repeatable; "
                             "by default it reads the committed captures and full-scale catalogue runs only, and "
                             "the findings page names them)")
    parser.add_argument("--maintainers", metavar="DIR", default=None,
                        help="write the maintainers' report here (README.md and one page per family, at most two "
                             "printed pages each: docs/report/)")
    return parser


def _build(args, results_dir: Path):
    """The report, with progress on stderr while the results are read. Raises Refused with the reason."""
    from jaxci.report.build import build
    from jaxci.results import records

    records.PROGRESS["hook"] = None if args.no_progress else ReadProgress()
    try:
        families, audit = _sheet_inputs(args.family, args.audit)
        named = _model_inputs(args.model_input, results_dir)
        report = build(results_dir, families=families, audit=audit, audits=_committed(args, results_dir),
                       model_inputs=named)
    except (ResultsError, CatalogueError) as exc:
        raise Refused(" ".join(str(exc).split())) from None
    finally:
        records.PROGRESS["hook"] = None
    if not report.records:  # an empty or wrong folder is not "all fine": say why
        raise Refused(f"{args.results_dir}: no asv result values in it ({_reason(report.errors, args.results_dir)})")
    return report


def _model_inputs(names: list[str], results_dir: Path) -> tuple[str, ...]:
    """--model-input names, each a machine folder of `results_dir`; Refused naming the first that is not."""
    from jaxci.util.validate import machine_name

    out = []
    for name in names:
        try:
            checked = machine_name("--model-input", name)
        except InputError as exc:
            raise Refused(str(exc)) from None
        if not (results_dir / checked / "machine.json").is_file():
            raise Refused(f"--model-input {checked}: no results/{checked}/machine.json in {results_dir}")
        out.append(checked)
    return tuple(out)


def _write(args, report, findings: str, guidance: str, data: dict) -> None:
    """findings.md, guidance.md and report.json into --out; the findings page into --html."""
    if args.out:
        from jaxci.util import safewrite

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        safewrite.write_files(out, {"findings.md": findings, "guidance.md": guidance,
                                    "report.json": json.dumps(data, indent=1, default=str)}, option="--out")
    if args.maintainers:
        from jaxci.report import maintainers

        written = maintainers.write(report, Path(args.maintainers), maintainers.families(report))
        print(f"jaxci report: wrote {len(written)} pages of the maintainers' report to {args.maintainers}",
              file=sys.stderr)
    if args.html:
        print(f"jaxci report: {_write_html(report, Path(args.html), findings, guidance, data)}", file=sys.stderr)
        if args.offline_assets:
            from jaxci.report import offline

            print(f"jaxci report: {offline.vendor(Path(args.html), Path(args.offline_assets))}", file=sys.stderr)


def _write_html(report, html_dir: Path, findings: str, guidance: str, data: dict) -> str:
    """The findings page into html_dir/findings/, linked from asv's index.html; what was done, in one line."""
    from jaxci.report import maintainers
    from jaxci.report.page import write_page

    page, link = write_page(report, html_dir, findings, guidance, data,
                            maintainers.site_html(report, maintainers.families(report)))
    return f"wrote {page} ({link})"


def write_site(results_dir: Path, html_dir: Path) -> str:
    """`jaxci report RESULTS_DIR --html HTML_DIR` without printing a report: the same checks, the same defaults
    (families, committed audits), the same page; what `asv publish` runs through its publisher plugin
    (jaxci/commands/asv_findings.py). Returns what was written; raises Refused, safeio.UnsafeFile or OSError."""
    from jaxci.report.build import to_json
    from jaxci.report.findings import findings_md, guidance_md

    args = _parser().parse_args([str(results_dir), "--html", str(html_dir)])
    check_html(html_dir, results_dir)
    report = _build(args, results_dir)
    check_release_refs(report, results_dir)
    line = _write_html(report, html_dir, findings_md(report), guidance_md(report), to_json(report))
    warned = f"; {len(report.errors)} warning(s): `jaxci report {results_dir}` lists them" if report.errors else ""
    return line + warned


def check_release_refs(report, results_dir: Path) -> None:
    """--html after `asv publish`: refused when the results hold a release history whose jax-v* tags this
    clone lacks (git clone brings none), because asv then drew no history; the one command that fixes it."""
    from jaxci.results.history import missing_release_tags

    releases = sorted({v for vs in report.releases_measured.values() if len(vs) > 1 for v in vs})
    gap = missing_release_tags(results_dir, releases) if releases else None
    if gap:
        top, missing = gap
        raise Refused(f"--html: {len(missing)} of the {len(releases)} JAX releases in {results_dir} have no "
                      f"jax-v* tag in {top} (a clone brings none), so asv publish drew no "
                      "release history: run `jaxci history --restore-refs && asv publish` there, then this again")


def _print(fmt: str, report, data: dict) -> None:
    from jaxci.report.findings import crossover_table, fp64_table, predicted_crossover_table

    if fmt == "json":
        print(json.dumps(data, indent=1, default=str))
    elif fmt == "summary":
        from jaxci.report.summary import summary_lines

        print("\n".join(summary_lines(report)))
    else:
        print("## Crossovers (measured)\n\n" + crossover_table(report))
        print("\n## Crossovers (predicted)\n\n" + predicted_crossover_table(report))
        print("\n## FP64 / FP32 time ratios\n\n" + fp64_table(report))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from jaxci.report.build import to_json
    from jaxci.report.findings import findings_md, guidance_md

    results_dir = Path(args.results_dir)
    start = time.perf_counter()
    try:
        if args.out:
            check_destination("--out", Path(args.out), results_dir, OUT_FILES)
        if args.maintainers:
            check_destination("--maintainers", Path(args.maintainers), results_dir, _maintainer_pages(args.family))
        if args.html:
            check_html(Path(args.html), results_dir)
        if args.offline_assets:
            _check_assets(args)
        report = _build(args, results_dir)
        if args.html:
            check_release_refs(report, results_dir)
    except Refused as exc:
        return refuse("jaxci report", exc)
    findings, guidance, data = findings_md(report), guidance_md(report), to_json(report)
    from jaxci.util.safeio import UnsafeFile

    try:
        _write(args, report, findings, guidance, data)
    except UnsafeFile as exc:  # a write refused or failed, a vendored file or page refused: one line
        return refuse("jaxci report", exc)
    except (OSError, UnicodeDecodeError) as exc:
        where = getattr(exc, "filename", None) or args.out or args.html
        return refuse("jaxci report", f"cannot write {where}: {getattr(exc, 'strerror', None) or exc}")
    for error in report.errors:
        print(f"jaxci report: warning: {error}", file=sys.stderr)
    _print(args.format, report, data)
    print(f"jaxci report: {len(report.records)} result cells from {len(report.machines)} machine(s) "
          f"in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return 0


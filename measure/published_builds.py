"""Predicted build times held against a runner's own published Execution Statistics.

    .venv/bin/python measure/published_builds.py SNAPSHOT --commit C --machine FAMILY
        [--lectures a,b,c | --jax | --all] [--kernel K] [--cell-timeout S] [--cap S] [--format md|json]
        [--work DIR] [--let-errors] [--from-audit FILE [--repredict LECTURES_DIR [--transfer-only]]]
        [--from-audit FILE --from-audit FILE ... --no-host-scale] [--save-audit FILE]

SNAPSHOT is a QuantEcon `*.notebooks` repository: a git directory (bare or a work tree's .git) or a plain folder.
The commit's `status.ipynb` holds jupyter-book's Execution Statistics table (Document | Modified | Method | Run Time
(s) | Status): one fresh-kernel run per notebook. A row is refused, with its reason, when it is not a time: a failed
run, a run time that is not a number, or one at the series' cell timeout (`--cap`: a run stopped there). The same
commit's notebooks of the chosen lectures are laid out under a scratch folder (--work, default a new folder under
the system's temporary directory; never inside this repository) and `jaxci audit DIR --execute --machine FAMILY
--format json` runs them; the table gives per lecture the published seconds, the predicted seconds on the family
(its GPU side when the family has a GPU, else its CPU side) with band, the ratio predicted / published, and the
model terms that dominate; then the summed build over the lectures that have both. The machine's load average
before and after the audit is printed: a loaded host inflates every measured time.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from jaxci.analysis.residual import within_2x  # the scoreboard's one rule
from jaxci.results import published_build
from jaxci.results.published_build import Row, table_rows  # noqa: F401  (the table's reader, re-exported here)

JAX_IMPORT = re.compile(r"^\s*(import|from)\s+(jax|numpyro)\b", re.M)


class InputError(ValueError):
    """Bad input: said in one line, exit 2."""


# ---- the published table: jaxci.results.published_build, the package's one reader --------------------------------

def parse_status(text: str, cap: float | None) -> list[Row]:
    """The Execution Statistics rows of a status.ipynb's text (jaxci.results.published_build.parse_status), its
    refusal as this script's InputError."""
    try:
        return published_build.parse_status(text, cap)
    except published_build.PublishedError as exc:
        raise InputError(str(exc)) from None


# ---- the snapshot ----------------------------------------------------------------------------------------------

def read_file(snapshot: Path, commit: str | None, name: str) -> str:
    """One file's text at the commit (git directory) or in the folder (no commit)."""
    if commit is None:
        path = snapshot / name
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        return path.read_text(encoding="utf-8")
    proc = subprocess.run(["git", f"--git-dir={git_dir(snapshot)}", "show", f"{commit}:{name}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise InputError(f"{snapshot}@{commit}: {name}: {proc.stderr.strip().splitlines()[-1:] or 'not found'}")
    return proc.stdout


def git_dir(snapshot: Path) -> Path:
    """The git directory of a snapshot: itself (bare) or its .git."""
    return snapshot / ".git" if (snapshot / ".git").exists() else snapshot


def notebooks(snapshot: Path, commit: str | None) -> list[str]:
    """The lecture names (no .ipynb) at the commit, status excluded."""
    if commit is None:
        names = [p.name for p in snapshot.glob("*.ipynb")]
    else:
        proc = subprocess.run(["git", f"--git-dir={git_dir(snapshot)}", "ls-tree", "--name-only", commit],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise InputError(f"{snapshot}: commit {commit} not found")
        names = proc.stdout.split()
    return sorted(n[:-6] for n in names if n.endswith(".ipynb") and n != "status.ipynb")


def code_of(text: str) -> str:
    """A notebook's code cells, joined ('' for text that is not a notebook)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (json.JSONDecodeError, AttributeError):
        return ""
    return "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code")


def uses_jax(text: str) -> bool:
    """A notebook whose code cells import JAX or numpyro."""
    return bool(JAX_IMPORT.search(code_of(text)))


#: a notebook cell's shell command that goes to the network on every build: an upgrade (pip -U) or a solve (conda)
BUILD_INSTALL = re.compile(r"^\s*[!%]\s*(?:pip\s+install\b.*?\s(?:-U|--upgrade)\b|(?:conda|mamba)\s+install\b).*$",
                           re.M)


def build_installs(text: str) -> list[str]:
    """The cells' shell commands that upgrade or solve packages at every build (`!pip install -U ...`, `!conda
    install ...`): network work the build pays and this host, with the packages already in the kernel, does not
    (back_prop: pip -U kaleido plotly and a conda solve before its first JAX cell)."""
    return [" ".join(m.group(0).split()) for m in BUILD_INSTALL.finditer(code_of(text))]


def lecture_texts(audit: dict, snapshot: Path, commit: str | None) -> dict:
    """Each audited lecture's notebook at the commit, read once (a saved audit's lecture that this snapshot lacks
    is left out: nothing is said of it)."""
    texts = {}
    for lec in audit.get("lectures", []):
        name = Path(lec["path"]).stem
        try:
            texts[name] = read_file(snapshot, commit, f"{name}.ipynb")
        except (InputError, OSError):
            pass
    return texts


def layout(snapshot: Path, commit: str | None, names: list[str], dest: Path, let_errors: bool = False) -> None:
    """The chosen notebooks of the commit, written under dest (the audit's lecture folder); `let_errors`: every
    code cell tagged raises-exception (see let_through)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = read_file(snapshot, commit, f"{name}.ipynb")
        (dest / f"{name}.ipynb").write_text(let_through(text) if let_errors else text, encoding="utf-8")


def let_through(text: str) -> str:
    """The notebook with every code cell tagged raises-exception, so that a cell's error does not stop the run
    (the tag Jupyter Book honours; a cell that does not raise runs as before). Why: a *.notebooks copy holds code
    cells the book never executed (an exercise's code block: stationary_densities' `loc=i*2` with `i` never
    defined), and a library release newer than the build's can fail one cell of a lecture (newton_method's NaN
    guard, bayes_nonconj's probability check) whose other cells the published run time still holds."""
    nb = json.loads(text)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            tags = cell.setdefault("metadata", {}).setdefault("tags", [])
            if "raises-exception" not in tags:
                tags.append("raises-exception")
    return json.dumps(nb, ensure_ascii=False, indent=1)


# ---- the audit and the comparison ------------------------------------------------------------------------------

def run_audit(folder: Path, family: str, kernel: str | None, cell_timeout: float, out: Path) -> dict:
    """`jaxci audit FOLDER --execute --machine FAMILY --format json`, its JSON."""
    jaxci = str(Path(sys.executable).with_name("jaxci"))
    cmd = [jaxci, "audit", str(folder), "--execute", "--machine", family, "--format", "json", "--output", str(out),
           "--no-ci", "--no-progress", "--cell-timeout", str(int(cell_timeout))]
    if kernel:
        cmd += ["--kernel", kernel]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1) or not out.is_file():
        raise InputError(f"jaxci audit failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return json.loads(out.read_text(encoding="utf-8"))


@functools.cache
def offline_module():
    """measure/offline_data.py, loaded by path once (this script runs as a file, its tests load it the same way)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("offline_data", Path(__file__).with_name("offline_data.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def offline_folder(kernel: str | None) -> Path | None:
    """The folder a measuring kernel serves the lectures' downloads from (JAXCI_OFFLINE_DATA in its kernelspec,
    written by measure/lecture_kernel.sh's DATA_DIR), or None."""
    if not kernel:
        return None
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        env = KernelSpecManager().get_kernel_spec(kernel).env or {}
    except NoSuchKernel:
        return None
    value = env.get(offline_module().ENV)
    return Path(value) if value else None


def mark_offline(audit: dict, folder: Path) -> None:
    """Each lecture whose kernel served data from local copies lists them (lec["offline_data"], kept in a saved
    audit): its measured run read those copies, not the build's download."""
    served_path = offline_module().served_path
    for lec in audit.get("lectures", []):
        pid = run_of(lec).get("kernel_pid")
        path = served_path(folder, pid) if pid is not None else None
        if path is not None and path.is_file():
            lec["offline_data"] = json.loads(path.read_text(encoding="utf-8"))


def repredict(saved: dict, folder: Path, family: str, transfer_only: bool = False) -> dict:
    """The saved audit's runs predicted again with this checkout's model (nothing executed): the static scan of
    the laid-out lectures, the runs read back from the JSON, the audit's own prediction step, with the audit's
    inputs (nearest evidence: published on the family's hardware; `transfer_only`: none of them)."""
    from jaxci import REPO_ROOT
    from jaxci.audit import repo
    from jaxci.audit.judging import every_family
    from jaxci.audit.judging import family as fam
    from jaxci.audit.runner import CellTiming, NotebookRun
    from jaxci.evidence.inputs import reference

    published = [] if transfer_only else reference()
    model = fam.from_results(REPO_ROOT / "results", family, published=published)
    families = every_family.build(REPO_ROOT / "results", published=published, judged=model)
    verdicts = {v.path: v for v in repo.audit_static(folder, model)}
    cell_fields = set(CellTiming.__dataclass_fields__)
    run_fields = set(NotebookRun.__dataclass_fields__) - {"cells"}
    for lec in saved.get("lectures", []):
        v = verdicts.get(lec["path"])
        if v is None:
            continue
        for platform, r in (lec.get("runs") or {}).items():
            cells = [CellTiming(**{k: c[k] for k in cell_fields if k in c}) for c in r.get("cells", [])]
            v.runs[platform] = NotebookRun(**{k: r[k] for k in run_fields if k in r}, cells=cells)
        # as the audit predicts every family (a code-free notebook is its kernel's start; a CPU-only family's
        # CPU side is its build time), without the per-notebook residual (jaxci.analysis.devsets scores that)
        one = every_family.predict_lecture(v, families).get(family)
        lec["predicted"] = {family: one.as_dict()} if one else {}
    return saved


def host_probe(repeat: int = 3) -> float:
    """Seconds of this project's host.PurePython int_sum at n = 10M (the incidents' pure-Python comparison) here,
    the median of `repeat`: the executed audit's own probe (jaxci.audit.runner.host_probe), at the published n."""
    from jaxci.audit.runner.host_probe import probe

    return probe(n=10_000_000, repeat=repeat).seconds


def published_host(family: str):
    """The family's pure-Python probe (seconds, source): published in the reference tables, or predicted from them
    (jaxci.analysis.host_speed); None without either."""
    from jaxci.audit.judging.host import published_probe
    from jaxci.evidence.inputs import reference

    found = published_probe(reference(), family)
    return (found.value.mid, found.source) if found else None


def scale_host(audit: dict, family: str, probe_s: float, probes: tuple = ()) -> str:
    """Each prediction's measured-here parts moved to the family's host by the published pure-Python probe over
    the same probe here; the source said ('' when the family has no published figure: nothing moved). `probes`:
    every probe taken around the run (before and after it): the factor's band spans them, since a VM's single
    thread drifts (0.55 s to 0.96 s within half an hour on 2026-12-04, the later ones quiet), and a lecture ran at
    a speed somewhere between."""
    from jaxci.analysis.prediction import of_lecture
    from jaxci.audit.judging import rescaled

    found = published_host(family)
    if not found or probe_s <= 0:
        return ""
    seen = [t for t in probes if t and t > 0] or [probe_s]
    factor, low, high = found[0] / probe_s, found[0] / max(seen), found[0] / min(seen)
    taken = ", ".join(f"{t:.3g}" for t in seen)
    source = f"published {found[0]:.3g} s on {family} ({found[1]}) / {probe_s:.3g} s here (probes {taken} s)"
    for lec in audit.get("lectures", []):
        pred = of_lecture(lec, family)
        if pred is not None:
            lec["predicted"][family] = rescaled.host_scaled(pred, factor, source, min(low, factor),
                                                            max(high, factor)).as_dict()
    return f"x {factor:.3g} (band {min(low, factor):.3g}..{max(high, factor):.3g}): {source}"


def probes_around(before: float | None, after: float) -> tuple[float, tuple]:
    """The probe the factor takes (the geometric middle of the ones taken before and after the run) and all of
    them."""
    seen = tuple(t for t in (before, after) if t and t > 0)
    return (math.prod(seen) ** (1 / len(seen)) if seen else after), seen


def annotate_published(audit: dict, rows: list[Row], family: str, source: str) -> int:
    """Put each audited lecture's published run time into its record (`published[family]`: seconds and source),
    so `jaxci report RESULTS --audit FILE` sets the predicted build beside the published one (row 6). A refused
    row (not a time) gives nothing. Returns how many lectures got one."""
    published = {r.document: r.seconds for r in rows if not r.refused and r.seconds}
    n = 0
    for lec in audit.get("lectures", []):
        seconds = published.get(Path(lec.get("path", "")).stem)
        if seconds:
            lec.setdefault("published", {})[family] = {"seconds": seconds, "source": source,
                                                       "label": "published"}
            n += 1
    return n


def joined(paths: list[Path]) -> dict:
    """The saved audits as one: the first file's fields, every file's lectures, a later file's lecture replacing an
    earlier one's of the same name (a lecture run again). A file that is not an audit JSON is an error naming it."""
    audit: dict = {}
    lectures: dict = {}
    from jaxci.audit.writing.record import AuditError, read

    for path in paths:
        try:
            one = read(path)  # checked as `jaxci report --audit` checks it: types, finite seconds, one-line text
        except AuditError as exc:
            raise InputError(f"{path}: not an audit JSON ({exc})") from None
        audit = audit or one
        lectures.update((Path(lec.get("path", "")).stem, lec) for lec in one["lectures"])
    return {**audit, "lectures": list(lectures.values())}


def snapshot_name(snapshot: Path) -> str:
    """The snapshot's repository name: its folder's, or its parent's for a git directory or a mirror's `repo`
    (fetch's layout: owner+name/repo)."""
    path = snapshot.resolve()
    return path.parent.name.split("+")[-1] if path.name in ("repo", ".git") else path.name


def has_gpu(family: str) -> bool:
    from jaxci.catalogue import load_catalogue

    machines = load_catalogue()
    if family not in machines:
        raise InputError(f"unknown family {family!r} (env_matrix/machines.toml)")
    return machines[family].has_gpu


def compare(rows: list[Row], audit: dict, family: str, gpu: bool, installs: dict | None = None) -> list[dict]:
    """One record per audited lecture: published, predicted (band), ratio, dominant terms, status; `installs`:
    per lecture its build_installs."""
    published = {r.document: r for r in rows}
    side = "gpu" if gpu else "cpu"
    out = []
    for lec in audit.get("lectures", []):
        name = Path(lec["path"]).stem
        row = published.get(name)
        pred = (lec.get("predicted") or {}).get(family)
        rec = {"lecture": name, "published_s": row.seconds if row and not row.refused else None,
               "refused": row.refused if row else "not in the published table", "status": lec.get("status"),
               "side": side, "predicted_s": None, "low_s": None, "high_s": None, "ratio": None, "dominant": "",
               "missing": [], "measured_here_s": _measured_here(lec), "raised": raised(lec),
               "offline_data": lec.get("offline_data") or [], "installs": (installs or {}).get(name, [])}
        if pred:
            rec.update(predicted_s=pred[f"{side}_s"], low_s=pred[f"{side}_low_s"], high_s=pred[f"{side}_high_s"],
                       dominant=dominant(pred["parts"][side]), missing=pred.get("missing", []),
                       parts=pred["parts"][side])
            if rec["published_s"]:
                rec["ratio"] = rec["predicted_s"] / rec["published_s"]
        out.append(rec)
    return out


def run_of(lec: dict) -> dict:
    """The lecture's measured run: its CPU run, else its only one ({} when it has none)."""
    runs = lec.get("runs") or {}
    return runs.get("cpu") or next(iter(runs.values()), None) or {}


def raised(lec: dict) -> list[str]:
    """The cells that raised and were let through (--let-errors), 'cell N: error', in the run's order."""
    return [f"cell {c['index']}: {c['expected_error'][:80]}" for c in run_of(lec).get("cells", [])
            if c.get("expected_error")]


def _measured_here(lec: dict) -> float | None:
    return run_of(lec).get("wall_s")


def dominant(parts: dict, top: int = 2) -> str:
    """The prediction's largest terms with their shares ('compile 60%, calls 25%')."""
    total = sum(parts.values())
    if total <= 0:
        return ""
    ranked = sorted(parts.items(), key=lambda kv: -kv[1])[:top]
    return ", ".join(f"{k} {v / total:.0%}" for k, v in ranked if v > 0)


def summed(records: list[dict]) -> dict:
    """The summed build over lectures with a published time and a prediction, and the within-2x count."""
    both = [r for r in records if r["ratio"] is not None]
    pub = sum(r["published_s"] for r in both)
    pred = sum(r["predicted_s"] for r in both)
    return {"lectures": len(both), "published_s": pub, "predicted_s": pred,
            "low_s": sum(r["low_s"] for r in both), "high_s": sum(r["high_s"] for r in both),
            "ratio": pred / pub if pub else None,
            "within_2x": sum(1 for r in both if within_2x(r["ratio"]))}


def summed_complete(records: list[dict]) -> dict:
    """`summed` over the lectures none of whose cells raised: with --let-errors a cell that fails here (a LaTeX
    the kernel lacks, a data file the snapshot does not hold) ends at once, so its lecture's time falls short of
    the build's for a cause that is the kernel's environment, not the model's."""
    return summed([r for r in records if not r.get("raised")])


def jax_lectures(texts: dict) -> set:
    """The lectures whose notebook at the commit (`texts`: lecture_texts) imports JAX or numpyro (the issue's goals
    are over those); a lecture whose notebook could not be read is not one."""
    return {name for name, text in texts.items() if uses_jax(text)}


def summed_jax(records: list[dict], jax: set) -> dict:
    """`summed` over the lectures that use JAX (`jax`: jax_lectures)."""
    return summed([r for r in records if r["lecture"] in jax])


def loo_jax(records: list[dict], jax: set) -> dict:
    """The leave-one-out sum (after leave_one_out) over the lectures that use JAX."""
    return _loo_summed([r for r in records if r["lecture"] in jax and r.get("loo_ratio") is not None])


def _loo_summed(scored: list[dict]) -> dict:
    """The summed build of leave-one-out predictions (`loo_predicted_s`, `loo_ratio`), as `summed` gives it."""
    pub = sum(r["published_s"] for r in scored)
    pred = sum(r["loo_predicted_s"] for r in scored)
    return {"lectures": len(scored), "published_s": pub, "predicted_s": pred, "ratio": pred / pub if pub else None,
            "within_2x": sum(1 for r in scored if within_2x(r["loo_ratio"]))}


def leave_one_out(records: list[dict], probe_s: float, form: str = "both") -> dict:
    """Each lecture with the calibration of the model's form fitted on the table's other lectures (the protocol's
    one estimator: jaxci.analysis.devsets / residual, never the lecture it predicts; a lecture whose cells raised is
    scored, never fitted on). `probe_s`: the family's pure-Python probe, the residual's unit. Records get
    `loo_predicted_s` and `loo_ratio`; the return is their sum as `summed` gives it, and what was calibrated."""
    from jaxci.analysis import devsets
    from jaxci.analysis import residual as R
    from jaxci.analysis.prediction import MODELLED

    both = [r for r in records if r["ratio"] is not None]
    lectures = devsets.scored(both, probe_s, MODELLED)
    for r, seconds in zip(both, R.leave_one_out(lectures, form)):
        r.update(loo_predicted_s=seconds, loo_ratio=seconds / r["published_s"])
    return {**_loo_summed(both), "what": f"the calibration (form {form}: jaxci.analysis.residual) fitted "
                                         "leave-one-out on the other lectures of this table"}


def render(records: list[dict], total: dict, meta: dict) -> str:
    lines = [f"# Published vs predicted: {meta['snapshot']}@{meta['commit']} on {meta['family']} "
             f"({'GPU' if meta['gpu'] else 'CPU'} side)", "",
             f"load average (1 min) before {meta['load_before']:.2f}, after {meta['load_after']:.2f} on "
             f"{os.cpu_count()} cores: measured times here are inflated under load", "",
             f"this host's measured parts moved to the family's host: {meta.get('host_scale', 'not applied')}", "",
             "| lecture | published s | predicted s | band | ratio | dominant terms | measured here s | note |",
             "|---|---|---|---|---|---|---|---|"]
    for r in records:
        band = f"{r['low_s']:.3g}..{r['high_s']:.3g}" if r["low_s"] is not None else ""
        notes = [r["refused"] or (r["status"] if r["status"] != "ok" else "")]
        if r.get("raised"):
            notes.append(f"{len(r['raised'])} cell(s) raised, let through: "
                         + ", ".join(x.split(':')[0] for x in r["raised"][:4]))
        if r.get("installs"):
            notes.append("installs at every build (network, not measured here): " + "; ".join(r["installs"]))
        if r.get("offline_data"):
            notes.append("data from local copies, not the build's download: " + ", ".join(r["offline_data"]))
        note = "; ".join(filter(None, notes))
        lines.append(f"| {r['lecture']} | {_num(r['published_s'])} | {_num(r['predicted_s'])} | {band} | "
                     f"{_num(r['ratio'], '.2f')} | {r['dominant']} | {_num(r['measured_here_s'])} | {note} |")
    lines += ["", f"summed over {total['lectures']} lectures with both: published {total['published_s']:,.1f} s, "
              f"predicted {total['predicted_s']:,.1f} s (band {total['low_s']:,.1f}..{total['high_s']:,.1f}), "
              f"ratio {_num(total['ratio'], '.2f')}; within 2x: {total['within_2x']} of {total['lectures']}"]
    jax = meta.get("summed_jax")
    if jax and jax["lectures"] < total["lectures"]:
        lines += ["", f"over the {jax['lectures']} lectures that use JAX: published {jax['published_s']:,.1f} s, "
                      f"predicted {jax['predicted_s']:,.1f} s, ratio {_num(jax['ratio'], '.2f')}; within 2x: "
                      f"{jax['within_2x']} of {jax['lectures']}"]
    whole = summed_complete(records)
    if whole["lectures"] < total["lectures"]:
        lines += ["", f"over the {whole['lectures']} lectures none of whose cells raised here: published "
                      f"{whole['published_s']:,.1f} s, predicted {whole['predicted_s']:,.1f} s, ratio "
                      f"{_num(whole['ratio'], '.2f')}; within 2x: {whole['within_2x']} of {whole['lectures']}"]
    loo = meta.get("loo")
    if loo and loo["lectures"]:
        per = ", ".join(f"{r['lecture']} {r['loo_ratio']:.2f}" for r in records if r.get("loo_ratio") is not None)
        what = loo["what"]
        lines += ["", f"with {what}: predicted {loo['predicted_s']:,.1f} s, ratio {_num(loo['ratio'], '.2f')}; "
                      f"within 2x: {loo['within_2x']} of {loo['lectures']} ({per})"]
        part = loo.get("jax")
        if part and 0 < part["lectures"] < loo["lectures"]:
            lines += ["", f"the same over the {part['lectures']} lectures that use JAX: published "
                          f"{part['published_s']:,.1f} s, predicted {part['predicted_s']:,.1f} s, ratio "
                          f"{_num(part['ratio'], '.2f')}; within 2x: {part['within_2x']} of {part['lectures']}"]
    return "\n".join(lines) + "\n"


def _num(v, fmt: str = ",.1f") -> str:
    return "not measured" if v is None else format(v, fmt)


# ---- command line ----------------------------------------------------------------------------------------------

def choose(args, snapshot: Path, commit: str | None) -> list[str]:
    names = notebooks(snapshot, commit)
    if args.lectures:
        wanted = [n.strip() for n in args.lectures.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            raise InputError(f"not in {snapshot}@{commit}: {', '.join(unknown)}")
        return wanted
    if args.jax:
        return [n for n in names if uses_jax(read_file(snapshot, commit, f"{n}.ipynb"))]
    return names


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("snapshot", type=Path, help="a *.notebooks repository: git directory or folder")
    p.add_argument("--commit", help="the commit whose status.ipynb and notebooks are read (none: the folder as is)")
    p.add_argument("--machine", required=True, help="the family that published the times (e.g. g4dn.2xlarge)")
    pick = p.add_mutually_exclusive_group()
    pick.add_argument("--lectures", help="comma-separated lecture names")
    pick.add_argument("--jax", action="store_true", help="the lectures that import JAX or numpyro")
    pick.add_argument("--all", action="store_true", help="every notebook (the default)")
    p.add_argument("--kernel", help="Jupyter kernel for the lectures (their dependencies installed there)")
    p.add_argument("--cell-timeout", type=float, default=1800, help="per-cell timeout here, seconds (default 1800)")
    p.add_argument("--cap", type=float, default=7200,
                   help="the series' cell timeout: a published time at it is refused (default 7200)")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--work", type=Path, help="scratch folder for the laid-out notebooks (default: a new temp folder)")
    p.add_argument("--transfer-only", action="store_true",
                   help="with --repredict: the model without the published measurements on the family's hardware "
                        "(default: the audit's nearest evidence, published inputs included)")
    p.add_argument("--let-errors", action="store_true",
                   help="tag every code cell raises-exception so a cell's error does not stop the run; the table's "
                        "note names each cell that raised")
    p.add_argument("--from-audit", type=Path, action="append", metavar="FILE",
                   help="an audit JSON already made: compare it, run nothing; given again, the audits are joined "
                        "(a later file's lecture replaces an earlier one's of the same name: several saved runs, "
                        "each host-scaled at its own probe, compared as one set with --no-host-scale)")
    p.add_argument("--no-host-scale", action="store_true",
                   help="leave this host's measured parts as measured (default: moved to the family's host by the "
                        "published pure-Python probe over the same probe here)")
    p.add_argument("--host-probe-s", type=float, metavar="S",
                   help="the pure-Python probe's seconds here, measured earlier (default: measured before and "
                        "after the run, the factor at their geometric middle, its band over both)")
    p.add_argument("--save-audit", type=Path, metavar="FILE",
                   help="write the audit compared (host-scaled, each lecture with its published run time) to FILE, "
                        "for `jaxci report RESULTS --audit FILE --family FAMILY` (row 6 beside the published build)")
    p.add_argument("--repredict", type=Path, metavar="FOLDER",
                   help="with --from-audit: predict its runs again with this checkout's model (FOLDER: the laid-out "
                        "lectures the audit ran)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if not args.snapshot.exists():
            raise InputError(f"{args.snapshot}: no such snapshot")
        gpu = has_gpu(args.machine)
        rows = parse_status(read_file(args.snapshot, args.commit, "status.ipynb"), args.cap)
        names = choose(args, args.snapshot, args.commit)
        load_before = os.getloadavg()[0]
        probe_before = None if (args.from_audit or args.no_host_scale or args.host_probe_s) else host_probe()
        if args.from_audit:
            if args.repredict and len(args.from_audit) > 1:
                raise InputError("--repredict takes one --from-audit (the audit whose lectures FOLDER holds)")
            audit = joined(args.from_audit)
            if args.repredict:
                audit = repredict(audit, args.repredict, args.machine, args.transfer_only)
        else:
            work = args.work or Path(tempfile.mkdtemp(prefix="published-builds-"))
            layout(args.snapshot, args.commit, names, work / "lectures", args.let_errors)
            audit = run_audit(work / "lectures", args.machine, args.kernel, args.cell_timeout, work / "audit.json")
            if not gpu:  # the audit writes no prediction for a CPU-only family: its CPU side, from the same runs
                audit = repredict(audit, work / "lectures", args.machine)
        offline = offline_folder(args.kernel)  # with --from-audit too: the served lists outlive the run
        if offline:
            mark_offline(audit, offline)
        load_after = os.getloadavg()[0]
        probe, probes = (None, ()) if args.no_host_scale else \
            ((args.host_probe_s, ()) if args.host_probe_s else probes_around(probe_before, host_probe()))
        scaled = scale_host(audit, args.machine, probe, probes) if probe else ""
    except (InputError, OSError, ValueError) as exc:  # ValueError: a malformed status page or file (one line)
        print(f"published_builds: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2
    texts = lecture_texts(audit, args.snapshot, args.commit)
    records = compare(rows, audit, args.machine, gpu, {name: build_installs(t) for name, t in texts.items()})
    total = summed(records)
    with_jax = jax_lectures(texts)
    jax = summed_jax(records, with_jax)
    found = published_host(args.machine)
    loo = leave_one_out(records, found[0]) if found else {"lectures": 0}
    loo["jax"] = loo_jax(records, with_jax)
    if args.save_audit:
        annotate_published(audit, rows, args.machine, f"{snapshot_name(args.snapshot)}@{args.commit or 'folder'} "
                                                      "status.ipynb")
        args.save_audit.write_text(json.dumps(audit, indent=1), encoding="utf-8")
    meta = {"snapshot": snapshot_name(args.snapshot), "commit": args.commit, "family": args.machine, "gpu": gpu,
            "load_before": load_before, "load_after": load_after,
            "refused": [asdict(r) for r in rows if r.refused], "label": "predicted vs published",
            "host_probe_s": probe, "host_probes_s": list(probes), "host_scale": scaled or "not applied", "loo": loo,
            "summed_jax": jax}
    if args.format == "json":
        print(json.dumps({"meta": meta, "lectures": records, "summed": total, "summed_jax": jax,
                          "summed_complete": summed_complete(records)}, indent=2))
    else:
        print(render(records, total, meta), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

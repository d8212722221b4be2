"""`jaxci import CAPTURE [--results DIR]`: merge a capture (scripts/gpu_capture.py) into results/<machine>/.

A capture is the folder the capture wrote (capture.json, summary.md, results.tar.gz, logs.tar.gz) or a
tar.gz of that folder. Everything is checked before anything is copied, so a refused import changes
nothing: asv's own schema (machine.json, each results file, benchmarks.json load through asv's API), the
machine facts (a catalogue or lab name must match its catalogue kind and GPU; a rehearsal never lands
under a catalogue or lab name), no gpu value on a machine without a GPU, and no duplicate (one machine name
must keep one kind of hardware). A second capture of the same commit and environment (a loan spent in two
calls) fills the combinations the first did not measure; a combination measured in both keeps the first
value (the import says so, with the ratio); a capture that adds nothing was imported before and is refused.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.util.git import head
from jaxci.results.records import FormatError, combinations, is_number, load_benchmarks_json, load_file, \
    load_machine_json, merge_files, save_file

CAPTURE_FORMAT = 1
HARDWARE_KEYS = ("gpu", "cpu", "num_cpu", "arch")   # what one machine name must keep across imports


class ImportRefused(ValueError):
    """The capture cannot be merged; the message says what and where."""


@dataclass
class Capture:
    root: Path                  # the unpacked capture folder
    manifest: dict
    machine: str
    machine_dir: Path           # <unpacked>/results/<machine>
    result_files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    merged: dict[str, dict] = field(default_factory=dict)   # results file name -> merged with the one there


def _safe_extract(tar_path: Path, dest: Path) -> None:
    try:
        with tarfile.open(tar_path) as tar:
            for member in tar.getmembers():
                target = (dest / member.name).resolve()
                if not str(target).startswith(str(dest.resolve())) or member.issym() or member.islnk():
                    raise ImportRefused(f"{tar_path}: unsafe member {member.name!r} (absolute, '..' or a link)")
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise ImportRefused(f"{tar_path}: not a readable tar.gz ({exc})") from None


def unpack(source: Path, scratch: Path) -> Path:
    """The capture folder: `source` itself, or `source` (a tar.gz of the folder) unpacked into scratch."""
    if source.is_dir():
        folder = source
    elif source.is_file():
        _safe_extract(source, scratch / "bundle")
        found = sorted((scratch / "bundle").rglob("capture.json"))
        if not found:
            raise ImportRefused(f"{source}: no capture.json inside (expected a tar.gz of a capture folder)")
        folder = found[0].parent
    else:
        raise ImportRefused(f"{source}: no such file or folder")
    if not (folder / "capture.json").is_file():
        raise ImportRefused(f"{folder}: no capture.json (is this the folder scripts/gpu_capture.py wrote?)")
    if not (folder / "results.tar.gz").is_file():
        raise ImportRefused(f"{folder}: no results.tar.gz: the capture measured nothing that can be imported")
    _safe_extract(folder / "results.tar.gz", scratch / "unpacked")
    shutil.copy2(folder / "capture.json", scratch / "unpacked" / "capture.json")
    if (folder / "summary.md").is_file():
        shutil.copy2(folder / "summary.md", scratch / "unpacked" / "summary.md")
    return scratch / "unpacked"


def read_capture(root: Path) -> Capture:
    try:
        manifest = json.loads((root / "capture.json").read_text())
    except (OSError, ValueError) as exc:
        raise ImportRefused(f"capture.json: not readable JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != CAPTURE_FORMAT:
        raise ImportRefused(f"capture.json: format {manifest.get('format') if isinstance(manifest, dict) else '?'!r}, "
                            f"this jaxci reads format {CAPTURE_FORMAT}")
    machine = manifest.get("machine")
    if not isinstance(machine, str) or not machine or "/" in machine or machine.startswith("."):
        raise ImportRefused(f"capture.json: machine {machine!r} is not a usable folder name")
    mdir = root / "results" / machine
    if not mdir.is_dir():
        raise ImportRefused(f"results.tar.gz: no results/{machine}/ folder for the machine capture.json names")
    others = [p.name for p in (root / "results").iterdir() if p.is_dir() and p.name != machine]
    if others:
        raise ImportRefused(f"results.tar.gz: folders of other machines ({', '.join(others)}): one capture, one machine")
    files = sorted(p for p in mdir.glob("*.json") if p.name != "machine.json")
    if not files:
        raise ImportRefused(f"results/{machine}/: no asv results file (nothing was measured)")
    return Capture(root, manifest, machine, mdir, files)


def check_schema(cap: Capture) -> dict:
    """asv loads machine.json, every results file and benchmarks.json (their api versions included)."""
    try:
        info = load_machine_json(cap.machine_dir / "machine.json")
    except FormatError as exc:
        raise ImportRefused(f"results/{cap.machine}/machine.json: {exc.reason}") from None
    if info.get("machine") != cap.machine:
        raise ImportRefused(f"results/{cap.machine}/machine.json names machine {info.get('machine')!r}")
    for path in cap.result_files:
        try:
            load_file(path, cap.machine)
        except FormatError as exc:
            raise ImportRefused(f"results/{cap.machine}/{path.name}: {exc.reason}") from None
    bench = cap.root / "results" / "benchmarks.json"
    if not bench.is_file():
        raise ImportRefused("results.tar.gz: no results/benchmarks.json (asv writes it on every run)")
    try:
        load_benchmarks_json(bench)
    except FormatError as exc:
        raise ImportRefused(f"results/benchmarks.json: {exc.reason}") from None
    return info


def check_machine(cap: Capture, info: dict, catalogue: dict) -> None:
    """The facts `jaxci machine` records are there and agree with the catalogue (lab kind included)."""
    missing = [k for k in ("jaxci_kind", "jaxci_backend", "gpu", "cpu", "num_cpu") if k not in info]
    if missing:
        raise ImportRefused(f"results/{cap.machine}/machine.json lacks {', '.join(missing)}: "
                            "register machines with `jaxci machine`")
    has_gpu = info["gpu"] not in ("no GPU", "", "unknown")
    entry = catalogue.get(cap.machine)
    rehearsal = bool(cap.manifest.get("rehearsal"))
    if entry is not None:
        if rehearsal:
            raise ImportRefused(f"a rehearsal cannot be imported as {cap.machine!r}, a catalogue "
                                f"{'lab machine' if entry.is_lab else 'runner family'}")
        expected = "lab" if entry.is_lab else "catalogue"
        if info["jaxci_kind"] != expected:
            raise ImportRefused(f"{cap.machine} is kind {expected!r} in the catalogue but machine.json says "
                                f"{info['jaxci_kind']!r}")
        if entry.has_gpu and not has_gpu:
            raise ImportRefused(f"{cap.machine} has a {entry.value('gpu_model')} in the catalogue but machine.json "
                                f"records {info['gpu']!r}")
        if entry.is_lab and entry.label.lower() not in info["gpu"].lower():
            raise ImportRefused(f"{cap.machine} is the {entry.label} lab machine but machine.json records {info['gpu']!r}")
    elif info["jaxci_kind"] != "local":
        raise ImportRefused(f"{cap.machine!r} is not in the catalogue, yet machine.json says kind "
                            f"{info['jaxci_kind']!r}: register it with --local")
    if has_gpu and not info.get("gpu_driver"):
        cap.warnings.append(f"machine.json records {info['gpu']} without a driver version")


def gpu_values(cap: Capture) -> list[str]:
    """Combinations with device 'gpu' that hold a number (not failed, not n/a)."""
    return [f"{key}({', '.join(combo)})" for path in cap.result_files
            for key, combo, value in combinations(load_file(path, cap.machine))
            if "'gpu'" in combo and is_number(value)]


def _merge(old: dict, new: dict) -> tuple[dict, int, list[str]]:
    try:
        return merge_files(old, new)
    except FormatError as exc:
        raise ImportRefused(exc.reason) from None


def check_duplicates(cap: Capture, info: dict, target: Path) -> None:
    tdir = target / cap.machine
    for path in cap.result_files:
        there = tdir / path.name
        if not there.exists():
            continue
        try:
            old = json.loads(there.read_text())
        except (OSError, ValueError) as exc:
            raise ImportRefused(f"{there}: not readable ({exc}); fix or remove it first") from None
        merged, gained, again = _merge(old, json.loads(path.read_text()))
        if not gained:
            raise ImportRefused(f"{tdir}/ already holds {path.name} with every combination this capture measured: "
                                "this capture (same machine, commit and environment) was imported before. Nothing "
                                "was copied; to replace it, remove that file first and say why in the commit")
        cap.merged[path.name] = merged
        cap.warnings.extend(again)
        cap.warnings.append(f"{there}: {gained} combination(s) added to the results of an earlier capture of the "
                            "same commit")
    old_path = tdir / "machine.json"
    if old_path.is_file():
        try:
            old = json.loads(old_path.read_text())
        except (OSError, ValueError) as exc:
            raise ImportRefused(f"{old_path}: not readable ({exc}); fix or remove it first") from None
        changed = [k for k in HARDWARE_KEYS if k in old and k in info and str(old[k]) != str(info[k])]
        if changed:
            diff = "; ".join(f"{k}: {old[k]!r} there, {info[k]!r} here" for k in changed)
            raise ImportRefused(f"{old_path} describes other hardware ({diff}): one machine name must mean one "
                                "kind of hardware")


def merge(cap: Capture, target: Path) -> list[str]:
    """Copy the checked capture; returns what was written. benchmarks.json is copied where the target has
    none, or where the capture ran the commit checked out here (its versions are what `asv run` would write);
    otherwise a mismatch of benchmark versions is warned about (asv ignores results of stale versions)."""
    tdir = target / cap.machine
    tdir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in cap.result_files:
        if path.name in cap.merged:
            save_file(tdir / path.name, cap.merged[path.name])
        else:
            shutil.copy2(path, tdir / path.name)
        written.append(str(tdir / path.name))
    if not (tdir / "machine.json").exists():
        shutil.copy2(cap.machine_dir / "machine.json", tdir / "machine.json")
        written.append(str(tdir / "machine.json"))
    src_bench, dst_bench = cap.root / "results" / "benchmarks.json", target / "benchmarks.json"
    if not dst_bench.exists():
        shutil.copy2(src_bench, dst_bench)
        written.append(str(dst_bench))
    else:
        ours, theirs = json.loads(src_bench.read_text()), json.loads(dst_bench.read_text())
        stale = [k for k, v in ours.items() if isinstance(v, dict) and (not isinstance(theirs.get(k), dict)
                 or v.get("version") != theirs[k].get("version"))]
        commit = str(cap.manifest.get("facts", {}).get("commit", ""))
        if stale and commit and commit == _checkout_head():
            shutil.copy2(src_bench, dst_bench)
            written.append(f"{dst_bench} (the capture ran this checkout's commit: its benchmark versions replace "
                           f"{len(stale)} stale one(s), e.g. {stale[0]})")
        elif stale:
            cap.warnings.append(f"{len(stale)} benchmark(s) have another version in {dst_bench} than in the "
                                f"capture (e.g. {stale[0]}): asv and the report ignore those results until "
                                "benchmarks.json is rewritten by a run of the captured commit")
    summary = cap.root / "summary.md"
    if summary.is_file():
        commit = str(cap.manifest.get("facts", {}).get("commit", "unknown"))[:8]
        name = f"capture-{commit}-{str(cap.manifest.get('started', 'unknown')).replace(':', '')}.md"
        shutil.copyfile(summary, tdir / name)   # not copy2: the fetched capture is read-only
        written.append(str(tdir / name))
    return written


def _checkout_head() -> str:
    """The commit checked out here ('' outside a git checkout)."""
    return head(REPO_ROOT) or ""


def import_capture(source: Path, target: Path, catalogue: dict | None = None) -> tuple[Capture, list[str]]:
    """Check everything, then merge. Raises ImportRefused before copying anything."""
    from jaxci.catalogue import load_catalogue

    catalogue = load_catalogue(include_lab=True) if catalogue is None else catalogue
    with tempfile.TemporaryDirectory(prefix="jaxci-import-") as scratch:
        cap = read_capture(unpack(Path(source), Path(scratch)))
        info = check_schema(cap)
        check_machine(cap, info, catalogue)
        has_gpu = info["gpu"] not in ("no GPU", "", "unknown")
        if not has_gpu:
            values = gpu_values(cap)
            if values:
                raise ImportRefused(f"{cap.machine} has no GPU (machine.json: {info['gpu']!r}) but the capture holds "
                                    f"{len(values)} gpu value(s), e.g. {values[0]}: a gpu value needs a GPU")
        check_duplicates(cap, info, target)
        written = merge(cap, target)
    return cap, written

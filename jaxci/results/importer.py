"""`jaxci import CAPTURE [--results DIR]`: merge a capture (scripts/gpu_capture.py) into results/<machine>/.

A capture is the folder the capture wrote (capture.json, summary.md, results.tar.gz, logs.tar.gz) or a
tar.gz of that folder. The import is a transaction:

1. **Everything is read and checked first**, into a scratch folder outside the target: the capture's files
   are regular files (no links, FIFOs or devices anywhere in a capture folder; in a tarball only files and
   folders, nothing outside it, exactly one capture folder) within the LIMITS below; capture.json's fields
   (machine name as `jaxci machine` allows it, a hex commit, a plain start time, a list of steps); asv's
   schema (machine.json, every results file, benchmarks.json); every value a number >= 0 (for times and
   sizes), failed or n/a, never text, a dict or an infinity; the machine facts against the catalogue (kind,
   and the GPU model of a catalogue family or lab machine); no gpu value without a GPU; no duplicate (one
   machine name keeps one kind of hardware); and the target's own files it would merge with.
2. **Then written** as one transaction (jaxci.results.transaction): a refused, failed or interrupted import
   leaves the target byte for byte as it was (a SIGKILL mid-move can leave the staging folder, which readers
   ignore: it holds no machine.json). Beside the capture's summary goes its record (jaxci.results.captures.files).

benchmarks.json is merged, never replaced: entries the target lacks are added; an entry whose version
differs is taken only when no results file in the target uses the target's version (else the import is
refused, naming the benchmark: taking it would orphan those results, keeping it would orphan the capture's).
A second capture of the same commit and environment (a loan spent in two calls) fills the combinations the
first did not measure; a combination measured in both keeps the first value (the import says so, with the
ratio); a capture that adds nothing was imported before and is refused.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import stat
import tarfile
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from jaxci.results import asvfiles, captures, transaction
from jaxci.results.asvfiles import FormatError, combinations, is_number, load_benchmarks_json, load_file
from jaxci.results.records import NON_NEGATIVE
from jaxci.results.transaction import STAGING_PREFIX, STATE
from jaxci.util import safeio
from jaxci.util.validate import InputError, machine_name, quoted

CAPTURE_FORMAT = 1
HARDWARE_KEYS = ("gpu", "cpu", "num_cpu", "arch")   # what one machine name must keep across imports
MIB = 1024 * 1024
#: the limits of what an import reads (a real capture of the whole suite is a few MiB)
LIMITS = {
    "bundle": 512 * MIB,          # a tar.gz of a capture folder, as given
    "unpacked": 512 * MIB,        # what a tarball's members add up to, declared sizes
    "members": 20_000,            # entries of one tarball
    "results.tar.gz": 256 * MIB,
    "capture.json": 1 * MIB,
    "summary.md": 4 * MIB,
    "results file": 32 * MIB,
}
_COMMIT = re.compile(r"[0-9a-f]{1,40}")
_STARTED = re.compile(r"[0-9A-Za-z:.+-]{1,40}")
_RESULT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,200}\.json")


class ImportRefused(ValueError):
    """The capture cannot be merged; the message says what and where."""


@dataclass
class UnpackedCapture:
    root: Path                  # the unpacked capture folder (scratch)
    manifest: dict
    machine: str
    machine_dir: Path           # <unpacked>/results/<machine>
    result_files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    merged: dict[str, dict] = field(default_factory=dict)   # results file name -> merged with the one there
    summary: bytes | None = None
    commit: str = "unknown"
    started: str = "unknown"
    starts: dict = field(default_factory=dict)   # facts.start_s checked (jaxci.results.captures.starts)


def _mib(n: int) -> str:
    return f"{n / MIB:,.0f} MiB"


# ------------------------------------------------------------------------------------------ reading the capture

def _check_members(tar: tarfile.TarFile, tar_path: Path) -> list[tarfile.TarInfo]:
    """Every member a plain file or folder, not absolute, within the member and size limits (a '..' out of dest
    is refused by extractall's "data" filter)."""
    members, total = [], 0
    for member in tar:
        members.append(member)
        if len(members) > LIMITS["members"]:
            raise ImportRefused(f"{tar_path}: more than {LIMITS['members']:,} members (the limit)")
        name = member.name
        if name.startswith("/"):  # the "data" filter would strip the slash and extract it inside dest
            raise ImportRefused(f"{tar_path}: unsafe member {quoted(name)} (absolute or '..')")
        if not (member.isfile() or member.isdir()):
            what = "a link" if member.issym() or member.islnk() else "a device, FIFO or other special file"
            raise ImportRefused(f"{tar_path}: member {quoted(name)} is {what}; a capture holds files and folders")
        total += member.size
        if total > LIMITS["unpacked"]:
            raise ImportRefused(f"{tar_path}: unpacks to more than {_mib(LIMITS['unpacked'])} (the limit)")
    return members


def _safe_extract(tar_path: Path, dest: Path, limit: int) -> None:
    try:
        safeio.check(tar_path, limit, links=False)
    except safeio.UnsafeFile as exc:
        raise ImportRefused(str(exc)) from None
    try:
        with tarfile.open(tar_path) as tar:
            members = _check_members(tar, tar_path)
            tar.extractall(dest, members=members, filter="data")
    except ImportRefused:
        raise
    except tarfile.FilterError as exc:  # absolute, or '..' out of dest: nothing of it was written
        raise ImportRefused(f"{tar_path}: unsafe member {quoted(exc.tarinfo.name)} (absolute or '..')") from None
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise ImportRefused(f"{tar_path}: not a readable tar.gz ({' '.join(str(exc).split()) or 'damaged'})") from None


def _check_folder(folder: Path) -> None:
    """No links, FIFOs, devices or sockets anywhere in a capture folder."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                raise ImportRefused(f"{path}: is a symbolic link (to {os.readlink(path)!r}); a capture folder "
                                    "holds no links (an import never reads outside the capture)")
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise ImportRefused(f"{path}: is not a regular file or folder (a FIFO, device or socket)")


def unpack(source: Path, scratch: Path) -> tuple[Path, bytes | None]:
    """The capture's results unpacked into scratch (with capture.json), and summary.md's bytes (or None)."""
    if source.is_symlink():
        raise ImportRefused(f"{source}: is a symbolic link; give the capture folder or tarball itself")
    if source.is_dir():
        folder = source
        _check_folder(folder)
    elif source.exists():
        _safe_extract(source, scratch / "bundle", LIMITS["bundle"])
        found = sorted((scratch / "bundle").rglob("capture.json"))
        if not found:
            raise ImportRefused(f"{source}: no capture.json inside (expected a tar.gz of a capture folder)")
        if len(found) > 1:
            where = ", ".join(str(p.parent.relative_to(scratch / "bundle")) for p in found[:3])
            raise ImportRefused(f"{source}: {len(found)} capture folders inside ({where}): one capture per tarball")
        folder = found[0].parent
    else:
        raise ImportRefused(f"{source}: no such file or folder")
    if not (folder / "capture.json").exists():
        raise ImportRefused(f"{folder}: no capture.json (is this the folder scripts/gpu_capture.py wrote?)")
    if not (folder / "results.tar.gz").exists():
        raise ImportRefused(f"{folder}: no results.tar.gz: the capture measured nothing that can be imported")
    unpacked = scratch / "unpacked"
    _safe_extract(folder / "results.tar.gz", unpacked, LIMITS["results.tar.gz"])
    if not unpacked.is_dir():  # an empty tarball: the capture's steps wrote no result
        raise ImportRefused(f"{folder}: results.tar.gz holds no results: the capture measured nothing to import")
    try:
        (unpacked / "capture.json").write_bytes(safeio.read_bytes(folder / "capture.json", LIMITS["capture.json"],
                                                                  links=False))
        summary = None
        if (folder / "summary.md").exists() or (folder / "summary.md").is_symlink():
            summary = safeio.read_bytes(folder / "summary.md", LIMITS["summary.md"], links=False)
    except safeio.UnsafeFile as exc:
        raise ImportRefused(str(exc)) from None
    _check_folder(unpacked)
    return unpacked, summary


def _manifest_field(manifest: dict, key: str, kind, default):
    value = manifest.get(key, default)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ImportRefused(f"capture.json: {key!r} is {quoted(value)}, not a {getattr(kind, '__name__', kind)}")
    return value


def read_capture(root: Path) -> UnpackedCapture:
    try:
        manifest = safeio.load_json(root / "capture.json", LIMITS["capture.json"], max_depth=16)
    except safeio.UnsafeFile as exc:
        raise ImportRefused(f"capture.json: {exc.reason}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != CAPTURE_FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else "?"
        raise ImportRefused(f"capture.json: format {found!r}, this jaxci reads format {CAPTURE_FORMAT}")
    try:
        machine = machine_name("capture.json: machine", manifest.get("machine") if isinstance(
            manifest.get("machine"), str) else repr(manifest.get("machine")))
    except InputError as exc:
        raise ImportRefused(str(exc)) from None
    facts = _manifest_field(manifest, "facts", dict, {})
    commit = facts.get("commit", "unknown")
    if commit != "unknown" and not (isinstance(commit, str) and _COMMIT.fullmatch(commit)):
        raise ImportRefused(f"capture.json: facts.commit {quoted(commit)} is not a hex commit")
    started = _manifest_field(manifest, "started", str, "unknown")
    if not _STARTED.fullmatch(started):
        raise ImportRefused(f"capture.json: started {quoted(started)} is not a time like 2026-11-30T00:00:00Z")
    steps = _manifest_field(manifest, "steps", list, [])
    if not all(isinstance(s, dict) and isinstance(s.get("step"), str) and isinstance(s.get("status", ""), str)
               for s in steps):
        raise ImportRefused("capture.json: steps must be a list of {\"step\": name, \"status\": text}")
    _manifest_field(manifest, "rehearsal", bool, False)
    start_s = captures.starts(facts.get("start_s"), "capture.json: facts.start_s", ImportRefused)
    results = root / "results"
    mdir = results / machine
    if not mdir.is_dir():
        raise ImportRefused(f"results.tar.gz: no results/{machine}/ folder for the machine capture.json names")
    entries = sorted(p.name for p in results.iterdir())
    others = [n for n in entries if n not in (machine, "benchmarks.json")]
    if others:
        raise ImportRefused(f"results.tar.gz: results/ holds {', '.join(map(repr, others[:5]))} besides "
                            f"{machine}/ and benchmarks.json: one capture, one machine")
    files = []
    for path in sorted(mdir.iterdir()):
        if path.name == "machine.json":
            continue
        if not path.is_file() or not _RESULT_NAME.fullmatch(path.name):
            raise ImportRefused(f"results/{machine}/{quoted(path.name)}: not an asv results file name "
                                "(<commit>-<environment>.json)")
        files.append(path)
    if not files:
        raise ImportRefused(f"results/{machine}/: no asv results file (nothing was measured)")
    return UnpackedCapture(root, manifest, machine, mdir, files, commit=commit, started=started, starts=start_s)


def _check_values(cap: UnpackedCapture, path: Path, res) -> None:
    where = f"results/{cap.machine}/{path.name}"
    if not (isinstance(res.commit_hash, str) and re.fullmatch(r"[0-9a-f]{7,40}", res.commit_hash)):
        raise ImportRefused(f"{where}: commit_hash {quoted(res.commit_hash)} is not a hex commit")
    if not path.name.startswith(res.commit_hash[:8]):
        raise ImportRefused(f"{where}: the file name does not start with its commit {res.commit_hash[:8]}")
    if not is_number(res.date) or not 0 <= res.date < 4e12:   # milliseconds since 1970, before 2096
        raise ImportRefused(f"{where}: date {quoted(res.date)} is not a time (milliseconds since 1970)")
    for name, seconds in (res.duration or {}).items():
        if seconds is None:  # asv writes no duration for a benchmark killed at a capture step's deadline
            continue
        if not is_number(seconds) or seconds < 0:
            raise ImportRefused(f"{where}: duration of {name} is {quoted(seconds)}, not a number of seconds >= 0")
    raw = getattr(res, "_results", {}) or {}
    for key in res.get_all_result_keys():
        params = res.get_result_params(key) or []
        row = raw.get(key)
        if row is None:  # asv's record of a benchmark that failed as a whole (e.g. killed at a step's deadline)
            continue
        if params:
            expected = math.prod(len(p) for p in params)
            if not isinstance(row, list) or len(row) != expected:
                shape = f"{len(row)} value(s)" if isinstance(row, list) else f"a {type(row).__name__}"
                raise ImportRefused(f"{where}: {key}: {shape} for {expected} param combination(s)")
        elif isinstance(row, list) and len(row) != 1:
            raise ImportRefused(f"{where}: {key}: {len(row)} values for a benchmark without params")
    for key, combo, value in combinations(res):
        label = f"{key}({', '.join(combo)})" if combo else key
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue   # failed / n/a
        if not is_number(value):
            raise ImportRefused(f"{where}: {label} = {quoted(value)}: not a number (a value is a finite number, "
                                "null for failed, NaN for n/a)")
        if value < 0 and key.rsplit(".", 1)[-1].startswith(NON_NEGATIVE):
            raise ImportRefused(f"{where}: {label} = {value!r}: a time or size is never negative")


def check_schema(cap: UnpackedCapture) -> dict:
    """asv loads machine.json, every results file and benchmarks.json; every value is of the right type."""
    try:
        info = asvfiles.load_machine_json(cap.machine_dir / "machine.json")
    except FormatError as exc:
        raise ImportRefused(f"results/{cap.machine}/machine.json: {exc.reason}") from None
    if info.get("machine") != cap.machine:
        raise ImportRefused(f"results/{cap.machine}/machine.json names machine {quoted(info.get('machine'))}")
    for path in cap.result_files:
        try:
            asvfiles.read_results_json(path)
            res = load_file(path, cap.machine)
        except FormatError as exc:
            raise ImportRefused(f"results/{cap.machine}/{path.name}: {exc.reason}") from None
        _check_values(cap, path, res)
    bench = cap.root / "results" / "benchmarks.json"
    if not bench.is_file():
        raise ImportRefused("results.tar.gz: no results/benchmarks.json (asv writes it on every run)")
    try:
        load_benchmarks_json(bench)
    except FormatError as exc:
        raise ImportRefused(f"results/benchmarks.json: {exc.reason}") from None
    return info


def _names_model(text: str, model: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(model)}(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


def check_machine(cap: UnpackedCapture, info: dict, catalogue: dict) -> None:
    """The facts `jaxci machine` records are there and agree with the catalogue (kind and GPU model)."""
    missing = [k for k in ("jaxci_kind", "jaxci_backend", "gpu", "cpu", "num_cpu") if k not in info]
    if missing:
        raise ImportRefused(f"results/{cap.machine}/machine.json lacks {', '.join(missing)}: "
                            "register machines with `jaxci machine`")
    gpu = str(info["gpu"])
    has_gpu = gpu not in ("no GPU", "", "unknown")
    entry = catalogue.get(cap.machine)
    rehearsal = bool(cap.manifest.get("rehearsal"))
    if entry is not None:
        if rehearsal:
            raise ImportRefused(f"a rehearsal cannot be imported as {cap.machine!r}, a catalogue "
                                f"{'lab machine' if entry.is_lab else 'runner family'}")
        expected = "lab" if entry.is_lab else "catalogue"
        if info["jaxci_kind"] != expected:
            raise ImportRefused(f"{cap.machine} is kind {expected!r} in the catalogue but machine.json says "
                                f"{quoted(info['jaxci_kind'])}")
        if entry.has_gpu and not has_gpu:
            raise ImportRefused(f"{cap.machine} has a {entry.value('gpu_model')} in the catalogue but machine.json "
                                f"records {gpu!r}")
        if not entry.has_gpu and has_gpu:
            raise ImportRefused(f"{cap.machine} has no GPU in the catalogue but machine.json records {gpu!r}")
        if entry.is_lab and entry.label and entry.has_gpu and entry.label.lower() not in gpu.lower():
            raise ImportRefused(f"{cap.machine} is the {entry.label} lab machine but machine.json records {gpu!r}")
        if entry.backend == "tpu" and info.get("accelerator_platform") != "tpu":
            raise ImportRefused(f"{cap.machine} is the {entry.label} lab machine but machine.json records no TPU")
        if entry.has_gpu and not _names_model(gpu, str(entry.value("gpu_model"))):
            raise ImportRefused(f"{cap.machine} has a {entry.value('gpu_model')} in the catalogue but machine.json "
                                f"records {gpu!r}: a capture lands only under the name of the hardware it ran on")
    elif info["jaxci_kind"] != "local":
        raise ImportRefused(f"{cap.machine!r} is not in the catalogue, yet machine.json says kind "
                            f"{quoted(info['jaxci_kind'])}: register it with --local")
    if has_gpu and not info.get("gpu_driver"):
        cap.warnings.append(f"machine.json records {gpu} without a driver version")


def gpu_values(cap: UnpackedCapture, device: str = "gpu") -> list[str]:
    """Combinations with device `device` ('gpu', 'tpu') that hold a number (not failed, not n/a)."""
    return [f"{key}({', '.join(combo)})" for path in cap.result_files
            for key, combo, value in combinations(load_file(path, cap.machine))
            if repr(device) in combo and is_number(value)]


# ------------------------------------------------------------------------------------------ the target

def _merge(there: Path, old: dict, new: dict) -> tuple[dict, int, list[str]]:
    try:
        return asvfiles.merge_files(old, new)
    except FormatError as exc:
        raise ImportRefused(f"{there}: {exc.reason}") from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ImportRefused(f"{there}: its rows do not have the shape of the capture's (e.g. a single value where "
                            f"the capture has a list: {type(exc).__name__}); fix or remove it first") from None


def check_target(target: Path, machine: str) -> None:
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise ImportRefused(f"--results {target}: not a folder")
    if not target.exists() and not target.parent.is_dir():
        raise ImportRefused(f"--results {target}: its folder {target.parent} does not exist")
    tdir = target / machine
    if tdir.is_symlink() or (tdir.exists() and not tdir.is_dir()):
        raise ImportRefused(f"{tdir}: not a folder")


def check_duplicates(cap: UnpackedCapture, info: dict, target: Path) -> None:
    tdir = target / cap.machine
    for path in cap.result_files:
        there = tdir / path.name
        if not (there.exists() or there.is_symlink()):
            continue
        try:
            old = asvfiles.read_results_json(there)
        except FormatError as exc:
            raise ImportRefused(f"{there}: not readable ({exc.reason}); fix or remove it first") from None
        merged, gained, again = _merge(there, old, asvfiles.read_results_json(path))
        if not gained:
            raise ImportRefused(f"{tdir}/ already holds {path.name} with every combination this capture measured: "
                                "this capture (same machine, commit and environment) was imported before. Nothing "
                                "was copied; to replace it, remove that file first and say why in the commit")
        cap.merged[path.name] = merged
        cap.warnings.extend(again)
        cap.warnings.append(f"{there}: {gained} combination(s) added to the results of an earlier capture of the "
                            "same commit")
    old_path = tdir / "machine.json"
    if old_path.exists() or old_path.is_symlink():
        try:
            old = asvfiles.load_machine_json(old_path)
        except FormatError as exc:
            raise ImportRefused(f"{old_path}: not readable ({exc.reason}); fix or remove it first") from None
        changed = [k for k in HARDWARE_KEYS if k in old and k in info and str(old[k]) != str(info[k])]
        if changed:
            diff = "; ".join(f"{k}: {old[k]!r} there, {info[k]!r} here" for k in changed)
            raise ImportRefused(f"{old_path} describes other hardware ({diff}): one machine name must mean one "
                                "kind of hardware")


def _users_of(target: Path, keys: dict) -> Counter:
    """How many results files in the target hold a result of each benchmark at the target's version."""
    used: Counter = Counter()
    for mdir in sorted(p for p in target.iterdir() if p.is_dir() and not p.name.startswith(STAGING_PREFIX)):
        for path in sorted(mdir.glob("*.json")):
            if path.name == "machine.json":
                continue
            try:
                used.update(load_file(path).get_result_keys(keys))
            except Exception:  # a FormatError, or asv's accessors on a damaged file
                continue
    return used


def merged_benchmarks(cap: UnpackedCapture, target: Path) -> dict | None:
    """The target's benchmarks.json with the capture's entries merged in (None: nothing changes)."""
    src = load_benchmarks_json(cap.root / "results" / "benchmarks.json")
    dst_path = target / "benchmarks.json"
    if not (dst_path.exists() or dst_path.is_symlink()):
        return src
    try:
        dst = load_benchmarks_json(dst_path)
    except FormatError as exc:
        raise ImportRefused(f"{dst_path}: {exc.reason}; fix or remove it first (nothing was written)") from None
    conflicts = {k: dst[k] for k, v in src.items() if k in dst and v.get("version") != dst[k].get("version")}
    used = _users_of(target, conflicts) if conflicts else {}
    if used:
        key = sorted(used)[0]
        raise ImportRefused(f"benchmark {key} has version {str(src[key].get('version'))[:12]!r} in the capture but "
                            f"{str(dst[key].get('version'))[:12]!r} in {dst_path}, which {used[key]} results file(s) "
                            f"there use ({len(used)} benchmark(s) like this): taking the capture's would orphan "
                            "those results, keeping the target's would orphan the capture's. Import a capture of "
                            "the benchmarks' current code, or move the old results away first")
    added = {k: v for k, v in src.items() if k not in dst or k in conflicts}
    if not added:
        return None
    if conflicts:
        cap.warnings.append(f"{dst_path}: {len(conflicts)} benchmark version(s) no results file there used were "
                            f"updated to the capture's (e.g. {sorted(conflicts)[0]})")
    return {**dst, **added}


# ------------------------------------------------------------------------------------------ writing

def _staged(cap: UnpackedCapture, target: Path, bench: dict | None) -> dict[str, bytes | dict]:
    """Relative path under the target -> the bytes (or results JSON) that will be there."""
    out: dict[str, bytes | dict] = {}
    for path in cap.result_files:
        rel = f"{cap.machine}/{path.name}"
        out[rel] = cap.merged[path.name] if path.name in cap.merged else path.read_bytes()
    if not (target / cap.machine / "machine.json").exists():
        out[f"{cap.machine}/machine.json"] = (cap.machine_dir / "machine.json").read_bytes()
    if bench is not None:
        out["benchmarks.json"] = (json.dumps({**bench, "version": 2}, indent=4, sort_keys=True)).encode()
    found = captures.files(cap.machine, cap.commit, cap.started, cap.starts, cap.summary)
    return out | {f"{cap.machine}/{name}": data for name, data in found.items()}


def merge(cap: UnpackedCapture, target: Path) -> list[str]:
    """Write the checked capture into the target as one transaction; returns what was written."""
    bench = merged_benchmarks(cap, target)
    files = _staged(cap, target, bench)
    created_target = not target.exists()
    try:
        target.mkdir(exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=target))
    except OSError as exc:
        raise ImportRefused(f"--results {target}: cannot write there ({exc.strerror or exc}); nothing was "
                            "written") from None
    try:
        return transaction.commit(staging, target, files)
    except OSError as exc:
        raise ImportRefused(f"{getattr(exc, 'filename', None) or target}: cannot write there "
                            f"({exc.strerror or exc}); nothing was changed") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created_target and not any(target.iterdir()):
            target.rmdir()


def import_capture(source: Path, target: Path, catalogue: dict | None = None) -> tuple[UnpackedCapture, list[str]]:
    """Check everything, then merge. Raises ImportRefused before writing anything."""
    from jaxci.catalogue import load_catalogue

    STATE["committed"] = False
    catalogue = load_catalogue(include_lab=True) if catalogue is None else catalogue
    target = Path(target)
    with tempfile.TemporaryDirectory(prefix="jaxci-import-") as scratch:
        root, summary = unpack(Path(source), Path(scratch))
        cap = read_capture(root)
        cap.summary = summary
        check_target(target, cap.machine)
        info = check_schema(cap)
        check_machine(cap, info, catalogue)
        lacks = {"gpu": str(info["gpu"]) in ("no GPU", "", "unknown"), "tpu": info.get("accelerator_platform") != "tpu"}
        for device, values in ((d, gpu_values(cap, d)) for d in lacks if lacks[d]):   # a value needs its device
            if values:
                recorded = info.get("accelerator", info["gpu"])
                raise ImportRefused(f"{cap.machine} has no {device.upper()} (machine.json: {recorded!r}) but the "
                                    f"capture holds {len(values)} {device} value(s), e.g. {values[0]}: a {device} "
                                    f"value needs a {device.upper()}")
        check_duplicates(cap, info, target)
        written = merge(cap, target)
    return cap, written

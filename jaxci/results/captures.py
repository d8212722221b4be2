"""What a GPU capture's committed record says beyond asv's results: the process starts its probes measured.

`jaxci import` commits, beside each capture's summary for a person (results/<machine>/capture-<commit>-<time>.md),
its record as data: capture-<commit>-<time>.toml (format FORMAT, version VERSION; TOML, since asv takes every
.json file in a machine's folder for a result file). The record is written from the capture's manifest
(capture.json: facts.start_s), never read back out of the summary's prose. Its one figure so far is the device
probes' process starts: a fresh interpreter that imports JAX and runs one op on each device
(jaxci.capture.prepare.probe_start).

The gpu start less the cpu start is what creating JAX's CUDA client (and the GPU's first tiny compile) costs a
fresh process: the runner model's backend start-up, once per notebook kernel. A record that cannot be read, of
another version, or a summary without its record (committed before the record existed) is an error naming the
file and the command that writes it; every other file is kept.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from jaxci.util import safeio

FORMAT = "jaxci-capture-record"
VERSION = 1
#: writes the record of every committed summary that has none (the one-off upgrade of summaries before issue 72)
UPGRADE = "jaxci import --upgrade-summaries --results RESULTS"
#: a record is a few lines; anything larger is not one
LIMIT = 64 * 1024
DEVICES = ("cpu", "gpu", "tpu")


class CaptureRecordError(ValueError):
    """A capture record that cannot be used: one line naming the file and the cause."""


@dataclass(frozen=True)
class CaptureRecord:
    """One imported capture, as data: where and when it ran, and the process starts its probes measured."""

    machine: str
    commit: str                  # the benchmarked commit (as the capture gave it: full, or 'unknown')
    started: str                 # UTC, ISO 8601
    summary: str                 # the summary for a person beside it (its file name; '' when the capture had none)
    process_start_s: dict = field(default_factory=dict)   # device -> seconds (import JAX + one op); {}: not probed

    @property
    def stem(self) -> str:
        """capture-<commit8>-<time>: the name the summary and the record share."""
        return f"capture-{self.commit[:8]}-{self.started.replace(':', '')}"


@dataclass(frozen=True)
class ProcessStart:
    """Seconds for a fresh interpreter to import JAX and run one op, per device, as one capture probed them."""

    cpu_s: float
    gpu_s: float
    source: str  # the committed summary it was measured for

    @property
    def backend_s(self) -> float:
        """The GPU start less the CPU one: creating the CUDA client (and the GPU's first tiny compile)."""
        return max(self.gpu_s - self.cpu_s, 0.0)


def starts(value, where: str, error: type[ValueError] = ValueError) -> dict:
    """A capture's probed process starts checked: a mapping of device to a positive, finite number of seconds
    (None or {}: the probes did not run); `error` naming `where` otherwise."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            d in DEVICES and isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) and s > 0
            for d, s in value.items()):
        raise error(f"{where}: process starts {str(value)[:80]!r} are not device -> positive seconds")
    return {d: float(s) for d, s in value.items()}


def text(record: CaptureRecord) -> str:
    """The record's file (TOML): written by `jaxci import`, read back by `read` into an equal record."""
    fields = {"format": FORMAT, "version": VERSION, "machine": record.machine, "commit": record.commit,
              "started": record.started, "summary": record.summary}
    lines = [f"{k} = {json.dumps(v) if isinstance(v, str) else v}" for k, v in fields.items()]
    lines += ["", "[process_start_s]"] + [f"{d} = {s!r}" for d, s in sorted(record.process_start_s.items())]
    return "\n".join(lines) + "\n"


def files(machine: str, commit: str, started: str, start_s: dict, summary: bytes | None) -> dict[str, bytes]:
    """What `jaxci import` commits of one capture in its machine's folder: the summary for a person (when the
    capture has one) and, always, its record (the data, from capture.json)."""
    stem = CaptureRecord(machine, commit, started, "").stem
    record = CaptureRecord(machine, commit, started, f"{stem}.md" if summary is not None else "", start_s)
    return ({record.summary: summary} if summary is not None else {}) | {f"{stem}.toml": text(record).encode()}


def read(path: Path) -> CaptureRecord:
    """The record at `path`; CaptureRecordError (one line) for another format or version, or a bad field."""
    try:
        doc = tomllib.loads(safeio.read_bytes(path, LIMIT, links=False).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:   # TOMLDecodeError and safeio.UnsafeFile are ValueErrors
        raise CaptureRecordError(f"{path}: capture record not read: {' '.join(str(exc).split())}") from None
    if doc.get("format") != FORMAT:
        raise CaptureRecordError(f"{path}: not a {FORMAT} file")
    if doc.get("version") != VERSION:
        raise CaptureRecordError(f"{path}: {FORMAT} version {doc.get('version')!r}, this jaxci reads {VERSION}: "
                                 f"import the capture again (jaxci import CAPTURE)")
    texts = {k: doc.get(k) for k in ("machine", "commit", "started", "summary")}
    bad = [k for k, v in texts.items() if not isinstance(v, str) or not v.isprintable()]
    if bad:
        raise CaptureRecordError(f"{path}: field {bad[0]!r} is not one printable line")
    try:
        return CaptureRecord(**{k: str(v) for k, v in texts.items()}, process_start_s=starts(doc.get("process_start_s", {}), str(path)))
    except ValueError as exc:
        raise CaptureRecordError(str(exc)) from None


def process_starts(machine_dir: Path, errors: list[str]) -> tuple[ProcessStart, ...]:
    """Every capture record's probed process starts on both devices in `machine_dir` (a capture without a GPU
    start, e.g. a rehearsal, gives none); a record that cannot be read, or a summary without its record, is an
    error naming its file."""
    out = []
    folder = Path(machine_dir)
    for summary in sorted(folder.glob("capture-*.md")):
        if not summary.with_suffix(".toml").exists():
            errors.append(f"{summary}: capture summary without its record ({summary.with_suffix('.toml').name}): "
                          f"write it with `{UPGRADE}`")
    for path in sorted(folder.glob("capture-*.toml")):
        try:
            record = read(path)
        except CaptureRecordError as exc:
            errors.append(str(exc))
            continue
        # the accelerator's start: a GPU's, else a TPU's (a machine has one kind; the model's accelerator side)
        cpu = record.process_start_s.get("cpu")
        gpu = record.process_start_s.get("gpu", record.process_start_s.get("tpu"))
        if cpu is not None and gpu is not None:   # one device only (a rehearsal, no GPU start): no difference
            out.append(ProcessStart(cpu, gpu, record.summary or path.name))
    return tuple(out)

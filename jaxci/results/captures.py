"""What a GPU capture's committed summary says beyond asv's results: the process starts its probes measured.

`jaxci import` commits each capture's summary as results/<machine>/capture-<commit>-<time>.md
(jaxci.capture.pack.summary writes it). One of its lines is the device probes' process starts: a fresh
interpreter that imports JAX and runs one op on each device (jaxci.capture.prepare.probe_start), e.g.

    - process start (import JAX + one op): {'cpu': 1.31, 'gpu': 3.54}

The gpu start less the cpu start is what creating JAX's CUDA client (and the GPU's first tiny compile) costs a
fresh process: the runner model's backend start-up, once per notebook kernel. A line that cannot be read is an
error naming the file; every other file is kept.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from jaxci.util import safeio

START_LINE = re.compile(r"^- process start \(import JAX \+ one op\): (.*)$", re.M)
#: a capture summary is a few pages; anything larger is not one
SUMMARY_LIMIT = 4 * 1024 * 1024
_UNREADABLE = object()  # a line that is not a Python literal (never evaluated)


@dataclass(frozen=True)
class ProcessStart:
    """Seconds for a fresh interpreter to import JAX and run one op, per device, as one capture probed them."""

    cpu_s: float
    gpu_s: float
    source: str  # the committed summary it was read from

    @property
    def backend_s(self) -> float:
        """The GPU start less the CPU one: creating the CUDA client (and the GPU's first tiny compile)."""
        return max(self.gpu_s - self.cpu_s, 0.0)


def process_starts(machine_dir: Path, errors: list[str]) -> tuple[ProcessStart, ...]:
    """Every capture summary's probed process starts on both devices in `machine_dir` (a capture without a GPU
    start, e.g. a rehearsal, gives none); an unreadable line is an error naming its file."""
    out = []
    for path in sorted(Path(machine_dir).glob("capture-*.md")):
        try:
            text = safeio.read_bytes(path, SUMMARY_LIMIT, links=False).decode("utf-8")
        except (OSError, ValueError) as exc:
            errors.append(f"{path}: capture summary not read: {exc}")
            continue
        found = START_LINE.search(text)
        if not found:
            continue
        start = _start(found.group(1), path, errors)
        if start is not None:
            out.append(start)
    return tuple(out)


def _start(text: str, path: Path, errors: list[str]) -> ProcessStart | None:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = _UNREADABLE
    if value is None or value == {}:
        return None  # the probes did not run (or started nothing): no figure, and nothing wrong
    if not isinstance(value, dict) or not all(isinstance(value.get(d), (int, float)) for d in value):
        errors.append(f"{path}: process start line unreadable: {text.strip()[:80]!r}")
        return None
    cpu, gpu = value.get("cpu"), value.get("gpu")
    if cpu is None or gpu is None:
        return None  # one device only (a rehearsal or a GPU that did not start): no difference to take
    if cpu <= 0 or gpu <= 0:
        errors.append(f"{path}: process start line has a non-positive time: {text.strip()[:80]!r}")
        return None
    return ProcessStart(float(cpu), float(gpu), path.name)

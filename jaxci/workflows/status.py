"""The run status of one family's bench job: which suite is running and how each one ended.

scripts/run-suites.sh records each suite's start and end (`jaxci inputs status FILE start|end`) and an
always() step closes the file (`finish`), so it says which suite a cancel or a timeout cut off. The file is
uploaded with the family's results and read back by the collect job (jaxci.workflows.collect). This module is the
one place that reads and writes it (`load`, `save`): a RunStatus of typed SuiteOutcomes in memory, on disk
{"family", "spot", "suites": {suite: text}, "running", "finished"[, "interrupted"]}, each outcome as its
one-line text, e.g. "ok" or "failed: asv exit 1".
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from jaxci.util import safeio
from jaxci.util.validate import InputError, machine_name, one_line, quoted
from jaxci.workflows.suites import is_suite_name


class SuiteState(Enum):
    """How one suite's `asv run` stands; the value is its text in the status file (FAILED adds the exit)."""

    RUNNING = "running"
    OK = "ok"  # asv exit 0
    PARTIAL = "completed; some benchmarks failed or timed out (results saved)"  # asv exit 2
    NOT_SELECTED = "not selected by the filter"  # asv exit 1 with "No benchmarks selected"
    FAILED = "failed: asv exit"  # any other exit: the job fails (the other suites still run)
    INTERRUPTED = "interrupted (job cancelled or timed out during this suite)"


_ASV_EXIT = {0: SuiteState.OK, 2: SuiteState.PARTIAL}
_FAILED = re.compile(re.escape(SuiteState.FAILED.value) + r" (-?[0-9]{1,6})")


@dataclass(frozen=True)
class SuiteOutcome:
    state: SuiteState
    asv_exit: int | None = None  # FAILED only

    @classmethod
    def of_asv(cls, exit_code: int, log: str = "") -> SuiteOutcome:
        """The outcome of an asv run that exited with `exit_code` and wrote `log`."""
        if exit_code == 1 and "No benchmarks selected" in log:
            return cls(SuiteState.NOT_SELECTED)
        state = _ASV_EXIT.get(exit_code)
        return cls(state) if state else cls(SuiteState.FAILED, exit_code)

    @classmethod
    def parse(cls, text: str) -> SuiteOutcome | None:
        """The outcome a status file's text stands for; None for text no status writer produces."""
        failed = _FAILED.fullmatch(text)
        if failed:
            return cls(SuiteState.FAILED, int(failed.group(1)))
        state = next((s for s in SuiteState if s.value == text and s is not SuiteState.FAILED), None)
        return cls(state) if state else None

    @property
    def failed(self) -> bool:
        return self.state is SuiteState.FAILED

    def __str__(self) -> str:
        return f"{self.state.value} {self.asv_exit}" if self.failed else self.state.value


@dataclass
class RunStatus:
    family: str
    spot: bool = False
    suites: dict[str, SuiteOutcome] = field(default_factory=dict)
    running: str | None = None
    finished: bool = False
    interrupted: str | None = None  # the suite a cancel or a timeout cut off (set by finish)

    def start(self, suite: str) -> None:
        self.running = suite
        self.suites[suite] = SuiteOutcome(SuiteState.RUNNING)

    def end(self, suite: str, outcome: SuiteOutcome) -> None:
        self.suites[suite] = outcome
        self.running = None

    def finish(self) -> None:
        """A suite still marked running was cut off (the job was cancelled or timed out)."""
        if self.running:
            self.suites[self.running] = SuiteOutcome(SuiteState.INTERRUPTED)
            self.interrupted = self.running
            self.running = None
        self.finished = True

    def to_json(self) -> dict:
        data = {"family": self.family, "spot": self.spot, "suites": {s: str(o) for s, o in self.suites.items()},
                "running": self.running, "finished": self.finished}
        if self.interrupted:
            data["interrupted"] = self.interrupted
        return data

    @classmethod
    def from_json(cls, data: object) -> RunStatus:
        """The status `data` holds, checked: a cancelled job or a hand edit can leave what no writer wrote.
        Raises ValueError saying what is wrong."""
        if not (isinstance(data, dict) and isinstance(data.get("family"), str)
                and isinstance(data.get("suites"), dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in data["suites"].items())
                and all(data.get(k) is None or isinstance(data[k], str) for k in ("running", "interrupted"))
                and all(isinstance(data.get(k, False), bool) for k in ("spot", "finished"))):
            raise ValueError("not a run status (family, suites, running)")
        try:   # it heads the job summary: a machine name, as `jaxci machine` takes it
            machine_name("family", data["family"])
        except InputError as exc:
            raise ValueError(str(exc)) from None
        for key in ("running", "interrupted"):  # a suite's name or nothing: it is written into the job summary
            if data.get(key) is not None and not is_suite_name(data[key]):
                raise ValueError(f"{key} {quoted(data[key], 40)} is not a suite name (a plain lower-case identifier)")
        suites = {}
        for suite, text in data["suites"].items():
            if not is_suite_name(suite):
                raise ValueError(f"{quoted(suite, 40)} is not a suite name (a plain lower-case identifier)")
            outcome = SuiteOutcome.parse(text)
            if outcome is None:
                raise ValueError(f"suite {suite}: {quoted(text, 80)} is not an outcome a status writer records")
            suites[suite] = outcome
        return cls(data["family"], data.get("spot", False), suites, data.get("running"),
                   data.get("finished", False), data.get("interrupted"))

    def markdown(self) -> str:
        """The job summary's table of this family's suites."""
        lines = [f"### {self.family} ({'spot' if self.spot else 'on-demand'})", "",
                 "| suite | outcome |", "|---|---|"]
        lines += [f"| {s} | {o} |" for s, o in self.suites.items()] or ["| (none) | no suite started |"]
        return "\n".join(lines) + "\n"


#: a status file lists a few suites: a few KiB
STATUS_LIMIT = 1024 * 1024


def load(path: Path) -> RunStatus:
    """The status file at `path`; InputError (naming the file) if it is missing or not a run status."""
    if not (path.exists() or path.is_symlink()):
        raise InputError(f"status file {path}: not found (run `jaxci inputs status {path} init` first)")
    try:  # a regular file of at most 1 MiB, nested at most 16 deep: a FIFO or /dev/zero cannot hang a job
        data = safeio.load_json(path, STATUS_LIMIT, max_depth=16)
    except safeio.UnsafeFile as exc:
        raise InputError(f"status file {path}: unreadable: {one_line(exc.reason, 120)}") from None
    try:
        return RunStatus.from_json(data)
    except ValueError as exc:
        raise InputError(f"status file {path}: {exc}") from None


def save(path: Path, status: RunStatus) -> None:
    """Written to a temporary file and renamed over the old one: a job cancelled mid-write leaves the
    previous status, never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(status.to_json(), indent=1))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def init(path: Path, family: str, spot: bool) -> RunStatus:
    """A fresh status for `family`'s job (written before the install, so a failed setup still says so)."""
    status = RunStatus(family, spot)
    save(path, status)
    return status


def _update(path: Path, change) -> RunStatus:
    status = load(path)
    change(status)
    save(path, status)
    return status


def start(path: Path, suite: str) -> RunStatus:
    return _update(path, lambda status: status.start(suite))


def end(path: Path, suite: str, exit_code: int, log: str = "") -> RunStatus:
    return _update(path, lambda status: status.end(suite, SuiteOutcome.of_asv(exit_code, log)))


def finish(path: Path) -> RunStatus:
    """Runs in an always() step: a suite still marked running was cut off (cancelled or timed out)."""
    return _update(path, RunStatus.finish)

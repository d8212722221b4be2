"""The one process-tree killer: find every process below a pid and SIGKILL them, from /proc.

Used by the concurrency harness (a worker and what it started), the notebook runner (a kernel, its session
and the orphans its cells left: `children`, `session`, `orphan_since`), the release history (asv's tree) and the
GPU capture (asv and its benchmark servers): nothing else in jaxci reads /proc for processes. A process is named by
its pid and its start time, so a snapshot taken while the tree was alive never kills a stranger that
reused a pid. Linux only (/proc); elsewhere the snapshot is the pid alone.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple


class Proc(NamedTuple):
    pid: int
    started: int | None  # clock ticks since boot (/proc/PID/stat field 22); None where unreadable


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, state) of `pid`, or None if it is gone or unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    try:
        return int(fields[1]), int(fields[19]), fields[0]
    except (IndexError, ValueError):
        return None


def _fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None if gone or unreadable."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None


def _every() -> list[tuple[int, list[str]]]:
    out = []
    for entry in Path("/proc").glob("[0-9]*"):
        fields = _fields(int(entry.name))
        if fields and len(fields) > 19:
            out.append((int(entry.name), fields))
    return out


def children(pid: int) -> set[int]:
    """The direct children of `pid` now (a subreaper's adopted orphans included)."""
    return {p for p, fields in _every() if fields[1] == str(pid)}


def session(sid: int) -> list[int]:
    """Every process of session `sid` but this one: what a kernel started in its own session."""
    return [p for p, fields in _every() if fields[3] == str(sid) and p != os.getpid()]


def orphan_since(pid: int, born: int) -> bool:
    """`pid` is outside this process's session and started at or after `born` (clock ticks since boot): an orphan
    a lecture left, adopted by us as subreaper, not one of ours."""
    fields = _fields(pid)
    return bool(fields and len(fields) > 19 and fields[3] != str(os.getsid(0)) and int(fields[19]) >= born)


def _parents() -> dict[int, int]:
    parents = {}
    for entry in Path("/proc").glob("[0-9]*"):
        stat = _stat(int(entry.name))
        if stat is not None:
            parents[int(entry.name)] = stat[0]
    return parents


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children first, then theirs). [] where /proc is unreadable."""
    parents = _parents()
    found, frontier = [], {pid}
    while frontier:
        kids = [p for p, parent in parents.items() if parent in frontier and p not in found]
        found += kids
        frontier = set(kids)
    return found


def snapshot(pid: int | None) -> list[Proc]:
    """`pid` and everything below it now, each with its start time: what to kill later, even after the
    tree's root has exited and its children were reparented."""
    if pid is None:
        return []
    procs = []
    for p in [pid, *descendants(pid)]:
        stat = _stat(p)
        procs.append(Proc(p, stat[1] if stat else None))
    return procs


def merge(old: Iterable[Proc], new: Iterable[Proc]) -> list[Proc]:
    """Two snapshots as one, in order, each process once."""
    seen, out = set(), []
    for proc in [*old, *new]:
        if proc not in seen:
            seen.add(proc)
            out.append(proc)
    return out


def _alive(proc: Proc) -> bool:
    stat = _stat(proc.pid)
    return stat is not None and stat[2] != "Z" and (proc.started is None or stat[1] == proc.started)


def kill_group(pgid: int) -> None:
    """SIGKILL a process group; one that is gone already, or not ours, is left alone."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER), so the orphans of what it
    starts are reparented here, where they can be found and killed, not to init. False where it cannot."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except Exception:
        return False


def kill_tree(root: int | Iterable[Proc], *, reap: bool = True) -> list[int]:
    """SIGKILL a tree: a pid (its process group, and while it runs itself and everything below it) or a
    snapshot (the processes in it that still run). Returns the pids that were alive and were sent the signal;
    with `reap`, waits for them and reaps our own children among them so none is left a zombie (the harness
    reaps its workers itself, for their rusage)."""
    if isinstance(root, int):
        stat = _stat(root)
        procs = [p for p in snapshot(root) if _alive(p)] if stat is not None and stat[2] != "Z" else []
        kill_group(root)  # a group leader's group: its members that were reparented too
    else:
        procs = [p for p in root if _alive(p)]
    killed = []
    for proc in procs:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # gone meanwhile (the group's signal may have reached it first)
            pass
        except PermissionError:
            continue
        killed.append(proc.pid)
    deadline = time.monotonic() + 10
    for pid in killed if reap else []:
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except (ChildProcessError, OSError):  # not our child: wait until it is gone from /proc
                done = pid if _stat(pid) is None or _stat(pid)[2] == "Z" else 0
            if done or time.monotonic() > deadline:
                break
            time.sleep(0.01)
    return killed

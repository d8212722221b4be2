"""The one process-tree killer: find every process below a pid and SIGKILL them, through psutil; nothing else in
jaxci looks processes up. A process is named by its pid and its start time, so a snapshot taken while the tree
was alive never kills a stranger that reused a pid.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from typing import NamedTuple

import psutil


class Proc(NamedTuple):
    pid: int
    started: float | None  # psutil's create_time (seconds since the epoch); None where unreadable


def _ask(pid: int, question, default):
    """question(psutil.Process(pid)), or `default` where the process is gone or cannot be read."""
    try:
        return question(psutil.Process(pid))
    except (psutil.Error, ValueError):
        return default


def _started(pid: int) -> float | None:
    return _ask(pid, psutil.Process.create_time, None)


def children(pid: int) -> set[int]:
    """The direct children of `pid` now (a subreaper's adopted orphans included)."""
    return _ask(pid, lambda p: {c.pid for c in p.children()}, set())


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def session(sid: int) -> list[int]:
    """Every process of session `sid` but this one: what a kernel started in its own session."""
    return [p for p in psutil.pids() if p != os.getpid() and _sid(p) == sid]


def orphan_since(pid: int, born: float) -> bool:
    """`pid` is outside this process's session and started at or after `born` (a create_time): an orphan a lecture
    left, adopted by us as subreaper, not one of ours."""
    sid, started = _sid(pid), _started(pid)
    return sid is not None and started is not None and sid != os.getsid(0) and started >= born


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children first, then theirs). [] where it is gone."""
    return _ask(pid, lambda p: [c.pid for c in p.children(recursive=True)], [])


def snapshot(pid: int | None) -> list[Proc]:
    """`pid` and everything below it now, each with its start time: what to kill later, even after the
    tree's root has exited and its children were reparented."""
    if pid is None:
        return []
    return [Proc(p, _started(p)) for p in [pid, *descendants(pid)]]


def merge(old: Iterable[Proc], new: Iterable[Proc]) -> list[Proc]:
    """Two snapshots as one, in order, each process once."""
    return list(dict.fromkeys([*old, *new]))


def _alive(proc: Proc) -> bool:
    return _ask(proc.pid, lambda p: p.status() != psutil.STATUS_ZOMBIE and proc.started in (None, p.create_time()),
                False)


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
        procs = [p for p in snapshot(root) if _alive(p)] if _alive(Proc(root, None)) else []
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
            except (ChildProcessError, OSError):  # not our child: wait until it is gone or a zombie
                done = pid if not _alive(Proc(pid, None)) else 0
            if done or time.monotonic() > deadline:
                break
            time.sleep(0.01)
    return killed

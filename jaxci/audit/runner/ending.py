"""Ending a lecture's processes: every kernel started ends with its lecture, and a signal ends the running one.

jupyter_client starts each kernel in its own session and process group (start_new_session). At the end of
a lecture, or when the audit is interrupted, everything is killed through jaxci.util.proc: the kernel's process
tree as last seen, every process still in its session (a daemon that double-forked without setsid), and
every orphan this process adopted meanwhile as a child subreaper (a daemon that also called setsid).
"""

from __future__ import annotations

import asyncio
import contextlib
import os

from jaxci.util import proc as proc_tree

_LIVE: dict[int, list] = {}   # kernel pid -> snapshot of its tree, while a lecture runs


_ADOPTED: set[int] = set()    # our children before the kernels started (never killed here)


_SUBREAPER = {"set": False}


def _adopt_orphans() -> None:
    """Become a child subreaper (Linux), so a kernel's orphaned descendants are reparented here, not to init."""
    if _SUBREAPER["set"]:
        return
    _SUBREAPER["set"] = True
    proc_tree.become_subreaper()
    _ADOPTED.update(proc_tree.children(os.getpid()))


def end_kernel(kernel_pid: int | None, procs: list) -> list[int]:
    """Kill the kernel's tree, its session and the orphans it left with us; the pids that were still alive."""
    if kernel_pid is not None:
        for pid in proc_tree.session(kernel_pid):
            procs = proc_tree.merge(procs, proc_tree.snapshot(pid))
    born = next((p.started for p in procs if p.pid == kernel_pid), None)
    for pid in proc_tree.children(os.getpid()) - _ADOPTED:
        if pid != kernel_pid and not any(p.pid == pid for p in procs) and born is not None \
                and proc_tree.orphan_since(pid, born):
            procs = proc_tree.merge(procs, proc_tree.snapshot(pid))
    killed = proc_tree.kill_tree(procs)
    if kernel_pid is not None:
        proc_tree.kill_group(kernel_pid)
    return killed


def end_kernels() -> list[int]:
    """End every kernel still registered (the audit was interrupted mid-lecture)."""
    killed = []
    for pid, procs in list(_LIVE.items()):
        killed += end_kernel(pid, procs)
        _LIVE.pop(pid, None)
    return killed


def _signal_handlers() -> dict:
    import signal

    return {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(handlers: dict) -> None:
    """Put back the handlers that were there before nbclient added its event-loop ones (a command's
    "interrupted" handler, or Python's defaults), so a signal ends the lecture through request_stop."""
    import signal

    if threading_main():
        loop = asyncio.get_running_loop()
        for signum, handler in handlers.items():
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


class LectureStopped(Exception):
    """A stop was requested (request_stop) while a lecture ran: its kernel and processes were ended."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


#: set by request_stop(); "running" while run_notebook has a kernel up
STOP: dict = {"signum": None, "running": False}


def request_stop(signum: int) -> bool:
    """For a signal handler: end the running lecture's processes now and make run_notebook raise LectureStopped
    once its event loop is done (raising inside the loop leaves nbclient's clean-up half done). False when no
    lecture is running (the caller raises itself)."""
    if not STOP["running"]:
        return False
    STOP["signum"] = signum
    end_kernels()
    return True

"""SIGINT and SIGTERM held off around a step that must not be cut in two (a ref update, an import's commit)."""

from __future__ import annotations

import contextlib
import signal


@contextlib.contextmanager
def held():
    """SIGINT and SIGTERM held off (delivered on exit) in this process and in the children it starts meanwhile.

    Two holds: the signal mask (inherited by children, such as git's update-ref), and a handler that only
    records the signal, because a process-directed signal may be delivered to another thread of this
    process whose mask does not block it (a library's thread), and Python then runs its handler anyway."""
    held = (signal.SIGINT, signal.SIGTERM)
    received = []
    try:
        handlers = {s: signal.signal(s, lambda signum, _frame: received.append(signum)) for s in held}
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(held))
    except (ValueError, OSError):  # not the main thread / no signal masks: nothing to hold
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a signal pending in the mask arrives here, recorded
        for s, handler in handlers.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(received):
            signal.raise_signal(s)  # now through the handler that was there before

"""`jaxci COMMAND ...`: a thin dispatcher; each command is a module with `main(argv) -> int`.

Commands are imported only when run, so `jaxci env` in a lecture repository's CI never imports JAX or asv.
"""

from __future__ import annotations

import importlib
import os
import sys

#: the exit status after Ctrl-C (SIGINT) in a command without its own handling: 128 + SIGINT, as a shell reports
INTERRUPTED = 130
#: the exit status when the reader of stdout went away (`jaxci predict ... | head -1`): 128 + SIGPIPE, what a
#: shell tool killed by the closed pipe returns, so `set -o pipefail` still sees the output was cut short
BROKEN_PIPE = 141

COMMANDS = {
    "machine": ("jaxci.commands.machine", "register this machine with asv under a catalogue name"),
    "import": ("jaxci.commands.import_capture", "merge a GPU capture (scripts/gpu_capture.py) into results/<machine>/"),
    "report": ("jaxci.commands.report", "findings, guidance and the findings page from asv results"),
    "env": ("jaxci.commands.env", "recommended JAX/XLA environment for N kernels on one device"),
    "audit": ("jaxci.commands.audit", "which lectures belong on CPU (static, --execute; `audit merge` joins shards)"),
    "profile": ("jaxci.commands.profile", "device-busy time and launch gaps of the pathological kernels"),
    "inputs": ("jaxci.commands.inputs", "validate workflow_dispatch inputs before a label or command is built"),
    "upgrade-check": ("jaxci.commands.upgrade_check", "asv continuous between two JAX pins, locally"),
    "history": ("jaxci.commands.history", "backfill the asv history over JAX releases on this machine"),
    "predict": ("jaxci.commands.predict", "one case through the runner model: predicted seconds, band, inputs"),
    "accel-score": ("jaxci.commands.accel_score", "score the runner model where lectures ran on both sides"),
    "host-kinds": ("jaxci.commands.host_kinds", "per family: each kind of host work's speed over a reference, sourced"),
    "runner-decision": ("jaxci.commands.runner_decision", "stay, move, split or shard: each audited repository"),
    "published-score": ("jaxci.commands.published_score", "score the runner model against every published figure"),
    "crossover-stability": ("jaxci.commands.crossover_stability",
                            "how far the predicted crossovers move when the CPU machines change"),
    "devsets": ("jaxci.commands.devsets", "score the runner model on its two development sets; write its calibration"),
    "capture": ("jaxci.commands.capture", "run the GPU capture on a lent machine (what scripts/gpu_capture.py runs)"),
    "failures": ("jaxci.commands.failures", "fail once: record failures, skip them until they change"),
    "sharded": ("jaxci.commands.sharded", "a sharded book build: keep a shard to its pages, merge the caches"),
    "release-watch": ("jaxci.commands.release_watch", "new JAX releases: measure, compare, confirm, file an issue"),
}


def usage() -> str:
    lines = ["usage: jaxci COMMAND [options]", "", "commands:"]
    lines += [f"  {name:10s} {text}" for name, (_, text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        try:
            return _dispatch(sys.argv[1:] if argv is None else argv)
        finally:  # also after argparse's SystemExit: a closed pipe is often found only when the buffer is flushed
            sys.stdout.flush()
    except BrokenPipeError:
        return _pipe_closed()
    except KeyboardInterrupt:
        return _interrupted(argv if argv is not None else sys.argv[1:])


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"jaxci: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    return importlib.import_module(COMMANDS[name][0]).main(rest)


def _pipe_closed() -> int:
    """The reader of stdout is gone: no traceback, and stdout pointed at /dev/null so the interpreter's own flush
    at exit does not fail again (the recipe of Python's signal documentation), for every command at once."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return BROKEN_PIPE


def _interrupted(argv: list[str]) -> int:
    """Ctrl-C in any command: one line, exit 130, for every command at once (no KeyboardInterrupt traceback).
    Every file is written atomically (jaxci.util.safewrite), so an interrupted write leaves the old file or none."""
    name = argv[0] if argv and argv[0] in COMMANDS else ""
    print(f"jaxci{' ' + name if name else ''}: interrupted (Ctrl-C): stopped; a file being written is left as it "
          "was", file=sys.stderr)
    return INTERRUPTED

"""Kernel start where the machine refuses inet sockets (issue 71: the TPU machine has no network stack at all).

Even over ipc transport, ipykernel's start binds one TCP socket: the IOPub pipe that relays output of forked
subprocesses (`IOPubThread._setup_pipe_in`, `tcp://127.0.0.1:*`). zmq resolves that address by listing the
machine's interfaces first (getifaddrs), and where that is refused it does not raise: `errno_assert` prints
`Address family not supported by protocol (src/ip_resolver.cpp:542)` and aborts the kernel before kernel_info.
ipykernel already starts without the pipe when the bind raises; the audit's kernels start through LAUNCHER, which
is ipykernel_launcher plus that same choice made up front where the interface list is refused. Everywhere else
the kernel starts exactly as `python -m ipykernel_launcher` would. A kernelspec that does not start
ipykernel_launcher cannot be helped: there the start fails with one line saying why (KernelStartRefused).
"""

from __future__ import annotations

#: `python -m ipykernel_launcher`, with the IOPub pipe off where getifaddrs is refused. Run with -c: it keeps
#: every name inside a function, so nothing lands in the kernel's namespace.
LAUNCHER = """
def _jaxci_start():
    import ctypes
    import os
    import sys
    from pathlib import Path

    if sys.path[0] == "" or Path(sys.path[0]) == Path.cwd():
        del sys.path[0]   # as ipykernel_launcher does; InteractiveShellApp.init_path adds it back
    libc = ctypes.CDLL(None, use_errno=True)
    found = ctypes.c_void_p()
    if libc.getifaddrs(ctypes.byref(found)) == 0:
        libc.freeifaddrs(found)
    else:
        why = os.strerror(ctypes.get_errno())
        from ipykernel import iostream

        def no_pipe(self):
            self._pipe_flag = False   # what ipykernel does when the pipe's bind fails

        iostream.IOPubThread._setup_pipe_in = no_pipe
        print(f"jaxci: the interface list is refused here (getifaddrs: {why}): the kernel starts without "
              "ipykernel's TCP IOPub pipe (output of forked subprocesses is not relayed)", file=sys.stderr)
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


_jaxci_start()
"""


class KernelStartRefused(RuntimeError):
    """The kernel cannot start on this machine, said in one line."""


def interfaces_refused() -> str | None:
    """Why this machine refuses the interface list that zmq's TCP bind reads (os.strerror), or None."""
    import ctypes
    import os

    libc = ctypes.CDLL(None, use_errno=True)
    found = ctypes.c_void_p()
    if libc.getifaddrs(ctypes.byref(found)) == 0:
        libc.freeifaddrs(found)
        return None
    return os.strerror(ctypes.get_errno())


def with_launcher(cmd: list[str]) -> list[str] | None:
    """The kernel command with `-m ipykernel_launcher` replaced by `-c LAUNCHER`, or None where it has no such
    pair (another kernel, or ipykernel started another way)."""
    for i in range(len(cmd) - 1):
        if cmd[i] == "-m" and cmd[i + 1] == "ipykernel_launcher":
            return [*cmd[:i], "-c", LAUNCHER, *cmd[i + 2:]]
    return None


def refusal(cmd: list[str], why: str) -> str:
    """The one line a kernel start gets where the interface list is refused and the command cannot be helped."""
    shown = " ".join(cmd[:3])[:120]
    return (f"this machine refuses the interface list (getifaddrs: {why}), which zmq's TCP bind in ipykernel's "
            f"start asserts on, and the kernel command ({shown} ...) does not start ipykernel_launcher, so jaxci "
            "cannot start it without that bind")


def kernel_manager_class():
    """jupyter_client's AsyncKernelManager, starting ipykernel through LAUNCHER (imported when first needed)."""
    from jupyter_client.manager import AsyncKernelManager

    class NoInetKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            cmd = super().format_kernel_cmd(extra_arguments)
            launched = with_launcher(cmd)
            if launched is not None:
                return launched
            why = interfaces_refused()
            if why is not None:
                raise KernelStartRefused(refusal(cmd, why))
            return cmd

    return NoInetKernelManager

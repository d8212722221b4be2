"""A kernel starts where inet sockets are refused (issue 71: the TPU machine has no network stack).

The machine is reproduced with an LD_PRELOAD shim (tests/fixtures/noinet/noinet.c, compiled with the C compiler
here) that refuses AF_INET, AF_INET6 and netlink sockets and the interface list (getifaddrs) in the kernel process
only: a bare jupyter_client kernel then dies before kernel_info with zmq's ip_resolver assertion, as seen on the
TPU machine, and the audit's kernel starts and runs. Skipped, with the reason, where no compiler is found or the
shim has no effect.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from jaxci import REPO_ROOT
from jaxci.audit.runner import noinet

SHIM = REPO_ROOT / "tests" / "fixtures" / "noinet" / "noinet.c"

BARE_KERNEL = """
import os, sys, tempfile
from jupyter_client import KernelManager
km = KernelManager(transport="ipc", ip=os.path.join(tempfile.mkdtemp(), "kernel"), kernel_name="python3")
km.start_kernel(env=dict(os.environ, LD_PRELOAD=sys.argv[1]))
kc = km.client(); kc.start_channels()
try:
    kc.wait_for_ready(timeout=60)
    print("READY")
except Exception as exc:
    print("FAILED:", exc)
finally:
    kc.stop_channels(); km.shutdown_kernel(now=True)
"""


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (gcc, cc) to build the LD_PRELOAD shim that refuses inet sockets")
    lib = tmp_path_factory.mktemp("noinet") / "noinet.so"
    built = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(lib), str(SHIM), "-ldl"], capture_output=True,
                           text=True)
    if built.returncode:
        pytest.skip(f"the LD_PRELOAD shim did not build: {built.stderr.strip()[-300:]}")
    probe = subprocess.run([sys.executable, "-c", "import socket; socket.socket()"], capture_output=True, text=True,
                           env={**os.environ, "LD_PRELOAD": str(lib)})
    if "Address family not supported" not in probe.stderr:
        pytest.skip("the LD_PRELOAD shim has no effect on this interpreter (statically linked?)")
    return str(lib)


def test_a_bare_kernel_dies_where_the_interface_list_is_refused(shim):
    """What the TPU machine showed: zmq's assertion, and no kernel_info."""
    proc = subprocess.run([sys.executable, "-c", BARE_KERNEL, shim], capture_output=True, text=True, timeout=180)
    out = proc.stdout + proc.stderr
    assert "READY" not in out and "Kernel died before replying to kernel_info" in out
    assert "Address family not supported by protocol (src/ip_resolver.cpp" in out


def test_the_audit_kernel_starts_and_runs_there(shim, tmp_path):
    import nbformat

    from jaxci.audit.runner import run_notebook

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 6 * 7\nprint(x)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "lecture.ipynb"
    nbformat.write(nb, path)
    result = run_notebook(path, timeout=120, env={"LD_PRELOAD": shim}, startup_timeout=120)
    assert result.status == "ok", result.error
    assert len(result.cells) == 1 and result.cells[0].status == "ok"


def test_the_launcher_replaces_only_ipykernel_launcher():
    cmd = ["/usr/bin/python3", "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "/tmp/k.json"]
    assert noinet.with_launcher(cmd) == ["/usr/bin/python3", "-Xfrozen_modules=off", "-c", noinet.LAUNCHER,
                                         "-f", "/tmp/k.json"]
    assert noinet.with_launcher(["R", "--slave", "-e", "IRkernel::main()", "--args", "/tmp/k.json"]) is None
    compile(noinet.LAUNCHER, "<launcher>", "exec")


def test_a_kernel_that_cannot_be_helped_fails_with_one_line(monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setattr(noinet, "interfaces_refused", lambda: "Address family not supported by protocol")
    manager = noinet.kernel_manager_class()
    km = manager(kernel_name="python3")
    monkeypatch.setattr(km, "_kernel_spec", SimpleNamespace(argv=["irkernel", "{connection_file}"],
                                                            resource_dir="/tmp", language="R"), raising=False)
    monkeypatch.setattr(type(km), "kernel_spec", property(lambda self: self._kernel_spec))
    km.connection_file = "/tmp/k.json"
    with pytest.raises(noinet.KernelStartRefused) as exc:
        km.format_kernel_cmd()
    line = str(exc.value)
    assert "\n" not in line and line.startswith("this machine refuses the interface list (getifaddrs: Address")
    assert "does not start ipykernel_launcher" in line


AUDIT_PROCESS = """
import sys
import nbformat
from jaxci.audit.runner import run_notebook
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbformat.write(nb, sys.argv[1])
r = run_notebook(sys.argv[1], timeout=120, startup_timeout=120)
print("STATUS", r.status, r.error)
"""


def test_the_whole_audit_process_runs_without_inet_sockets(shim, tmp_path):
    """As on the TPU machine: the audit process itself and its kernel both lack inet sockets."""
    proc = subprocess.run([sys.executable, "-c", AUDIT_PROCESS, str(tmp_path / "lecture.ipynb")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "LD_PRELOAD": shim, "PYTHONPATH": str(REPO_ROOT)})
    assert "STATUS ok None" in proc.stdout, proc.stdout + proc.stderr
    assert "the kernel starts without ipykernel's TCP IOPub pipe" in proc.stderr

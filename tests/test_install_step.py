"""asv's install step (env_matrix/install.py): backend choice and clear errors before pip runs."""

import os
import subprocess
import sys

from tests.asvutil import REPO

SCRIPT = str(REPO / "env_matrix" / "install.py")


def run(*args, **env):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)


def test_usage_without_wheel():
    proc = run()
    assert proc.returncode == 2 and "usage" in proc.stderr


def test_unknown_backend_is_refused_before_installing():
    proc = run("nonexistent.whl", JAXCI_BACKEND="rocm")
    assert proc.returncode == 2
    assert "unknown backend 'rocm'" in proc.stderr


def test_backend_choice_explicit_then_gpu_then_cpu(monkeypatch):
    sys.path.insert(0, str(REPO / "env_matrix"))
    import install

    monkeypatch.setenv("JAXCI_BACKEND", "cuda13")
    assert install.choose_backend() == "cuda13"
    monkeypatch.delenv("JAXCI_BACKEND")
    monkeypatch.setattr(install, "gpu_present", lambda: True)
    assert install.choose_backend() == "cuda13"
    monkeypatch.setattr(install, "gpu_present", lambda: False)
    assert install.choose_backend() == "cpu"


def test_uv_installs_where_path_has_it_and_pip_installs_offline(tmp_path):
    sys.path.insert(0, str(REPO / "env_matrix"))
    import install

    uv = tmp_path / "uv"
    uv.write_text("#!/bin/sh\n")
    uv.chmod(0o755)
    tool, cmd = install.installer({"PATH": str(tmp_path)})
    assert tool == "uv" and cmd[:3] == [str(uv), "pip", "install"] and "--compile-bytecode" in cmd
    assert cmd[cmd.index("--python") + 1] == sys.executable  # into asv's environment, not uv's own
    offline = {"PATH": str(tmp_path), "PIP_NO_INDEX": "1"}  # wheels from PIP_FIND_LINKS, which only pip reads
    assert install.installer(offline) == ("pip", [sys.executable, "-m", "pip", "install"])
    assert install.installer({"PATH": str(tmp_path / "empty")})[0] == "pip"

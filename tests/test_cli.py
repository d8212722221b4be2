"""The jaxci dispatcher: every listed command exists and answers --help; unknown commands are refused."""

import importlib
import subprocess
import sys

import pytest

from jaxci.cli import COMMANDS, main


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_module_has_main_and_help(name):
    module = importlib.import_module(COMMANDS[name][0])
    assert callable(module.main)
    with pytest.raises(SystemExit) as exc:
        module.main(["--help"])
    assert exc.value.code == 0


def test_unknown_command_is_refused(capsys):
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_env_command_does_not_import_jax_or_asv():
    """A lecture repository's CI installs jaxci bare to run `jaxci env`: no JAX, no asv, no numpy needed."""
    code = ("import sys; from jaxci.cli import main; main(['env', '--kernels', '2', '--device-memory-mib', '15360',"
            " '--peak-mib', '1024', '--format', 'json']); print(sorted(m for m in ('jax', 'asv', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"

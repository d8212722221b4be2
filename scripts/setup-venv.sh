#!/usr/bin/env bash
# Create .venv (Python 3.12+, found by scripts/find-python.sh) and install jaxci with the given extras and
# the CPU JAX pins. A .venv left by an older interpreter is rebuilt.
# The installer is uv, pinned, installed into .venv (on the 2-core VM, from an empty uv cache, this script took
# 49 s where pip took 86 s), and env_matrix/install.py uses the same uv for asv's environments. Where uv cannot
# be installed (no index that serves it), pip installs everything as before.
# usage: scripts/setup-venv.sh EXTRAS      e.g. bench,audit   or   bench,audit,test
set -euo pipefail
cd "$(dirname "$0")/.."
extras=${1:-bench,audit}
UV=0.13.9
if [ -x .venv/bin/python ] && ! .venv/bin/python -c 'import sys; raise SystemExit(sys.version_info < (3, 12))'; then
  echo "setup-venv: .venv is $(.venv/bin/python -V 2>&1), older than 3.12: rebuilding it" >&2
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
  python=$(bash scripts/find-python.sh) || exit 1
  echo "setup-venv: creating .venv with $("$python" -V 2>&1) ($python)"
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# The JAX pin lives only in env_matrix/; the extras leave jax unpinned so the pin file decides.
requirements=(-r env_matrix/cpu/requirements.txt -e ".[$extras]")
if .venv/bin/python -m pip install --quiet "uv==$UV" 2>/dev/null; then
  # --compile-bytecode: pip compiles at install, and a process started with PYTHONDONTWRITEBYTECODE never does;
  # --override: the packages left out, and why (pip has no such option, so its install keeps them)
  .venv/bin/uv pip install --quiet --python .venv/bin/python --compile-bytecode --link-mode copy \
    --override scripts/uv-overrides.txt "${requirements[@]}"
  # an override keeps a package out of an install, not out of a .venv that already has it (an older one, or one
  # pip filled first): each package the file leaves out is uninstalled, where it is installed
  mapfile -t left_out < <(sed -e 's/#.*//' -e 's/;.*//' -e 's/[[:space:]]//g' -e '/^$/d' scripts/uv-overrides.txt)
  .venv/bin/uv pip uninstall --quiet --python .venv/bin/python "${left_out[@]}" 2>/dev/null || true
else
  echo "setup-venv: uv $UV could not be installed: installing with pip" >&2
  .venv/bin/python -m pip install --quiet "${requirements[@]}"
fi

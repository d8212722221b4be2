#!/usr/bin/env bash
# Create .venv (Python 3.12+, found by scripts/find-python.sh) and install jaxci with the given extras and
# the CPU JAX pins. A .venv left by an older interpreter is rebuilt.
# usage: scripts/setup-venv.sh EXTRAS      e.g. bench,audit   or   bench,audit,test
set -euo pipefail
cd "$(dirname "$0")/.."
extras=${1:-bench,audit}
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
.venv/bin/python -m pip install --quiet -r env_matrix/cpu/requirements.txt -e ".[$extras]"

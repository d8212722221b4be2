#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install jaxci with the given extras and the CPU JAX pins.
# usage: scripts/setup-venv.sh EXTRAS      e.g. bench,audit   or   bench,audit,test
set -euo pipefail
cd "$(dirname "$0")/.."
extras=${1:-bench,audit}
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# The JAX pin lives only in env_matrix/; the extras leave jax unpinned so the pin file decides.
.venv/bin/python -m pip install --quiet -r env_matrix/cpu/requirements.txt -e ".[$extras]"

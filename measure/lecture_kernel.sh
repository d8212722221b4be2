#!/usr/bin/env bash
# The Jupyter kernel the published lecture builds are executed in (measure/published_builds.py --kernel NAME):
# a virtualenv with the project's CPU JAX pin and the lecture series' own stack (measure/lecture-kernel.txt),
# its kernelspec installed under PREFIX, so that the measurement runs with JUPYTER_PATH=PREFIX/share/jupyter and
# touches neither this project's .venv nor the user's kernels.
#
#   bash measure/lecture_kernel.sh [PREFIX] [NAME] [DATA_DIR]      (defaults: /tmp/lecjup lec38, no DATA_DIR)
#   JUPYTER_PATH=/tmp/lecjup/share/jupyter .venv/bin/python measure/published_builds.py ... --kernel lec38
#
# ENV_FILE=path/environment.yml: the kernel is built from the repository's own environment file instead
# (`jaxci audit kernel-requirements`: the Python it names, its entries' pip equivalents at the versions it names, then the
# lecture stack for what its conda distribution provides); the audit lists what could not be reproduced.
#
# DATA_DIR: the kernel serves the lectures' downloads from local copies there (measure/offline_data.py: FRED
# series read through pandas_datareader as DATA_DIR/fred/SERIES.csv, URLs read through urllib as
# DATA_DIR/web/HOST/PATH); this host has no network. Checked here too, before the minutes of installing.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/tmp/lecjup}"
name="${2:-lec38}"
data="${3:-}"
if [ -n "$data" ] && [ ! -d "$data" ]; then echo "lecture_kernel: DATA_DIR $data is not a folder" >&2; exit 2; fi
requirements=measure/lecture-kernel.txt
if [ -n "${ENV_FILE:-}" ]; then
  mkdir -p "$prefix"
  requirements="$prefix/env-requirements.txt"
  named="$(.venv/bin/python -m jaxci audit kernel-requirements "$ENV_FILE" "$requirements")"
  if [ -n "$named" ]; then  # pyenv's newest install of that version, else pythonX.Y on PATH
    v="$(pyenv versions --bare 2>/dev/null | grep -E "^${named//./\\.}(\\.|$)" | sort -V | tail -1 || true)"
    if [ -n "$v" ]; then export PYTHON="$(pyenv prefix "$v")/bin/python3"; else export PYTHON="python$named"; fi
  fi
fi
python="$(bash scripts/find-python.sh)"
"$python" -m venv "$prefix/venv"
"$prefix/venv/bin/pip" install -q -r env_matrix/cpu/requirements.txt -r "$requirements"
"$prefix/venv/bin/python" -m ipykernel install --prefix "$prefix" --name "$name" --display-name "lectures ($name)"
if [ -n "$data" ]; then
  "$prefix/venv/bin/python" measure/offline_data.py "$prefix/share/jupyter/kernels/$name/kernel.json" "$data"
fi
echo "kernel '$name' ready: JUPYTER_PATH=$prefix/share/jupyter ... --kernel $name"

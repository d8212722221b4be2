#!/usr/bin/env bash
# The Jupyter kernel the published lecture builds are executed in (measure/published_builds.py --kernel NAME):
# a virtualenv with the project's CPU JAX pin and the lecture series' own stack (measure/lecture-kernel.txt),
# its kernelspec installed under PREFIX, so that the measurement runs with JUPYTER_PATH=PREFIX/share/jupyter and
# touches neither this project's .venv nor the user's kernels.
#
#   bash measure/lecture_kernel.sh [PREFIX] [NAME]      (defaults: /tmp/lecjup lec38)
#   JUPYTER_PATH=/tmp/lecjup/share/jupyter .venv/bin/python measure/published_builds.py ... --kernel lec38
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/tmp/lecjup}"
name="${2:-lec38}"
python="$(bash scripts/find-python.sh)"
"$python" -m venv "$prefix/venv"
"$prefix/venv/bin/pip" install -q -r env_matrix/cpu/requirements.txt -r measure/lecture-kernel.txt
"$prefix/venv/bin/python" -m ipykernel install --prefix "$prefix" --name "$name" --display-name "lectures ($name)"
echo "kernel '$name' ready: JUPYTER_PATH=$prefix/share/jupyter ... --kernel $name"

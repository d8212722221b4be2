#!/usr/bin/env bash
# Prepare, on a build machine with network, what a lent GPU machine lacks for scripts/gpu_capture.py:
# cp312 manylinux wheels of asv and of a Jupyter kernel's stack (nbclient, ipykernel, jupytext) and everything
# they need, in .device/wheels (git-ignored, carried with the
# working tree), plus .device/commit.json (the commit and its date: the copy sent to the device may hold
# no .git). The device has Python 3.12, jax + CUDA 13 and numpyro, no network and no asv
# (docs/gpu-capture.md). Run it again after a commit: commit.json names the commit being captured.
#
# usage: bash scripts/prepare-device.sh [PYTHON]     (PYTHON: any interpreter with pip; default python3)
#   DEVICE_PYTHON=3.11: wheels for the device's interpreter (default 3.12; the lent TPU has 3.11: docs/gpu-capture.md)
#   DEVICE_NO_DEPS="numpyro==0.22.0 multipledispatch tqdm": also these, without their dependencies (the TPU image has
#   JAX but no numpyro: its own wheel and its small pure-Python needs, never a second JAX; numpyro imports tqdm:
#   without it the NUTS step failed on 2026-12-07, ModuleNotFoundError)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-python3}"
DEST=.device/wheels
PYV="${DEVICE_PYTHON:-3.12}"
[[ "$PYV" =~ ^3\.[0-9]+$ ]] || { echo "prepare-device: DEVICE_PYTHON=$PYV: expected 3.N" >&2; exit 2; }
ABI="cp${PYV/./}"
# the pins the project writes once, in pyproject.toml: asv (bench extra), and what runs a notebook through a
# Jupyter kernel (audit extra) for the capture's notebooks step
mapfile -t WANTED < <(PYTHONPATH=. "$PY" -m jaxci inputs requirements asv &&
                      PYTHONPATH=. "$PY" -m jaxci inputs requirements --extra audit nbclient nbformat jupytext ipykernel)
[ "${#WANTED[@]}" -ge 5 ] || { echo "prepare-device: could not read the pins from pyproject.toml" >&2; exit 2; }

rm -rf "$DEST"
mkdir -p "$DEST"
# --only-binary: the device cannot build anything; pip resolves asv's whole dependency closure for $ABI.
PLATFORMS=(--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64)
"$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --dest "$DEST" \
    --python-version "$PYV" --implementation cp --abi "$ABI" "${PLATFORMS[@]}" "${WANTED[@]}"
if [ -n "${DEVICE_NO_DEPS:-}" ]; then
    read -r -a EXTRA <<< "$DEVICE_NO_DEPS"
    "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --no-deps --dest "$DEST" \
        --python-version "$PYV" --implementation cp --abi "$ABI" "${PLATFORMS[@]}" "${EXTRA[@]}"
fi

commit=$(git rev-parse HEAD)
date=$(git show -s --format=%ct HEAD)
dirty=$(git status --porcelain --untracked-files=no -- benchmarks jaxci scripts env_matrix asv.conf.json | wc -l)
printf '{"commit": "%s", "date": %s, "dirty_files": %s}\n' "$commit" "$date" "$dirty" > .device/commit.json
[ "$dirty" = 0 ] || echo "prepare-device: warning: $dirty tracked file(s) under benchmarks/ jaxci/ scripts/ env_matrix/ differ from $commit: commit first, or the capture times code that is not in the commit it names" >&2

echo "prepare-device: $(ls "$DEST" | wc -l) wheels for Python $PYV in $DEST ($(du -sh "$DEST" | cut -f1)); commit ${commit:0:12}"
ls "$DEST"

#!/usr/bin/env bash
# Prepare, on a build machine with network, what scripts/tpu_score.sh carries to a lent machine that has no
# network: the lectures to execute and the lectures' packages that neither the device's image nor its own package
# index holds (wheels, without their dependencies, for the device's interpreter). Data, never committed
# (.gitignore: .tpu-lec/, .whl-tpu/). The kernel's own stack (nbclient, ipykernel, numpyro, tqdm) is
# scripts/prepare-device.sh's.
#
# usage: bash scripts/prepare-scoring.sh SNAPSHOT COMMIT [PYTHON]
#   SNAPSHOT  a git directory of the lecture repository (e.g. the `fetch` tool's mirror)
#   COMMIT    the audited commit whose lectures/*.md, _config.yml and _toc.yml are copied
#   SCORE_LECTURES  the lectures to copy, names without .md (default: all; the call's working tree and what it
#                   carries must stay under 64 MiB: the whole folder of 145 lectures with the wheels did not)
#   DEVICE_PYTHON   the device's interpreter, 3.N (default 3.11: the lent TPU)
#   LECTURE_WHEELS  what to carry (default below: quantecon; arviz, pymc, pytensor and seaborn with the small
#                   pure-Python packages they need, which the TPU's index did not hold on 2026-12-07: ar1_bayes
#                   and mix_model were not executed then)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,15p "$0" >&2; exit 2; }
SNAP=$1 COMMIT=$2 PY="${3:-python3}"
PYV="${DEVICE_PYTHON:-3.11}"
[[ "$PYV" =~ ^3\.[0-9]+$ ]] || { echo "prepare-scoring: DEVICE_PYTHON=$PYV: expected 3.N" >&2; exit 2; }
git --git-dir "$SNAP" cat-file -e "$COMMIT^{commit}" 2>/dev/null ||
    { echo "prepare-scoring: $SNAP has no commit $COMMIT" >&2; exit 2; }
DEFAULT="quantecon arviz xarray xarray-einstats h5netcdf seaborn pymc pytensor cachetools cloudpickle cons etuples
logical-unification minikanren toolz filelock threadpoolctl rich markdown-it-py mdurl pygments"
read -r -a WANTED <<< "$(echo ${LECTURE_WHEELS:-$DEFAULT})"

rm -rf .tpu-lec .whl-tpu
mkdir -p .tpu-lec .whl-tpu
git --git-dir "$SNAP" archive "$COMMIT" lectures/_config.yml lectures/_toc.yml |
    tar -x -C .tpu-lec
if [ -n "${SCORE_LECTURES:-}" ]; then
    read -r -a NAMES <<< "$SCORE_LECTURES"
    PATHS=(); for n in "${NAMES[@]}"; do PATHS+=("lectures/$n.md"); done
    git --git-dir "$SNAP" archive "$COMMIT" "${PATHS[@]}" 2>/dev/null | tar -x -C .tpu-lec ||
        { echo "prepare-scoring: SCORE_LECTURES names a lecture that $COMMIT lacks (lectures/NAME.md)" >&2; exit 2; }
else
    git --git-dir "$SNAP" archive "$COMMIT" lectures | tar -x -C .tpu-lec --wildcards 'lectures/*.md'
fi
# resolved together (so that pymc gets the pytensor it pins), then only the named ones kept: the device's image
# and index hold numpy, scipy, pandas, matplotlib, h5py (scripts/tpu_score.sh installs those from the index)
ALL=$(mktemp -d)
trap 'rm -rf "$ALL"' EXIT
"$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --dest "$ALL" \
    --python-version "$PYV" --implementation cp --abi "cp${PYV/./}" --platform manylinux2014_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 "${WANTED[@]}"
for name in "${WANTED[@]}"; do
    stem=$(echo "$name" | tr 'A-Z-' 'a-z_')
    wheel=$(ls "$ALL" | awk -F- -v s="$stem" 'tolower($1) == s' | head -1)
    [ -n "$wheel" ] || { echo "prepare-scoring: $name: no wheel in the resolution" >&2; exit 2; }
    # a name in both folders (any version) stops the device's single pip call (ResolutionImpossible)
    ls .device/wheels 2>/dev/null | awk -F- -v s="$stem" 'tolower($1) == s {found=1} END {exit !found}' && continue
    cp "$ALL/$wheel" .whl-tpu/
done
printf '{"snapshot_commit": "%s"}\n' "$(git --git-dir "$SNAP" rev-parse "$COMMIT")" > .tpu-lec/commit.json
echo "prepare-scoring: $(ls .tpu-lec/lectures/*.md | wc -l) lectures at ${COMMIT:0:12} in .tpu-lec ($(du -sh .tpu-lec | cut -f1)); $(ls .whl-tpu | wc -l) wheels for Python $PYV in .whl-tpu ($(du -sh .whl-tpu | cut -f1))"

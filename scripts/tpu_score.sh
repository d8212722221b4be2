#!/usr/bin/env bash
# The runner model scored on an accelerator it was not built on (issue 71 item 5, issue 70 item 3): one device
# call on the lent TPU machine (tool `run`, timeout_s 590, carry [".device", ".whl-tpu", ".tpu-lec"]).
#   .device     the kernel's stack as wheels (scripts/prepare-device.sh, DEVICE_PYTHON=3.11)
#   .whl-tpu    what neither the image nor its own package index holds (quantecon, pymc, arviz, seaborn, no deps)
#   .tpu-lec    the lectures to execute, as a lecture repository (lectures/*.md, _config.yml, _toc.yml),
#               copied from the audited commit of a development set: data, never committed
# Both prepared by scripts/prepare-scoring.sh SNAPSHOT COMMIT (the kernel's stack by scripts/prepare-device.sh).
# Each lecture runs once on the CPU and once on the TPU, in kernels started by `jaxci audit --execute`, one
# lecture per process so that a deadline loses one lecture, never the others: the CPU loop and the TPU loop run
# side by side (one process at a time may hold the chip; the CPU loop's kernels never open it). Then one audit
# reuses every completed run from the shared cache (it executes nothing) and judges them for the TPU machine's
# family (lab-tpu-v5e: its predictions come from the committed capture), so that predicted and measured lie in
# one JSON. Budget: SCORE_BUDGET seconds (default 400) for starting a lecture on either side.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?OUT must name the folder the results go to}"
BUDGET="${SCORE_BUDGET:-400}"
DEADLINE="${SCORE_DEADLINE:-$((BUDGET + 90))}"   # a lecture still running then is stopped (and lost, alone)
CELL="${SCORE_CELL_TIMEOUT:-120}"
T0=$SECONDS
PIPQ=(env PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --no-cache-dir --no-compile)
"${PIPQ[@]}" --no-index --no-deps --target /tmp/site .device/wheels/*.whl .whl-tpu/*.whl || exit 2
# the lectures' own stack from the machine's package index (docs: KINDS.md), after the image's JAX on the path
"${PIPQ[@]}" --only-binary=:all: --index-url file:///opt/pypi/simple --target /tmp/lec \
    matplotlib numba pandas scikit-learn requests h5py > "$OUT/pip-lec.log" 2>&1 || echo "tpu_score: lecture stack: see pip-lec.log"
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}/tmp/site:/tmp/lec" PYTHONUNBUFFERED=1 MPLBACKEND=Agg
# pymc's pytensor compiles C into its own folder: a writable one that every kernel of the call shares
export PYTENSOR_FLAGS=base_compiledir=/tmp/pytensor
# in-notebook `!pip install` lines find no index (there is no network): they leave the installed packages as they are
export PIP_NO_INDEX=1 JAXCI_ACCELERATOR=tpu
echo "tpu_score: set up in $((SECONDS - T0)) s; $(python3 -c 'import platform; print(platform.libc_ver())')"
python3 -m pip list 2>/dev/null | grep -i -E '^(jax|jaxlib|numpy|numba|scipy|matplotlib|quantecon|pandas|ipykernel) ' > "$OUT/packages.txt"
cat "$OUT/packages.txt"
mapfile -t LECTURES < <(ls .tpu-lec/lectures/*.md | xargs -n1 basename | sed 's/\.md$//')
[ -n "${SCORE_ORDER:-}" ] && read -r -a LECTURES <<< "$SCORE_ORDER"
CACHE="$OUT/cache"
mkdir -p "$CACHE" "$OUT/cpu" "$OUT/tpu"

side() {  # side PLATFORM: execute each lecture on PLATFORM in its own audit, until the budget is spent
    local platform=$1 name start
    for name in "${LECTURES[@]}"; do
        if (( SECONDS - T0 > BUDGET )); then echo "$name not reached" >> "$OUT/$platform/not-reached.txt"; continue; fi
        start=$SECONDS
        timeout -k 5 $((DEADLINE - (SECONDS - T0))) python3 -m jaxci audit .tpu-lec --execute --platforms "$platform" --only "$name" --no-ci --no-progress \
            --cell-timeout "$CELL" --cache "$CACHE" --format json --output "$OUT/$platform/$name.json" \
            > "$OUT/$platform/$name.log" 2>&1
        echo "$name $platform exit=$? wall=$((SECONDS - start))s" | tee -a "$OUT/$platform/walls.txt"
    done
}
side cpu &
side tpu &
wait
# every lecture completed on both sides, judged for the TPU machine: nothing executes (each run comes from the cache)
BOTH=$(comm -12 <(grep exit=0 "$OUT/cpu/walls.txt" 2>/dev/null | cut -d' ' -f1 | sort) \
                <(grep exit=0 "$OUT/tpu/walls.txt" 2>/dev/null | cut -d' ' -f1 | sort) | paste -sd,)
if [ -z "$BOTH" ]; then  # (on 2026-12-08 the judge ran with an empty --only and said only "--only: no names")
    echo "tpu_score: no lecture completed on both sides: nothing to judge (each side's record is in runs.tar.gz)"
else
    python3 -m jaxci audit .tpu-lec --execute --platforms cpu,tpu --no-ci --no-progress --cell-timeout "$CELL" \
        --cache "$CACHE" --reuse-failures --machine lab-tpu-v5e --format json --output "$OUT/audit.json" \
        --only "$BOTH" > "$OUT/judge.log" 2>&1
    echo "tpu_score: judged $BOTH (exit $?) in $((SECONDS - T0)) s in all"
fi
# one file back instead of hundreds (the device returns a bounded number of files)
tar -czf "$OUT/runs.tar.gz" -C "$OUT" cpu tpu cache && rm -rf "$OUT/cpu" "$OUT/tpu" "$CACHE"

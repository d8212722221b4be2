#!/usr/bin/env bash
# The TPU capture (issue 71), one device call each: run on the lent TPU machine from the repository root, with
# .device carried (prepared here by: DEVICE_PYTHON=3.11 DEVICE_NO_DEPS="numpyro==0.22.0 multipledispatch tqdm"
# bash scripts/prepare-device.sh .venv/bin/python; commit first). Calls of at most 9 minutes (on 2026-12-06 the TPU
# took 1.3-1.9x the H200's estimates for GEMM and bandwidth: calls 1 and 2 took 358 s and 306 s; call 3 on
# 2026-12-07 took 395 s: crossover f32 and f64 ran, the NUTS step lacked tqdm, loops-f64 was not reached):
#   bash scripts/tpu_capture.sh 1    dispatch floor (TinyOp), GEMM per precision and dtype, bandwidth; process
#                                    start (the probes)
#   bash scripts/tpu_capture.sh 2    loop step, compile stages (cold first calls, jit series, cache): with 1, what
#                                    the runner model predicts a lecture from
#   bash scripts/tpu_capture.sh 3    NUTS leapfrog step, kernel time vs gaps (profile), the crossover and the FP64
#                                    penalty (float32 and float64 kernels)
#   bash scripts/tpu_capture.sh 4    what call 3 did not finish on 2026-12-07: the NUTS step, loops-f64
# Each call packs capture.json, summary.md, results.tar.gz, logs.tar.gz into $OUT (console.log beside them);
# `jaxci import` merges them into results/lab-tpu-v5e/ on the build machine (docs/gpu-capture.md, On a TPU).
# Steps are asked for by name (--only), in the plan's order; a step that does not fit the time left is listed
# "not reached", never started. JAXCI_ACCELERATOR=tpu says what the machine is (its PCI bus may not be visible in
# the sandbox); every combination still checks that JAX started the TPU before it measures.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
    1) ONLY='^(sanity|gemm-precision|bandwidth)$' ;;
    2) ONLY='^(loops-f32|compile)$' ;;
    3) ONLY='^(nuts-step|profile|crossover-f32|crossover-f64|loops-f64)$' ;;
    4) ONLY='^(nuts-step|loops-f64)$' ;;
    *) echo "usage: bash scripts/tpu_capture.sh 1|2|3|4" >&2; exit 2 ;;
esac
: "${OUT:?OUT must name the folder the packed files go to}"
PY="${PYTHON:-python3}"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "tpu_capture: needs Python >= 3.11" >&2; exit 2; }
# the carried wheels on the path before anything of jaxci is imported (its process helpers need psutil, which the
# image lacks: the capture's own unpacking comes too late for them); after the image's JAX, never before it
PIP_CONFIG_FILE=/dev/null "$PY" -m pip install --isolated -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/jaxci-site .device/wheels/*.whl 2>/dev/null || { echo "tpu_capture: carried wheels not installed" >&2; exit 2; }
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}/tmp/jaxci-site"
export JAXCI_ACCELERATOR=tpu PYTHONUNBUFFERED=1
set -o pipefail
"$PY" scripts/gpu_capture.py --machine lab-tpu-v5e --only "$ONLY" --budget "${BUDGET:-520}" --out "$OUT" \
    --wheels .device/wheels 2>&1 | tee "$OUT/console.log"

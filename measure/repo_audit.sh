#!/usr/bin/env bash
# An executed audit of a real lecture repository at a stated commit, as committed under audits/ (docs/report/):
#
#   JUPYTER_PATH=/tmp/lecjup/share/jupyter bash measure/repo_audit.sh CHECKOUT FAMILY OUTDIR [ONLY_FILE] [KERNEL]
#
# CHECKOUT is a clean checkout of the repository at the commit to audit; the kernel is the lecture kernel from
# measure/lecture_kernel.sh (default lec38). OUTDIR receives the raw audit JSON, the CI patch, the kernel's
# package list and run.txt (the commit, the host, the load and the wall time before and after). ONLY_FILE, when
# given, lists the lectures to execute (the others keep their static verdicts, each said as not selected).
# `jaxci audit publish OUTDIR audits/NAME@COMMIT` then keeps the names and numbers only.
# PUBLISHED=FILE (the site's published build, `jaxci audit published`) lets its run times outrank the GPU side's
# prediction in the pin rule and is copied to OUTDIR; BASELINE=FILE (a previous audit, committed ones included)
# reuses its runs of unchanged lectures, so a re-judge with new rules executes nothing that did not change;
# REUSE_FAILURES=1 keeps its failed runs too, and EXTRA="--host-probe S" judges with the probe of the host that
# ran them when the baseline recorded none.
# `jaxci audit publish OUTDIR audits/NAME@COMMIT` then keeps the names and numbers only. AUDIT_ARGS adds options
# (word-split), e.g. AUDIT_ARGS="--baseline PREVIOUS.json --cache DIR --build-status status.ipynb": an incremental
# audit reuses the unchanged runs, and a lecture the published build executed that fails here is the harness's.
set -euo pipefail
checkout="$1"; family="$2"; out="$3"; only="${4:-}"; kernel="${5:-lec38}"
machine=(); [ "$family" != "-" ] && machine=(--machine "$family")   # "-": the family the build jobs run on
cd "$(dirname "$0")/.."
mkdir -p "$out"
commit="$(git -C "$checkout" rev-parse HEAD)"
python="$(.venv/bin/jupyter kernelspec list --json 2>/dev/null | .venv/bin/python -c \
  "import json,sys; print(json.load(sys.stdin)['kernelspecs']['$kernel']['spec']['argv'][0])" 2>/dev/null || true)"
{
  echo "repository: $(basename "$checkout")"
  echo "commit: $commit"
  echo "family: $([ "$family" = "-" ] && echo "the build jobs' runner" || echo "$family")"
  echo "kernel: $kernel (measure/lecture_kernel.sh)"
  echo "cpu: $(.venv/bin/python -c 'import platform,os; print(platform.processor() or platform.machine(), os.cpu_count(), "cores")')"
  echo "start: $(date -u +%FT%TZ)"
  echo "start_load: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/run.txt"
[ -n "$python" ] && "$python" -m pip freeze > "$out/kernel-packages.txt" 2>/dev/null || true
args=("$checkout" --execute --kernel "$kernel" --format json --output "$out/audit.json"
      --cell-timeout 900 --no-progress --emit-config "$out/ci.patch" "${machine[@]}")
[ -n "$only" ] && args+=(--only "@$only")
[ -n "${BASELINE:-}" ] && args+=(--baseline "$BASELINE")
[ -n "${REUSE_FAILURES:-}" ] && args+=(--reuse-failures)   # a re-judge: failed runs are kept, not run again
# shellcheck disable=SC2206  # EXTRA is a list of options, split on purpose (e.g. "--host-probe 0.148")
[ -n "${EXTRA:-}" ] && args+=($EXTRA)
if [ -n "${PUBLISHED:-}" ]; then args+=(--published "$PUBLISHED"); cp "$PUBLISHED" "$out/published.json"; fi
# shellcheck disable=SC2206 # word-split on purpose: AUDIT_ARGS is a list of options
[ -n "${AUDIT_ARGS:-}" ] && args+=(${AUDIT_ARGS})
echo "options: ${args[*]:1}" >> "$out/run.txt"
start=$(date +%s)
set +e
.venv/bin/jaxci audit "${args[@]}" 2> "$out/stderr.txt"
rc=$?
set -e
{ echo "end: $(date -u +%FT%TZ)"; echo "end_load: $(cut -d' ' -f1-3 /proc/loadavg)"; } >> "$out/run.txt"
why="the audit ran"; [ "$rc" = 1 ] && why="some lectures failed (the audit's 'failed' list), or the audit stopped (stderr.txt)"
[ "$rc" = 2 ] && why="the audit refused its input (stderr.txt)"
{ echo "wall_s: $(( $(date +%s) - start ))"; echo "exit: $rc ($why)"; } >> "$out/run.txt"

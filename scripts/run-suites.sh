#!/usr/bin/env bash
# Run the asv suite one suite (benchmark module) at a time. asv saves results when a run ends, so an
# interrupted run loses at most the suite that was running, and this script says which.
# usage: scripts/run-suites.sh MACHINE [asv run arguments...]
#   JAXCI_SUITES="dense loops"  runs only those suites (default: every module in benchmarks/)
#   ASV="asv"                   the asv command to use (default: asv on PATH, else .venv/bin/asv)
set -uo pipefail
cd "$(dirname "$0")/.."
machine=${1:?usage: scripts/run-suites.sh MACHINE [asv run args...]}
shift
asv=${ASV:-$(command -v asv || echo .venv/bin/asv)}
suites=${JAXCI_SUITES:-$(for f in benchmarks/*.py; do b=$(basename "$f" .py); [ "$b" = common ] || [ "$b" = __init__ ] || echo "$b"; done)}
current=""
trap 'echo "run-suites: interrupted during suite ${current:-?}: its results are lost; the suites before it are saved" >&2; exit 130' INT TERM
failed=()
for suite in $suites; do
  current=$suite
  echo "== suite $suite ($(date -u +%H:%M:%S))"
  if ! "$asv" run --machine "$machine" --bench "^$suite\." "$@"; then
    failed+=("$suite")
    echo "run-suites: suite $suite reported failed or timed-out benchmarks (its other results are saved)" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run-suites: suites with failures: ${failed[*]}" >&2
  exit 2
fi
echo "run-suites: all suites finished"

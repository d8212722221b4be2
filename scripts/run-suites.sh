#!/usr/bin/env bash
# Run the asv suite one suite (benchmark module) at a time. asv saves results when a run ends, so an
# interrupted run loses at most the suite that was running, and this script says which.
# usage: scripts/run-suites.sh MACHINE [asv run arguments...]
#   JAXCI_SUITES="dense loops"  runs only those suites (default: every suite, `jaxci inputs suites`)
#   JAXCI_SUITE_FILTERS="dense=RE loops=RE"  SUITE=--bench regex pairs instead: the bench workflow plan's
#                               suite_filters (each suite AND the dispatch's filter)
#   JAXCI_STATUS=FILE           record each suite's start and outcome in FILE (`jaxci inputs status`; the
#                               bench workflow, whose last step closes it with `finish`); asv's output of
#                               each suite goes to FILE's name with .SUITE.log. A suite then counts as
#                               failed only when asv itself failed, not for failed or timed-out benchmarks
#   ASV="asv"                   the asv command to use (default: asv on PATH, else .venv/bin/asv)
#   PYTHON="python3"            the Python that runs jaxci (default: the one beside asv, else python3)
# Exit status: 0 every suite finished, 2 some suite failed (its other results are saved, the rest still ran).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
machine=${1:?usage: scripts/run-suites.sh MACHINE [asv run args...]}
shift
asv=${ASV:-$(command -v asv || echo .venv/bin/asv)}
beside=$(dirname "$(command -v "$asv" || echo "$asv")")/python
python=${PYTHON:-$([ -x "$beside" ] && echo "$beside" || echo python3)}
status=${JAXCI_STATUS:-}

items=()
if [ -n "${JAXCI_SUITE_FILTERS:-}" ]; then
  # checked before asv runs: known suites, the plan's regex form, the user filter's backtracking bound
  "$python" -m jaxci inputs suites --check-filters "$JAXCI_SUITE_FILTERS" > /dev/null || exit 2
  read -r -a items <<< "$JAXCI_SUITE_FILTERS"
else
  suites=${JAXCI_SUITES:-$("$python" -m jaxci inputs suites)} || {
    echo "run-suites: cannot list the suites of benchmarks/ (with $python)" >&2
    exit 2
  }
  for suite in $suites; do items+=("$suite=^$suite\\."); done
fi

# one suite with its status recorded: start, asv (output also to the log), end; fails only if asv failed
run_recorded() {
  local suite=$1 regex=$2 log rc
  shift 2
  log="${status%.json}.$suite.log"
  "$python" -m jaxci inputs status "$status" start --suite="$suite" || exit 2
  "$asv" run --machine "$machine" --bench "$regex" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  "$python" -m jaxci inputs status "$status" end --suite="$suite" --exit="$rc" --log="$log"
}

current=""
interrupted() {
  echo "run-suites: interrupted during suite ${current:-?}: its results are lost; the suites before it are saved" >&2
  exit 130
}
trap interrupted INT TERM
failed=()
for item in "${items[@]}"; do
  suite=${item%%=*}
  regex=${item#*=}
  current=$suite
  echo "== suite $suite ($(date -u +%H:%M:%S))"
  if [ -n "$status" ]; then
    if ! run_recorded "$suite" "$regex" "$@"; then
      failed+=("$suite")
      echo "run-suites: suite $suite failed (asv could not run it; see $status)" >&2
    fi
  elif ! "$asv" run --machine "$machine" --bench "$regex" "$@"; then
    failed+=("$suite")
    echo "run-suites: suite $suite reported failed or timed-out benchmarks (its other results are saved)" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run-suites: suites with failures: ${failed[*]}" >&2
  exit 2
fi
echo "run-suites: all suites finished"

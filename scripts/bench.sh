#!/usr/bin/env bash
# Quick start, command 1: set up, run the whole suite on this machine at CI scale, publish the site.
# The machine registers under a local name (results/local-*/, git-ignored); CPU is the embedded default.
#   JAXCI_SCALE=full      the full-scale run (the bench workflow's scale on runner families), sampled as asv samples
#   JAXCI_QUICK=0         at CI scale, asv's own sampling (rounds, repeats, warm-up: longer); by
#                         default a CI-scale run samples each case once (asv run --quick): a check that every
#                         case runs on this machine and a first look, never results to commit or compare closely
#   JAXCI_MACHINE=NAME    a catalogue family name on a real runner (e.g. g4dn.2xlarge)
#   JAXCI_OFFLINE_ASSETS=1  vendor the libraries asv's pages load from public CDNs into html/vendor/ (npm, once:
#                         scripts/fetch-asv-assets.sh), so asv preview and the published folder work offline
# asv's log goes to the terminal while it runs; the run ends with a short summary (what ran, how long,
# where the site and the findings are, the top answers), never the whole findings document.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
export JAXCI_SCALE=${JAXCI_SCALE:-ci}
case $JAXCI_SCALE in  # refused before the virtualenv or asv starts (the rule of jaxci.util.validate.scale)
  ci|full) ;;
  *) printf 'bench.sh: JAXCI_SCALE=%q: expected ci or full (or unset: ci)\n' "$JAXCI_SCALE" >&2; exit 2 ;;
esac
case ${JAXCI_QUICK:-1} in
  0) quick=() ;;
  1) quick=(--quick); [ "$JAXCI_SCALE" = full ] && quick=() ;;   # full scale is always sampled as asv samples
  *) printf 'bench.sh: JAXCI_QUICK=%q: expected 0 or 1 (or unset: 1)\n' "$JAXCI_QUICK" >&2; exit 2 ;;
esac
bash scripts/setup-venv.sh bench,audit || exit 1
export PATH="$PWD/.venv/bin:$PATH"
machine=${JAXCI_MACHINE:-local-$(hostname)}
if jaxci machine --list | grep -q "^$machine "; then
  jaxci machine "$machine" || exit 1
else
  jaxci machine --local "$machine" || exit 1
fi
start=$(date +%s)
# Real asv environments: asv builds this commit's wheel and env_matrix/install.py installs the pins.
# Full scale runs suite by suite (asv saves a suite's results when its run ends: an interrupt loses one suite);
# CI scale is one asv run of every suite (one discovery, one forkserver: docs/suite-cost.md; an interrupt loses
# only these few minutes)
if [ "$JAXCI_SCALE" = full ]; then
  runs="suite by suite"
  bash scripts/run-suites.sh "$machine" HEAD^! --show-stderr "${quick[@]}"
else
  runs="one asv run"
  asv run --machine "$machine" HEAD^! --show-stderr "${quick[@]}"
fi
status=$?
elapsed=$(( $(date +%s) - start ))
# the committed release history (results/ref-epyc-2c-ci) names the pin commits main carries: their jax-v*
# tags label and place them on asv's graphs, and a clone of main alone has none
jaxci history --restore-refs || exit 1
# asv publish writes asv's site and the findings page, html/findings/ with the Findings link in asv's navbar (its
# publisher plugin, asv.conf.json "plugins": jaxci/commands/asv_findings.py); what stops the page it says on stderr
asv publish >/dev/null || { echo "asv publish failed"; exit 1; }
[ -f html/findings/index.html ] || { echo "asv publish wrote no findings page (the reason is above)"; status=1; }
offline=()
if [ "${JAXCI_OFFLINE_ASSETS:-0}" = 1 ]; then
  cache=$(bash scripts/fetch-asv-assets.sh) || { echo "fetching asv's CDN libraries from npm failed"; exit 1; }
  offline=(--html html --offline-assets "$cache")
fi
summary=$(jaxci report results --format summary "${offline[@]}") || status=1
echo
echo "== jax-ci-bench: summary =="
sampling="asv's own sampling"
[ ${#quick[@]} -gt 0 ] && sampling="one sample per case (asv run --quick; JAXCI_QUICK=0 samples as asv does)"
echo "ran: every suite at JAXCI_SCALE=$JAXCI_SCALE on $machine in ${elapsed} s ($runs), $sampling (exit status $status)"
echo "$summary" | head -n 24
echo "findings: html/findings/index.html (also html/findings/findings.md, guidance.md)"
if [ ${#offline[@]} -gt 0 ]; then
  echo "site: .venv/bin/asv preview, then http://127.0.0.1:8080 (asv's libraries vendored in html/vendor/: no CDN)"
else
  echo "site: .venv/bin/asv preview, then http://127.0.0.1:8080 (asv's graphs load scripts from public CDNs;" \
       "JAXCI_OFFLINE_ASSETS=1 vendors them)"
fi
exit $status

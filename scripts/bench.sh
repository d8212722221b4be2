#!/usr/bin/env bash
# Quick start, command 1: set up, run the whole suite on this machine at CI scale, publish the site.
# The machine registers under a local name (results/local-*/, git-ignored); CPU is the embedded default.
#   JAXCI_SCALE=full      the full-scale run (the bench workflow's scale on runner families)
#   JAXCI_MACHINE=NAME    a catalogue family name on a real runner (e.g. g4dn.2xlarge)
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh bench,audit || exit 1
export PATH="$PWD/.venv/bin:$PATH"
export JAXCI_SCALE=${JAXCI_SCALE:-ci}
machine=${JAXCI_MACHINE:-local-$(hostname)}
if jaxci machine --list | grep -q "^$machine "; then
  jaxci machine "$machine" || exit 1
else
  jaxci machine --local "$machine" || exit 1
fi
start=$(date +%s)
# Real asv environments: asv builds this commit's wheel and env_matrix/install.py installs the pins.
bash scripts/run-suites.sh "$machine" HEAD^! --show-stderr
status=$?
echo "suite wall time: $(( $(date +%s) - start )) s at JAXCI_SCALE=$JAXCI_SCALE on $machine"
asv publish || exit 1
if jaxci report --help >/dev/null 2>&1; then
  jaxci report results --html html || status=1
fi
echo "site: html/index.html (serve it with: .venv/bin/asv preview)"
exit $status

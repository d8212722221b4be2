#!/usr/bin/env bash
# The notebook build engines the fail-once tests run besides Jupyter Book 1.x (a pip package of the test extra):
# mystmd, from the npm registry, pinned, into .engines/ (git-ignored). Where npm is missing or cannot install,
# tests/test_fail_once.py says why and skips the mystmd case only.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
MYSTMD=1.8.3
if [ -x .engines/node_modules/.bin/myst ] && [ "$(.engines/node_modules/.bin/myst --version 2>/dev/null)" = "v$MYSTMD" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "setup-engines: npm missing: the mystmd fail-once test cannot run" >&2
  exit 0
fi
mkdir -p .engines
npm install --silent --no-audit --no-fund --prefix .engines "mystmd@$MYSTMD" >/dev/null 2>&1 \
  || echo "setup-engines: could not install mystmd $MYSTMD from the npm registry" >&2
exit 0

#!/usr/bin/env bash
# Debian's chromium for the page tests (never a downloaded browser). Needs root and apt-get; where it
# cannot install, the browser tests skip and say why.
set -uo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "setup-browser: could not install chromium; browser tests will be skipped" >&2
else
  echo "setup-browser: chromium missing and not root; browser tests will be skipped" >&2
fi
exit 0

#!/usr/bin/env bash
# What the page tests need besides Python: Debian's chromium (never a downloaded browser) and npm (asv's CDN
# scripts are served in the test from the npm packages of the same versions). Needs root and apt-get for
# what is missing; where it cannot install, the browser tests say why (chromium: skipped; npm: failed).
set -uo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v npm >/dev/null 2>&1 || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || echo "setup-browser: could not install ${missing[*]}" >&2
else
  echo "setup-browser: ${missing[*]} missing and not root: the browser tests cannot run" >&2
fi
exit 0

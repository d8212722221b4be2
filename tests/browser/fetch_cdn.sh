#!/usr/bin/env bash
# The browser tests' copy of asv's CDN packages: the same fetch as scripts/fetch-asv-assets.sh (which see).
# Usage: tests/browser/fetch_cdn.sh [CACHE_DIR]   (default: $JAXCI_CDN_CACHE or ~/.cache/jaxci-cdn)
exec bash "$(dirname "$0")/../../scripts/fetch-asv-assets.sh" "$@"

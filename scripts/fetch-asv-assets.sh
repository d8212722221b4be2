#!/usr/bin/env bash
# Fetch (npm pack) and unpack the npm packages whose files asv's index.html loads from public CDNs, for
# `jaxci report --html html --offline-assets DIR` (jaxci/report/offline.py) and the browser tests. Versions are
# those asv 0.6.6's www/index.html names, except stupidtable: asv loads 1.0.1 from cdnjs, npm only has
# stupid-table-plugin (1.1.3 used: the same plugin API). Needs the npm registry once; prints the folder.
# Usage: scripts/fetch-asv-assets.sh [CACHE_DIR]   (default: $JAXCI_CDN_CACHE or ~/.cache/jaxci-cdn)
set -euo pipefail
cache="${1:-${JAXCI_CDN_CACHE:-$HOME/.cache/jaxci-cdn}}"
mkdir -p "$cache"
for spec in jquery@3.3.1 flot@0.8.3 flot-orderbars@1.0.0 stupid-table-plugin@1.1.3 blueimp-md5@2.19.0 bootstrap@3.1.1; do
  dir="$cache/$spec"
  if [ -d "$dir/package" ]; then continue; fi
  mkdir -p "$dir"
  tgz=$(cd "$dir" && npm pack --silent "$spec" | tail -n 1)
  tar -xzf "$dir/$tgz" -C "$dir"
  rm -f "$dir/$tgz"
done
echo "$cache"

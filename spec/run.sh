#!/usr/bin/env bash
# The test command (README "Run every test"; .ci/run calls it): builds moonmcp twice (plain,
# and with AddressSanitizer + UndefinedBehaviorSanitizer), lints, runs every busted spec
# (unit and integration, against the real binary) under the plain build and again under
# the sanitizer build, then runs the official MCP conformance suite for both protocol
# revisions. Ends with one line: "moonmcp: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
stage() { echo; echo "==> $*"; }
count() { # adds the counts of a "tests: N passed, N failed" line in file $1
  local line
  line=$(grep -E '^tests: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
  if [ -z "$line" ]; then
    failed=$((failed + 1))
    return
  fi
  passed=$((passed + $(echo "$line" | sed -E 's/^tests: ([0-9]+) passed.*/\1/')))
  failed=$((failed + $(echo "$line" | sed -E 's/^tests: [0-9]+ passed, ([0-9]+) failed.*/\1/')))
}
jobs=$(nproc 2>/dev/null || echo 2)
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

stage "build (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j "$jobs" >/dev/null ||
  { echo "build failed"; cmake --build build 2>&1 | tail -n 30; echo "moonmcp: 0 passed, 1 failed"; exit 1; }
stage "build (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMOONMCP_SANITIZE=ON >/dev/null &&
  cmake --build build-asan -j "$jobs" >/dev/null ||
  { echo "sanitizer build failed"; echo "moonmcp: 0 passed, 1 failed"; exit 1; }

stage "luacheck"
if luacheck -q lua spec scripts bench; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

stage "specs (plain build; leak specs run 10,000 operations of each kind)"
MOONMCP_BIN=build/moonmcp MOONMCP_LEAK_OPS=10000 ./build/moonmcp test spec 2>&1 | tee "$log/plain.txt"
count "$log/plain.txt"

stage "specs (ASan + UBSan build)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
MOONMCP_BIN=build-asan/moonmcp MOONMCP_SLOW=1 ./build-asan/moonmcp test spec/unit spec/integration 2>&1 |
  tee "$log/asan.txt"
count "$log/asan.txt"
unset ASAN_OPTIONS UBSAN_OPTIONS

stage "official MCP conformance suite"
if bash spec/conformance/run.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

echo
echo "moonmcp: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

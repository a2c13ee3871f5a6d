#!/usr/bin/env bash
# bench/park.sh — resident memory per parked call, and time to park them, over stdio.
#
# Starts `moonmcp serve --stdio bench/scripts/sleep.lua` pinned to CPU 0 with its stdin on
# a FIFO the script holds open. After start-up (a `ping` answered) it reads the server's
# VmRSS (idle), then writes N `tools/call` lines of the `sleep` tool (each sleeping
# SECONDS, long enough that none finishes during the measurement) followed by one `ping`.
# Lines are handled in order, each call running until its sleep parks it, so the ping's
# answer means every call is parked and the loop is still responsive. Then it reads
# VmRSS again and reports (parked - idle) / N, plus the time from the first line written
# to the ping's answer. Answers other than the pings (errors, early results) are counted
# and reported: there should be none. Then everything it started is killed.
#
# Usage: bench/park.sh [-n CALLS] [-s SECONDS] [-r RUNS] [--moonmcp PATH] [--keep]
# Defaults: -n 10000 -s 30 -r 5, --moonmcp build/moonmcp (or $MOONMCP).
# Needs: bash, coreutils (date +%N, mkfifo, timeout), util-linux (taskset), awk, grep.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

calls=10000 seconds=30 runs=5 keep=0
moonmcp=${MOONMCP:-$root/build/moonmcp}
server_cpu=${SERVER_CPU:-0} client_cpu=${CLIENT_CPU:-1}
wait_limit=120 # seconds allowed for start-up, and for parking

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
  case "$1" in
    -n|--calls) calls=$2; shift ;;
    -s|--seconds) seconds=$2; shift ;;
    -r|--runs) runs=$2; shift ;;
    --moonmcp) moonmcp=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "park.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

[ -x "$moonmcp" ] || { echo "park.sh: no moonmcp binary at $moonmcp (build it, or --moonmcp PATH)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/moonmcp-bench-park.XXXXXX)
pid=""
cleanup() {
  exec 3>&- 2>/dev/null || true
  if [ -n "$pid" ]; then
    # SIGKILL: on SIGTERM the server would drain, i.e. wait for the parked calls to end.
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
finish() {
  cleanup
  if [ "$keep" = 1 ]; then echo "park.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap finish EXIT
trap 'exit 130' INT TERM

die() { echo "park.sh: $*" >&2; exit 1; }

now_ns() { date +%s%N; }

rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
hwm_kb() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$1/status"; }

# Waits until the server's stdout holds the answer to ping id $1 (bounded).
wait_answer() {
  local id=$1 deadline=$(( $(date +%s) + wait_limit ))
  until grep -q "\"id\":\"$id\"" "$out"; do
    kill -0 "$pid" 2>/dev/null || die "moonmcp exited: $(tail -n 20 "$tmp/err")"
    [ "$(date +%s)" -lt "$deadline" ] || die "no answer to $id within ${wait_limit}s"
    sleep 0.005
  done
}

ping() { printf '{"jsonrpc":"2.0","id":"%s","method":"ping"}\n' "$1" >&3; }

# Calls the fixture's `heap` tool (full GC) and prints "before_kb after_kb" of the Lua heap.
heap() {
  printf '{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"heap","arguments":{}}}\n' "$1" >&3
  wait_answer "$1"
  grep "\"id\":\"$1\"" "$out" | head -n 1 |
    sed 's/.*"structuredContent":{\(.*\)}.*/\1/' |
    awk -F'[,:]' '{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1); print v["\"before_kb\""] + 0, v["\"after_kb\""] + 0 }'
}

one_run() { # run number; prints one result line
  local i=$1 t0 t1 idle parked hwm others gc_rss heap_idle heap_parked
  out=$tmp/out.$i
  rm -f "$tmp/in"; mkfifo "$tmp/in"
  taskset -c "$server_cpu" "$moonmcp" serve --stdio "$here/scripts/sleep.lua" <"$tmp/in" >"$out" 2>"$tmp/err" &
  pid=$!
  exec 3>"$tmp/in" # held open: end of input would stop the server once its calls finish
  ping start
  wait_answer start
  sleep 0.5
  idle=$(rss_kb "$pid")
  heap_idle=$(heap heap-idle)

  t0=$(now_ns)
  taskset -c "$client_cpu" awk -v n="$calls" -v s="$seconds" 'BEGIN {
    for (i = 1; i <= n; i++)
      printf "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"seconds\":%s}}}\n", i, s
  }' >&3
  ping parked
  wait_answer parked
  t1=$(now_ns)
  sleep 0.5 # let anything still in flight settle
  parked=$(rss_kb "$pid")
  hwm=$(hwm_kb "$pid")
  heap_parked=$(heap heap-parked)
  gc_rss=$(rss_kb "$pid")
  others=$(grep -vc '"id":"\(start\|parked\|heap-idle\|heap-parked\)"' "$out" || true)
  [ "$(( ($(date +%s%N) - t0) / 1000000000 ))" -lt "$seconds" ] ||
    echo "park.sh: warning: the run took longer than the sleeps (${seconds}s); raise -s" >&2
  cleanup
  # heap_* are "before_kb after_kb" of a full collection
  awk -v i="$i" -v n="$calls" -v idle="$idle" -v parked="$parked" -v hwm="$hwm" -v gc_rss="$gc_rss" \
    -v ms="$(( (t1 - t0) / 1000 ))" -v others="$others" -v hi="$heap_idle" -v hp="$heap_parked" 'BEGIN {
      split(hi, a, " "); split(hp, b, " ")
      printf "%3d %7d %8d %9d %8d %11.3f %11.3f %11.3f %11.3f %9.1f %10d\n", i, n, idle, parked, hwm,
        (parked - idle) / n, (gc_rss - idle) / n, (b[1] - a[2]) / n, (b[2] - a[2]) / n, ms / 1000, others
    }'
  if [ "$others" != 0 ]; then
    echo "park.sh: run $i: $others unexpected answers, e.g.:" >&2
    grep -v '"id":"\(start\|parked\|heap-idle\|heap-parked\)"' "$out" | head -n 3 >&2
  fi
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
  print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$1" '{ print $c }' "$tmp/results" | median; }

echo "# park bench: $runs runs of $calls sleeping calls (${seconds}s each) over stdio, server on CPU $server_cpu"
echo "# kb_call = (VmRSS parked - VmRSS idle) / calls; gc_kb_call = the same after a full GC;"
echo "# lua_kb_call / live_kb_call = growth of the Lua heap (with garbage / live after a full GC) per call"
printf '%3s %7s %8s %9s %8s %11s %11s %11s %11s %9s %10s\n' run calls idle_kb parked_kb hwm_kb kb_call \
  gc_kb_call lua_kb_call live_kb_call park_ms unexpected
: >"$tmp/results"
for i in $(seq "$runs"); do
  line=$(one_run "$i")
  echo "$line"
  echo "$line" >>"$tmp/results"
done

echo
echo "Medians of $runs runs ($calls parked calls each):"
echo
echo "| idle RSS KB | parked RSS KB | RSS KB/call | RSS KB/call after GC | Lua heap KB/call | live Lua KB/call | time to park ms | unexpected answers |"
echo "|---|---|---|---|---|---|---|---|"
printf '| %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f | %s |\n' "$(col 3)" "$(col 4)" "$(col 6)" "$(col 7)" "$(col 8)" \
  "$(col 9)" "$(col 10)" "$(awk '{s += $11} END {print s + 0}' "$tmp/results")"
echo
awk -v kb="$(col 6)" 'BEGIN { printf "Resident KB per parked call: %.2f (target <= 4: %s)\n", kb, kb <= 4 ? "met" : "missed" }'

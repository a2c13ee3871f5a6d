#!/usr/bin/env bash
# bench/elicit.sh — calls parked waiting for the client's answer (legacy-era elicitation
# over stdio): resident memory per parked call, and whether new calls are still served at
# full speed while they wait.
#
# Per run: starts `moonmcp serve --stdio scripts/elicit.lua scripts/echo.lua
# scripts/sleep.lua` pinned to CPU 0 with stdin on a FIFO the script holds open, sends an
# `initialize` declaring `capabilities: { elicitation: {} }` (over stdio the server
# remembers it) and `notifications/initialized`, then:
#   1. idle: VmRSS, the Lua heap (fixture `heap` tool, full GC), and timed batches of M
#      `tools/call` of `echo` (or `ping`, --kind) written at once, each followed by a
#      marker `ping`: time from the first line written to the marker's answer, and the
#      server's CPU time over the batch (/proc/PID/task/*/schedstat, ns) per call. A phase
#      is: one warm-up batch, BATCHES timed batches ("first"), SETTLE more calls (in
#      untimed batches), BATCHES timed batches again ("settled");
#   2. parks N calls of the `ask` tool: each sends an `elicitation/create` request on
#      stdout, which this script never answers, and parks (ask_timeout is 300 s); a marker
#      ping's answer means all N are parked (lines are handled in order);
#   3. parked: VmRSS, (parked - idle) / N KB per call (target <= 4), the Lua heap again,
#      and the same phase with the N calls parked. "first" shows the transient after
#      parking (the heap grows to a new high-water mark: page faults, GC cycles over the
#      parked calls' heap), "settled" the steady state; the idle figure is "settled".
# Checks: N elicitation/create requests were sent, every batch call answered with a
# result (no error), and no other answer came (an early result, an error). The server is
# SIGKILLed at the end of a run (on SIGTERM it would drain, i.e. wait for the parked calls).
#
# Usage: bench/elicit.sh [-n PARKED] [-m BATCH] [-b BATCHES] [-S SETTLE] [-r RUNS]
#                        [--kind echo|ping] [--moonmcp PATH] [--keep]
# Defaults: -n 10000 -m 1000 -b 5 -S 40000 -r 5 --kind echo, --moonmcp build/moonmcp (or $MOONMCP).
# Needs: bash, coreutils (date +%N, mkfifo, timeout), util-linux (taskset), awk, grep.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

parked_n=10000 batch=1000 batches=5 settle=40000 runs=5 kind=echo keep=0
moonmcp=${MOONMCP:-$root/build/moonmcp}
server_cpu=${SERVER_CPU:-0} client_cpu=${CLIENT_CPU:-1}
wait_limit=120 # seconds allowed for start-up, for parking, and for a batch

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
  case "$1" in
    -n|--parked) parked_n=$2; shift ;;
    -m|--batch) batch=$2; shift ;;
    -b|--batches) batches=$2; shift ;;
    -S|--settle) settle=$2; shift ;;
    -r|--runs) runs=$2; shift ;;
    --kind) kind=$2; shift ;;
    --moonmcp) moonmcp=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "elicit.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
case "$kind" in echo|ping) ;; *) echo "elicit.sh: --kind is echo or ping" >&2; exit 2 ;; esac
[ -x "$moonmcp" ] || { echo "elicit.sh: no moonmcp binary at $moonmcp (build it, or --moonmcp PATH)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/moonmcp-bench-elicit.XXXXXX)
pid=""
cleanup() {
  exec 3>&- 2>/dev/null || true
  if [ -n "$pid" ]; then
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
finish() {
  cleanup
  if [ "$keep" = 1 ]; then echo "elicit.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap finish EXIT
trap 'exit 130' INT TERM

die() { echo "elicit.sh: $*" >&2; exit 1; }

now_ns() { date +%s%N; }
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
# CPU time (ns) of every thread of the server, from the scheduler's own accounting.
cpu_ns() { { cat /proc/"$1"/task/*/schedstat 2>/dev/null || true; } | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
size_of() { stat -c %s "$out"; }

# Waits until the server's stdout, from byte offset $2 on, holds the answer to id "$1".
wait_answer() {
  local id=$1 off=${2:-0} deadline=$(( $(date +%s) + wait_limit ))
  until tail -c +"$(( off + 1 ))" "$out" | grep -q "\"id\":\"$id\""; do
    kill -0 "$pid" 2>/dev/null || die "moonmcp exited: $(tail -n 20 "$tmp/err")"
    [ "$(date +%s)" -lt "$deadline" ] || die "no answer to $id within ${wait_limit}s"
    sleep 0.001
  done
}

send() { printf '%s\n' "$1" >&3; }
ping() { send "{\"jsonrpc\":\"2.0\",\"id\":\"$1\",\"method\":\"ping\"}"; }

heap() { # prints "before_kb after_kb" of a full collection (fixture scripts/sleep.lua)
  local off
  off=$(size_of)
  send "{\"jsonrpc\":\"2.0\",\"id\":\"$1\",\"method\":\"tools/call\",\"params\":{\"name\":\"heap\",\"arguments\":{}}}"
  wait_answer "$1" "$off"
  tail -c +"$(( off + 1 ))" "$out" | grep "\"id\":\"$1\"" | head -n 1 |
    sed 's/.*"structuredContent":{\([^}]*\)}.*/\1/' |
    awk -F'[,:]' '{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1); print v["\"before_kb\""] + 0, v["\"after_kb\""] + 0 }'
}

# One timed batch: M calls written at once, then a marker ping. Prints "ms cpu_us_per_call ok".
one_batch() { # tag
  local tag=$1 off t0 t1 c0 c1 ok
  off=$(size_of)
  c0=$(cpu_ns "$pid")
  t0=$(now_ns)
  taskset -c "$client_cpu" awk -v m="$batch" -v tag="$tag" -v kind="$kind" 'BEGIN {
    for (i = 1; i <= m; i++)
      if (kind == "ping")
        printf "{\"jsonrpc\":\"2.0\",\"id\":\"%s-%d\",\"method\":\"ping\"}\n", tag, i
      else
        printf "{\"jsonrpc\":\"2.0\",\"id\":\"%s-%d\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hello, world\",\"n\":42,\"ok\":true}}}\n", tag, i
    printf "{\"jsonrpc\":\"2.0\",\"id\":\"%s-end\",\"method\":\"ping\"}\n", tag
  }' >&3
  wait_answer "$tag-end" "$off"
  t1=$(now_ns)
  c1=$(cpu_ns "$pid")
  if [ "$kind" = ping ]; then
    ok=$(tail -c +"$(( off + 1 ))" "$out" | grep "\"id\":\"$tag-[0-9]" | grep -c '"result":{}' || true)
  else
    ok=$(tail -c +"$(( off + 1 ))" "$out" | grep "\"id\":\"$tag-[0-9]" | grep '"structuredContent"' | grep -vc '"isError":true' || true)
  fi
  awk -v t="$(( t1 - t0 ))" -v c="$(( c1 - c0 ))" -v m="$batch" -v ok="$ok" 'BEGIN { printf "%.2f %.2f %d\n", t / 1e6, c / 1e3 / m, ok }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
  print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One phase: a warm-up batch, BATCHES timed batches ("first"), SETTLE calls in untimed
# batches, BATCHES timed batches ("settled"). Prints "first_ms first_cpu_us settled_ms
# settled_cpu_us bad_calls" (medians; bad_calls: timed calls without a good answer).
batches() { # phase
  local p=$1 k line bad=0
  : >"$tmp/batch.$p.first"; : >"$tmp/batch.$p.settled"
  one_batch "${p}w" >/dev/null
  for k in $(seq "$batches"); do
    line=$(one_batch "$p$k")
    echo "$line" >>"$tmp/batch.$p.first"
    bad=$(( bad + batch - $(echo "$line" | awk '{print $3}') ))
  done
  for k in $(seq $(( (settle + batch - 1) / batch ))); do
    one_batch "${p}s$k" >/dev/null
  done
  for k in $(seq "$batches"); do
    line=$(one_batch "${p}t$k")
    echo "$line" >>"$tmp/batch.$p.settled"
    bad=$(( bad + batch - $(echo "$line" | awk '{print $3}') ))
  done
  echo "$(awk '{print $1}' "$tmp/batch.$p.first" | median) $(awk '{print $2}' "$tmp/batch.$p.first" | median)" \
    "$(awk '{print $1}' "$tmp/batch.$p.settled" | median) $(awk '{print $2}' "$tmp/batch.$p.settled" | median) $bad"
}

one_run() { # run number; prints one result line
  local i=$1 idle parked t0 t1 heap_idle heap_parked before after sent others off
  out=$tmp/out.$i
  : >"$out"
  rm -f "$tmp/in"; mkfifo "$tmp/in"
  taskset -c "$server_cpu" "$moonmcp" serve --stdio --no-watch "$here/scripts/elicit.lua" "$here/scripts/echo.lua" \
    "$here/scripts/sleep.lua" <"$tmp/in" >"$out" 2>"$tmp/err" &
  pid=$!
  exec 3>"$tmp/in" # held open: end of input would stop the server once its calls finish
  send '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"elicit.sh","version":"1"}}}'
  wait_answer init
  send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  ping start
  wait_answer start
  sleep 0.5
  idle=$(rss_kb "$pid")
  heap_idle=$(heap heap-idle)
  before=$(batches a)

  off=$(size_of)
  t0=$(now_ns)
  taskset -c "$client_cpu" awk -v n="$parked_n" 'BEGIN {
    for (i = 1; i <= n; i++)
      printf "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"ask\",\"arguments\":{}}}\n", i
  }' >&3
  ping parked
  wait_answer parked "$off"
  t1=$(now_ns)
  sleep 0.5 # let anything still in flight settle
  parked=$(rss_kb "$pid")
  heap_parked=$(heap heap-parked)
  after=$(batches b)
  sent=$(grep -c '"method":"elicitation/create"' "$out" || true)
  # Anything else than the expected answers: batch calls, pings, heap calls, initialize.
  others=$(grep -v '"method":"elicitation/create"' "$out" |
    grep -vc '"id":"\(init\|start\|parked\|heap-idle\|heap-parked\|[ab][0-9wst]*-[0-9]*\|[ab][0-9wst]*-end\)"' || true)
  [ "$others" = 0 ] || { echo "elicit.sh: run $i: $others unexpected lines, e.g.:" >&2
    grep -v '"method":"elicitation/create"' "$out" |
      grep -v '"id":"\(init\|start\|parked\|heap-idle\|heap-parked\|[ab][0-9wst]*-[0-9]*\|[ab][0-9wst]*-end\)"' | head -n 3 >&2; }
  cleanup
  # before/after: "first_ms first_cpu settled_ms settled_cpu bad"; heap_*: "before_kb after_kb"
  awk -v i="$i" -v n="$parked_n" -v idle="$idle" -v parked="$parked" -v ms="$(( (t1 - t0) / 1000 ))" \
    -v hi="$heap_idle" -v hp="$heap_parked" -v bf="$before" -v af="$after" -v sent="$sent" -v others="$others" 'BEGIN {
      split(hi, a, " "); split(hp, b, " "); split(bf, x, " "); split(af, y, " ")
      printf "%3d %7d %8d %9d %8.3f %9.3f %8.1f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %7d %5d %6d\n", i, n, idle, parked,
        (parked - idle) / n, (b[2] - a[2]) / n, ms / 1000, x[3], x[4], y[1], y[2], y[3], y[4], sent, x[5] + y[5], others
    }'
}

echo "# elicit bench: $runs runs; $parked_n calls parked on elicitation/create over stdio;"
echo "# batches of $batch '$kind' calls (+ a marker ping): per phase a warm-up, $batches timed (first), $settle calls,"
echo "# $batches timed (settled); server on CPU $server_cpu. ms = batch wall time, cpu = server CPU µs per call;"
echo "# idle_* = settled with none parked, first_* / settled_* = with the calls parked"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%3s %7s %8s %9s %8s %9s %8s %8s %8s %8s %8s %8s %8s %7s %5s %6s\n' run parked idle_kb parked_kb kb_call \
  live_kb_call park_ms idle_ms idle_cpu first_ms first_cpu sett_ms sett_cpu sent bad others
: >"$tmp/results"
for i in $(seq "$runs"); do
  line=$(one_run "$i")
  echo "$line"
  echo "$line" >>"$tmp/results"
done
col() { awk -v c="$1" '{ print $c }' "$tmp/results" | median; }

echo
echo "Medians of $runs runs ($parked_n parked calls; batch = $batch '$kind' calls, median of $batches batches):"
echo
echo "| idle RSS KB | parked RSS KB | RSS KB/parked call | live Lua KB/call | time to park ms | none parked: batch ms | CPU µs/call | $parked_n parked, first: batch ms | CPU µs/call | settled: batch ms | CPU µs/call | elicitations sent | failed batch calls | unexpected lines |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '| %s | %s | %.2f | %.2f | %.0f | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f | %s | %s | %s |\n' "$(col 3)" "$(col 4)" "$(col 5)" \
  "$(col 6)" "$(col 7)" "$(col 8)" "$(col 9)" "$(col 10)" "$(col 11)" "$(col 12)" "$(col 13)" "$(col 14)" \
  "$(awk '{s += $15} END {print s + 0}' "$tmp/results")" "$(awk '{s += $16} END {print s + 0}' "$tmp/results")"
echo
awk -v kb="$(col 5)" 'BEGIN { printf "Resident KB per parked call: %.2f (target <= 4: %s)\n", kb, (kb <= 4) ? "met" : "missed" }'
awk -v c0="$(col 9)" -v c1="$(col 11)" -v c2="$(col 13)" 'BEGIN {
  printf "Server CPU per call with the calls parked: x%.2f just after parking, x%.2f settled (none parked: %.2f us)\n", c1 / c0, c2 / c0, c0 }'
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

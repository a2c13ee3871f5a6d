#!/usr/bin/env bash
# bench/eras.sh — what the protocol layer costs on top of the core: server CPU per request
# and requests/s over Streamable HTTP for several kinds of request, on the same binary.
#
# Variants (each one wrk load; all of them alternate, RUNS times, after one warm-up each):
#   ping      legacy `ping`: the cheapest request the host answers (transport, JSON-RPC,
#             scheduler, no tool) — the "bare core" baseline
#   legacy    legacy-era `tools/call` of `echo` (echo.sh's body; input schema {type=object})
#   modern    the same call in the 2026-07-28 era: `_meta` envelope (protocolVersion,
#             clientCapabilities) and the MCP-Protocol-Version, Mcp-Method, Mcp-Name headers
#   schema    legacy `tools/call` of `echo_schema` (scripts/schema.lua: a realistic
#             ~10-property input schema) with ~330 bytes of valid arguments
#   plain     the same arguments to `echo_plain` (same handler, no input schema):
#             schema - plain = validation cost per call
#   nowd      `legacy` against a second server started with a config file saying
#             `watchdog = false` (no count hook; handler code runs JIT-compiled):
#             legacy - nowd = the watchdog's cost per call
# The servers are `moonmcp serve --listen 127.0.0.1:0 scripts/echo.lua scripts/schema.lua`
# (plus `--config` for nowd), pinned to CPU 0; wrk (bench/echo.lua, keep-alive, --latency)
# on CPU 1. CPU per call = utime+stime of the server from /proc/PID/stat over the run ÷
# requests completed. Every variant's answer is checked once (status 200 and its body)
# before the load starts. Prints every run, a Markdown table of medians and the ratios.
#
# Usage: bench/eras.sh [-d DURATION] [-c CONNECTIONS] [-t THREADS] [-r RUNS] [-w WARMUP]
#                      [--only "ping legacy ..."] [--moonmcp PATH] [--keep]
# Defaults: -d 10s -c 32 -t 1 -r 5 -w 3s, all variants, --moonmcp build/moonmcp (or $MOONMCP).
# Needs: bash, coreutils, util-linux (taskset), awk, wrk. Loopback only. Every process it
# starts is stopped on exit; each wrk run is bounded by `timeout`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

duration=10s connections=32 threads=1 runs=5 warmup=3s keep=0
variants="ping legacy modern schema plain nowd"
moonmcp=${MOONMCP:-$root/build/moonmcp}
server_cpu=${SERVER_CPU:-0} client_cpu=${CLIENT_CPU:-1}

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
  case "$1" in
    -d|--duration) duration=$2; shift ;;
    -c|--connections) connections=$2; shift ;;
    -t|--threads) threads=$2; shift ;;
    -r|--runs) runs=$2; shift ;;
    -w|--warmup) warmup=$2; shift ;;
    --only) variants=$2; shift ;;
    --moonmcp) moonmcp=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "eras.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

for tool in wrk taskset timeout awk; do
  command -v "$tool" >/dev/null || { echo "eras.sh: $tool not found" >&2; exit 1; }
done
[ -x "$moonmcp" ] || { echo "eras.sh: no moonmcp binary at $moonmcp (build it, or --moonmcp PATH)" >&2; exit 1; }

# ---- the requests -------------------------------------------------------------------------
MODERN_META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
ECHO_ARGS='{"text":"hello, world","n":42,"ok":true}'
SCHEMA_ARGS='{"id":"api-gateway-7","email":"ops.oncall@example.com","callback":"https://hooks.example.com/deploy/42?src=mcp","at":"2026-11-30T09:15:00Z","env":"staging","replicas":3,"ratio":0.25,"dry_run":false,"owner":{"name":"Ada Lovelace","team":"PLATFORM"},"tags":["blue-green","canary","eu-west-1"]}'

body_of() {
  case "$1" in
    ping) echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' ;;
    legacy|nowd) echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":$ECHO_ARGS}}" ;;
    modern) echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":$ECHO_ARGS,$MODERN_META}}" ;;
    schema) echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo_schema\",\"arguments\":$SCHEMA_ARGS}}" ;;
    plain) echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo_plain\",\"arguments\":$SCHEMA_ARGS}}" ;;
    *) echo "eras.sh: unknown variant $1" >&2; exit 2 ;;
  esac
}
headers_of() {
  case "$1" in
    modern) printf 'MCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: echo\n' ;;
    *) printf '' ;;
  esac
}
expect_of() { # a substring the answer's body must contain
  case "$1" in
    ping) echo '"result":{}' ;;
    legacy|nowd|modern) echo 'hello, world' ;;
    schema|plain) echo 'Ada Lovelace' ;;
  esac
}
server_of() { case "$1" in nowd) echo nowd ;; *) echo wd ;; esac; }

for v in $variants; do body_of "$v" >/dev/null; done

# ---- processes ------------------------------------------------------------------------------
tmp=$(mktemp -d /tmp/moonmcp-bench-eras.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [ "$keep" = 1 ]; then echo "eras.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "eras.sh: $*" >&2; exit 1; }

seconds() { case "$1" in *m) echo $(( ${1%m} * 60 ));; *s) echo "${1%s}";; *) echo "$1";; esac; }

cpu_ticks() { # "utime stime" of a process
  awk '{ line = $0; sub(/^.*\) /, "", line); split(line, f, " "); print f[12], f[13] }' "/proc/$1/stat"
}
hz=$(getconf CLK_TCK)

# One POST with Connection: close over bash's /dev/tcp; prints the answer.
post_once() { # port body headers
  local port=$1 body=$2 hdrs=$3
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  {
    printf 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\n' "$port"
    printf 'Accept: application/json, text/event-stream\r\n'
    [ -z "$hdrs" ] || printf '%s\n' "$hdrs" | sed 's/$/\r/'
    printf 'Content-Length: %d\r\nConnection: close\r\n\r\n%s' "${#body}" "$body"
  } >&3
  timeout 5 cat <&3 || true
  exec 3<&-
}

check_answer() { # variant
  local v=$1 out port
  port=$(port_of "$(server_of "$v")")
  out=$(post_once "$port" "$(body_of "$v")" "$(headers_of "$v")" | tr -d '\r')
  case "$out" in
    "HTTP/1.1 200"*"$(expect_of "$v")"*) ;;
    *) die "variant $v: unexpected answer:
$out" ;;
  esac
  case "$out" in *'"isError":true'*|*'"error":'*) die "variant $v answered with an error: $out" ;; esac
}

declare -A srv_pid srv_port
start_server() { # wd|nowd
  local name=$1 args=()
  if [ "$name" = nowd ]; then
    echo 'return { watchdog = false }' >"$tmp/nowd.lua"
    args=(--config "$tmp/nowd.lua")
  fi
  taskset -c "$server_cpu" "$moonmcp" serve --listen 127.0.0.1:0 --no-watch "${args[@]}" \
    "$here/scripts/echo.lua" "$here/scripts/schema.lua" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  srv_pid[$name]=$!
  pids+=("${srv_pid[$name]}")
  local port=""
  for _ in $(seq 100); do
    kill -0 "${srv_pid[$name]}" 2>/dev/null || break
    port=$(sed -n 's/.*listening on .* port=\([0-9][0-9]*\).*/\1/p' "$tmp/$name.err" | head -n1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || die "moonmcp ($name) did not start: $(cat "$tmp/$name.err")"
  srv_port[$name]=$port
}
port_of() { echo "${srv_port[$1]}"; }

# ---- runs -----------------------------------------------------------------------------------
run_rps="" run_p50="" run_p99="" run_n="" run_cpu="" run_usr="" run_sys="" run_non2xx="" run_errs=""

wrk_run() { # variant duration
  local v=$1 dur=$2 pid port before after out limit
  pid=${srv_pid[$(server_of "$v")]}
  port=$(port_of "$(server_of "$v")")
  limit=$(( $(seconds "$dur") + 30 ))
  before=$(cpu_ticks "$pid")
  out=$(ECHO_BODY=$(body_of "$v") ECHO_HEADERS=$(headers_of "$v") \
    timeout "$limit" taskset -c "$client_cpu" wrk -t"$threads" -c"$connections" -d"$dur" --latency \
    -s "$here/echo.lua" "http://127.0.0.1:$port/mcp") || die "wrk failed on $v: $out"
  after=$(cpu_ticks "$pid")
  kill -0 "$pid" 2>/dev/null || die "the server died during the $v run"
  echo "$out" >>"$tmp/wrk-$v.log"
  eval "$(echo "$out" | awk -v hz="$hz" -v before="$before" -v after="$after" '
    function us(v) {
      if (v ~ /us$/) return v + 0
      if (v ~ /ms$/) return (v + 0) * 1000
      if (v ~ /s$/)  return (v + 0) * 1000000
      return v + 0
    }
    $1 == "50%" { p50 = us($2) }
    $1 == "99%" { p99 = us($2) }
    / requests in / { n = $1 }
    /^Requests\/sec:/ { rps = $2 }
    /Non-2xx or 3xx responses:/ { non2xx = $NF }
    /Socket errors:/ { sub(/.*Socket errors: /, ""); gsub(/,/, ""); errs = $0 }
    END {
      split(before, b, " "); split(after, a, " ")
      usr = n > 0 ? (a[1] - b[1]) * 1000000 / hz / n : 0
      sys = n > 0 ? (a[2] - b[2]) * 1000000 / hz / n : 0
      printf "run_rps=%s run_p50=%s run_p99=%s run_n=%s run_cpu=%.3f run_usr=%.3f run_sys=%.3f run_non2xx=%d run_errs=\"%s\"\n",
        rps, p50, p99, n, usr + sys, usr, sys, non2xx, errs
    }')"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
  print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# eras bench: variants [$variants], $runs runs x $duration, wrk -t$threads -c$connections, server on CPU $server_cpu, wrk on CPU $client_cpu"
echo "# moonmcp $("$moonmcp" --version 2>/dev/null | awk '{print $2}') ($moonmcp)"
need_wd=0 need_nowd=0
for v in $variants; do if [ "$(server_of "$v")" = nowd ]; then need_nowd=1; else need_wd=1; fi; done
[ "$need_wd" = 0 ] || start_server wd
[ "$need_nowd" = 0 ] || start_server nowd
for v in $variants; do check_answer "$v"; done

for v in $variants; do
  wrk_run "$v" "$warmup"
  echo "# warm-up $v: $run_rps req/s, $run_cpu us/call"
done

printf '%-7s %3s %9s %9s %8s %8s %11s %8s %8s %6s  %s\n' variant run requests req/s p50_us p99_us cpu_us/call usr_us sys_us non2xx socket_errors
for i in $(seq "$runs"); do
  for v in $variants; do
    wrk_run "$v" "$duration"
    printf '%-7s %3d %9s %9.0f %8s %8s %11s %8s %8s %6s  %s\n' "$v" "$i" "$run_n" "$run_rps" "$run_p50" "$run_p99" \
      "$run_cpu" "$run_usr" "$run_sys" "$run_non2xx" "${run_errs:-none}"
    echo "$run_rps $run_p50 $run_p99 $run_cpu $run_non2xx $run_usr $run_sys" >>"$tmp/runs-$v"
  done
done

declare -A m_rps m_cpu
echo
echo "Medians of $runs runs ($duration each, wrk -t$threads -c$connections, keep-alive):"
echo
printf '| %-7s | %8s | %8s | %8s | %11s | %8s | %8s | %10s | %6s |\n' variant "req/s" "p50 us" "p99 us" "CPU us/call" "user us" "sys us" "min CPU us" non2xx
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' --------- ---------- ---------- ---------- ------------- ---------- ---------- ------------ --------
for v in $variants; do
  f="$tmp/runs-$v"
  m_rps[$v]=$(awk '{print $1}' "$f" | median)
  m_cpu[$v]=$(awk '{print $4}' "$f" | median)
  printf '| %-7s | %8.0f | %8.0f | %8.0f | %11.2f | %8.2f | %8.2f | %10.2f | %6d |\n' "$v" "${m_rps[$v]}" \
    "$(awk '{print $2}' "$f" | median)" "$(awk '{print $3}' "$f" | median)" "${m_cpu[$v]}" \
    "$(awk '{print $6}' "$f" | median)" "$(awk '{print $7}' "$f" | median)" \
    "$(awk '{print $4}' "$f" | sort -g | head -n 1)" "$(awk '{s += $5} END {print s + 0}' "$f")"
done
echo
echo "(min CPU us = the lowest of the runs: other load on the machine only ever adds to it)"
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
has() { case " $variants " in *" $1 "*) return 0 ;; esac; return 1; }
cmp() { # label a b: CPU difference and ratios of a against b
  awk -v l="$1" -v a="${m_cpu[$2]}" -v b="${m_cpu[$3]}" -v ra="${m_rps[$2]}" -v rb="${m_rps[$3]}" -v an="$2" -v bn="$3" 'BEGIN {
    printf "%-34s %s - %s = %+6.2f us CPU/call (x%.3f);  req/s %s/%s = %.3f\n", l, an, bn, a - b, a / b, an, bn, ra / rb }'
}
if has legacy && has ping; then cmp "protocol layer over the bare core:" legacy ping; fi
if has modern && has legacy; then cmp "modern era vs legacy:" modern legacy; fi
if has schema && has plain; then cmp "argument validation:" schema plain; fi
if has plain && has legacy; then cmp "bigger arguments, no schema:" plain legacy; fi
if has legacy && has nowd; then cmp "watchdog (default on) vs off:" legacy nowd; fi
target() { # variant base: a's throughput as a share of b's (the issue: the protocol layer costs <= 20 %)
  if has "$1" && has "$2"; then
    awk -v v="$1" -v w="$2" -v a="${m_rps[$1]}" -v b="${m_rps[$2]}" -v ca="${m_cpu[$1]}" -v cb="${m_cpu[$2]}" 'BEGIN {
      printf "target: %s throughput >= 80%% of %s'\''s: %.1f%% (%s); as implied by CPU per call: %.1f%% (%s)\n", v, w, 100 * a / b,
        (a / b >= 0.8) ? "met" : "missed", 100 * cb / ca, (cb / ca >= 0.8) ? "met" : "missed" }'
  fi
}
target modern legacy
target schema plain
for s in wd nowd; do
  f="$tmp/$s.err"
  [ -f "$f" ] || continue
  if grep -qv 'level=info' "$f"; then
    echo
    echo "moonmcp ($s) logged (non-info lines):"
    grep -v 'level=info' "$f" | head -20
  fi
done

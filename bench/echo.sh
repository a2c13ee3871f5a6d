#!/usr/bin/env bash
# bench/echo.sh — server CPU per MCP `tools/call` of an echo tool over Streamable HTTP,
# moonmcp against nginx + lua-nginx-module + cjson answering the same JSON-RPC echo
# ("the practical ceiling of this architecture on this machine").
#
# Both servers run one process/worker pinned to CPU 0 (taskset); wrk runs pinned to CPU 1,
# keep-alive, POSTing bench/echo.lua's body. For every run it reports requests/s, p50/p99
# latency (wrk --latency) and the server's CPU time (utime+stime from /proc/PID/stat,
# before and after the run) divided by the number of requests wrk completed. The two
# sides are run alternately, RUNS times each, after one warm-up run each; the table shows
# the medians and the ratio moonmcp/nginx of CPU µs per call.
#
# Usage: bench/echo.sh [-d DURATION] [-c CONNECTIONS] [-t THREADS] [-r RUNS] [-w WARMUP]
#                      [--moonmcp PATH] [--only moonmcp|nginx] [--keep]
# Defaults: -d 10s -c 32 -t 1 -r 5 -w 3s, --moonmcp build/moonmcp (or $MOONMCP).
# Needs: bash, coreutils (taskset is util-linux), awk, wrk, nginx, libnginx-mod-http-lua
# (+ libnginx-mod-http-ndk, lua-cjson, lua-resty-core). Loopback only. Every process it
# starts is stopped on exit; each wrk run is bounded by `timeout`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

duration=10s connections=32 threads=1 runs=5 warmup=3s only="" keep=0
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
    --moonmcp) moonmcp=$2; shift ;;
    --only) only=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "echo.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

# Set by wrk_run and the summary (through eval).
run_rps="" run_p50="" run_p99="" run_n="" run_cpu="" run_usr="" run_sys="" run_non2xx="" run_errs=""
cpu_moonmcp="" cpu_nginx=""

# The request body: one place, handed to wrk through the environment (bench/echo.lua).
export ECHO_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world","n":42,"ok":true}}}'

for tool in wrk taskset timeout awk; do
  command -v "$tool" >/dev/null || { echo "echo.sh: $tool not found" >&2; exit 1; }
done
[ "$only" = nginx ] || [ -x "$moonmcp" ] || { echo "echo.sh: no moonmcp binary at $moonmcp (build it, or --moonmcp PATH)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/moonmcp-bench-echo.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [ "$keep" = 1 ]; then echo "echo.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "echo.sh: $*" >&2; exit 1; }

# Seconds of a wrk duration (10s, 1m, 500ms is not accepted by wrk either).
seconds() { case "$1" in *m) echo $(( ${1%m} * 60 ));; *s) echo "${1%s}";; *) echo "$1";; esac; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A port below the ephemeral range (so no outgoing connection holds it) with no listener.
free_port() {
  local p low
  low=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$low" -gt 11000 ] || low=32768
  for _ in $(seq 100); do
    p=$(( 10000 + RANDOM % (low - 10000) ))
    port_busy "$p" || { echo "$p"; return; }
  done
  die "no free port found"
}

wait_port() { # port pid
  for _ in $(seq 100); do
    kill -0 "$2" 2>/dev/null || return 1
    port_busy "$1" && return 0
    sleep 0.1
  done
  return 1
}

# CPU clock ticks "utime stime" of a process and its direct children (nginx's worker).
cpu_ticks() {
  local pid=$1
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$pid" '
    { pid = $1; line = $0; sub(/^.*\) /, "", line); split(line, f, " ")
      # after "pid (comm) ": f[1]=state f[2]=ppid ... f[12]=utime f[13]=stime
      if (pid == root || f[2] == root) { u += f[12]; s += f[13] } }
    END { print u + 0, s + 0 }'
}
hz=$(getconf CLK_TCK)

# One POST of the body with Connection: close, over bash's /dev/tcp. Prints the answer.
post_once() {
  local port=$1
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
    "$port" "${#ECHO_BODY}" "$ECHO_BODY" >&3
  timeout 5 cat <&3 || true
  exec 3<&-
}

check_answer() { # name port
  local out
  out=$(post_once "$2" | tr -d '\r')
  case "$out" in
    "HTTP/1.1 200"*'"structuredContent"'*'hello, world'*) ;;
    *) die "$1 did not answer the echo call as expected:
$out" ;;
  esac
  case "$out" in *'"isError":true'*) die "$1 answered with isError: $out" ;; esac
}

start_moonmcp() {
  taskset -c "$server_cpu" "$moonmcp" serve --listen 127.0.0.1:0 "$here/scripts/echo.lua" \
    >"$tmp/moonmcp.out" 2>"$tmp/moonmcp.err" &
  mm_pid=$!
  pids+=("$mm_pid")
  mm_port=""
  for _ in $(seq 100); do
    kill -0 "$mm_pid" 2>/dev/null || break
    mm_port=$(sed -n 's/.*listening on .* port=\([0-9][0-9]*\).*/\1/p' "$tmp/moonmcp.err" | head -n1)
    [ -n "$mm_port" ] && break
    sleep 0.1
  done
  [ -n "$mm_port" ] || die "moonmcp did not start: $(cat "$tmp/moonmcp.err")"
  check_answer moonmcp "$mm_port"
}

find_module() {
  local d
  for d in /usr/lib/nginx/modules /usr/share/nginx/modules /usr/lib64/nginx/modules; do
    [ -f "$d/$1" ] && { echo "$d/$1"; return; }
  done
  die "nginx module $1 not found (apt-get install libnginx-mod-http-lua)"
}

start_nginx() {
  local attempt
  for attempt in 1 2 3; do
    start_nginx_once && return 0
    grep -q 'Address already in use' "$tmp/nginx/stdout" "$tmp/nginx/error.log" 2>/dev/null ||
      die "nginx did not start: $(cat "$tmp/nginx/stdout" "$tmp/nginx/error.log" 2>/dev/null)"
    echo "# nginx: port $ng_port taken, retrying ($attempt)" >&2
  done
  die "nginx did not start: $(cat "$tmp/nginx/stdout" "$tmp/nginx/error.log" 2>/dev/null)"
}

start_nginx_once() {
  command -v nginx >/dev/null || die "nginx not found (apt-get install nginx libnginx-mod-http-lua)"
  ng_port=$(free_port)
  rm -rf "$tmp/nginx"
  mkdir -p "$tmp/nginx"
  local user_line=""
  [ "$(id -u)" = 0 ] && user_line="user root;"
  cat >"$tmp/nginx/nginx.conf" <<EOF
# Generated by bench/echo.sh
$user_line
daemon off;
master_process on;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
load_module $(find_module ndk_http_module.so);
load_module $(find_module ngx_http_lua_module.so);

events {
  worker_connections 4096;
}

http {
  access_log off;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  client_body_buffer_size 64k;
  client_max_body_size 4m;
  keepalive_requests 100000000;
  keepalive_timeout 75s;
  lua_package_path "/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;;";
  lua_package_cpath "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;;";
  init_by_lua_block {
    require "cjson"
  }

  server {
    listen 127.0.0.1:$ng_port;
    location = /mcp {
      content_by_lua_block {
        local cjson = require "cjson"
        ngx.req.read_body()
        local body = ngx.req.get_body_data()
        local ok, msg = pcall(cjson.decode, body or "")
        if not ok or type(msg) ~= "table" or msg.method ~= "tools/call" or type(msg.params) ~= "table" then
          ngx.status = 400
          ngx.header["Content-Type"] = "application/json"
          ngx.print('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad request"}}')
          return
        end
        local args = msg.params.arguments or {}
        local out = cjson.encode({
          jsonrpc = "2.0",
          id = msg.id,
          result = { content = { { type = "text", text = cjson.encode(args) } }, structuredContent = args },
        })
        ngx.header["Content-Type"] = "application/json"
        ngx.header["Content-Length"] = #out
        ngx.print(out)
      }
    }
  }
}
EOF
  taskset -c "$server_cpu" nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" \
    >"$tmp/nginx/stdout" 2>&1 &
  ng_pid=$!
  pids+=("$ng_pid")
  if ! wait_port "$ng_port" "$ng_pid"; then
    kill "$ng_pid" 2>/dev/null || true
    wait "$ng_pid" 2>/dev/null || true
    return 1
  fi
  check_answer nginx "$ng_port"
}

# One wrk run against a port; sets the run_* variables (µs for latencies).
wrk_run() { # name pid port duration
  local name=$1 pid=$2 port=$3 dur=$4 before after out limit
  limit=$(( $(seconds "$dur") + 30 ))
  before=$(cpu_ticks "$pid")
  out=$(timeout "$limit" taskset -c "$client_cpu" wrk -t"$threads" -c"$connections" -d"$dur" --latency \
    -s "$here/echo.lua" "http://127.0.0.1:$port/mcp") || die "wrk failed against $name: $out"
  after=$(cpu_ticks "$pid")
  kill -0 "$pid" 2>/dev/null || die "$name died during the run"
  echo "$out" >>"$tmp/wrk-$name.log"
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

sides=()
[ "$only" = nginx ] || sides+=(moonmcp)
[ "$only" = moonmcp ] || sides+=(nginx)

echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# echo bench: $runs runs x $duration, wrk -t$threads -c$connections, server on CPU $server_cpu, wrk on CPU $client_cpu"
for side in "${sides[@]}"; do
  case "$side" in
    moonmcp) start_moonmcp; echo "# moonmcp $("$moonmcp" --version 2>/dev/null | awk '{print $2}') pid $mm_pid port $mm_port" ;;
    nginx) start_nginx; echo "# $(nginx -v 2>&1 | sed 's/^nginx version: //') + lua-nginx-module, master pid $ng_pid port $ng_port" ;;
  esac
done

side_pid() { case "$1" in moonmcp) echo "$mm_pid" ;; nginx) echo "$ng_pid" ;; esac; }
side_port() { case "$1" in moonmcp) echo "$mm_port" ;; nginx) echo "$ng_port" ;; esac; }

for side in "${sides[@]}"; do
  wrk_run "$side" "$(side_pid "$side")" "$(side_port "$side")" "$warmup"
  echo "# warm-up $side: $run_rps req/s, $run_cpu us/call"
done

printf '%-8s %3s %9s %9s %8s %8s %11s %8s %8s %6s  %s\n' side run requests req/s p50_us p99_us cpu_us/call usr_us sys_us non2xx socket_errors
for i in $(seq "$runs"); do
  for side in "${sides[@]}"; do
    wrk_run "$side" "$(side_pid "$side")" "$(side_port "$side")" "$duration"
    printf '%-8s %3d %9s %9.0f %8s %8s %11s %8s %8s %6s  %s\n' "$side" "$i" "$run_n" "$run_rps" "$run_p50" "$run_p99" \
      "$run_cpu" "$run_usr" "$run_sys" "$run_non2xx" "${run_errs:-none}"
    echo "$run_rps $run_p50 $run_p99 $run_cpu $run_non2xx $run_usr $run_sys" >>"$tmp/runs-$side"
  done
done

echo
echo "Medians of $runs runs ($duration each, wrk -t$threads -c$connections, keep-alive):"
echo
printf '| %-8s | %8s | %8s | %8s | %11s | %8s | %8s | %11s | %11s |\n' server "req/s" "p50 us" "p99 us" "CPU us/call" "user us" "sys us" "min CPU us" "non-2xx sum"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---------- ---------- ---------- ---------- ------------- ---------- ---------- ------------- -------------
for side in "${sides[@]}"; do
  f="$tmp/runs-$side"
  m_rps=$(awk '{print $1}' "$f" | median)
  m_p50=$(awk '{print $2}' "$f" | median)
  m_p99=$(awk '{print $3}' "$f" | median)
  m_cpu=$(awk '{print $4}' "$f" | median)
  s_non=$(awk '{s += $5} END {print s + 0}' "$f")
  m_usr=$(awk '{print $6}' "$f" | median)
  m_sys=$(awk '{print $7}' "$f" | median)
  min_cpu=$(awk '{print $4}' "$f" | sort -g | head -n 1)
  eval "cpu_$side=$m_cpu"
  printf '| %-8s | %8.0f | %8.0f | %8.0f | %11.2f | %8.2f | %8.2f | %11.2f | %11d |\n' "$side" "$m_rps" "$m_p50" "$m_p99" "$m_cpu" \
    "$m_usr" "$m_sys" "$min_cpu" "$s_non"
done
echo
echo "(min CPU us = the lowest of the runs: other load on the machine only ever adds to it)"
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ${#sides[@]} = 2 ]; then
  echo
  awk -v a="$cpu_moonmcp" -v b="$cpu_nginx" 'BEGIN { printf "CPU per call, moonmcp / nginx: %.2f (target <= 1.25: %s)\n", a / b, a / b <= 1.25 ? "met" : "missed" }'
  for side in moonmcp nginx; do awk '{print $4}' "$tmp/runs-$side" | sort -g | head -n 1; done | paste -sd' ' |
    awk '{ printf "ratio of the minima: %.2f\n", $1 / $2 }'
fi
if grep -q . "$tmp/moonmcp.err" 2>/dev/null && grep -qv 'level=info' "$tmp/moonmcp.err"; then
  echo
  echo "moonmcp logged (non-info lines):"
  grep -v 'level=info' "$tmp/moonmcp.err" | head -20
fi

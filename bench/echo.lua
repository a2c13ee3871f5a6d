-- wrk script for bench/echo.sh: one MCP `tools/call` of the `echo` tool per request,
-- POST /mcp over keep-alive connections, with the headers Streamable HTTP requires.
--
--   wrk -t1 -c32 -d10s --latency -s bench/echo.lua http://127.0.0.1:PORT/mcp
--
-- The body is the same for every request (a fixed id is fine: each HTTP request is its
-- own exchange); echo.sh hands its body over in ECHO_BODY, the default below is the same.
-- No response() callback: it would make wrk parse every answer in Lua and slow the
-- client down; echo.sh checks one answer's body before it starts the load, and wrk's
-- "Non-2xx or 3xx responses" line catches failing statuses.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = os.getenv("ECHO_BODY")
  or '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
    .. '"arguments":{"text":"hello, world","n":42,"ok":true}}}'

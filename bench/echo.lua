-- wrk script for bench/echo.sh and bench/eras.sh: one MCP request per HTTP request
-- (by default a `tools/call` of the `echo` tool), POST /mcp over keep-alive connections,
-- with the headers Streamable HTTP requires.
--
--   wrk -t1 -c32 -d10s --latency -s bench/echo.lua http://127.0.0.1:PORT/mcp
--
-- The body is the same for every request (a fixed id is fine: each HTTP request is its
-- own exchange); the benches hand their body over in ECHO_BODY, the default below is the
-- same as echo.sh's. ECHO_HEADERS adds headers, one "Name: value" per line (eras.sh uses
-- it for the modern era's MCP-Protocol-Version, Mcp-Method and Mcp-Name).
-- No response() callback: it would make wrk parse every answer in Lua and slow the
-- client down; the benches check one answer's body before they start the load, and wrk's
-- "Non-2xx or 3xx responses" line catches failing statuses.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
for line in (os.getenv("ECHO_HEADERS") or ""):gmatch("[^\n]+") do
  local name, value = line:match("^%s*([^:%s]+)%s*:%s*(.-)%s*$")
  if name then
    wrk.headers[name] = value
  end
end
wrk.body = os.getenv("ECHO_BODY")
  or '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
    .. '"arguments":{"text":"hello, world","n":42,"ok":true}}}'

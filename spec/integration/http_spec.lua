-- The real binary over HTTP/1.1: keep-alive, pipelining, chunked bodies, limits and the
-- documented answer to every kind of bad input — and the server keeps serving.
local server = require "helpers.server"
local http = require "helpers.http"
local json = require "moonmcp.json"

local function tool(name, args, id)
  return json.encode { jsonrpc = "2.0", id = id or 1, method = "tools/call",
    params = { name = name, arguments = args } }
end

describe("HTTP transport", function()
  local s
  setup(function()
    s = server.http { "spec/fixtures/scripts" }
  end)
  teardown(function()
    s:stop()
  end)

  local function still_serving()
    local _, msg = http.mcp(s.port, { jsonrpc = "2.0", id = "alive", method = "ping" })
    assert.same("alive", msg.id)
  end

  it("answers a tools/call with application/json", function()
    local res = assert(http.post(s.port, tool("echo", { a = 1 })))
    assert.same(200, res.status)
    assert.matches("^application/json", res.headers["content-type"])
    assert.same({ a = 1 }, json.decode(res.body).result.structuredContent)
  end)

  it("keeps the connection alive across requests", function()
    local c = http.connect(s.port)
    for i = 1, 3 do
      c:send_raw(http.format("POST", "/mcp", nil, tool("echo", { i = i }, i)))
      local res = assert(c:read_response())
      assert.same(i, json.decode(res.body).id)
    end
    c:close()
  end)

  it("answers pipelined requests in order, even when the first is slower", function()
    local c = http.connect(s.port)
    c:send_raw(http.format("POST", "/mcp", nil, tool("sleep", { seconds = 0.2 }, 1)) ..
      http.format("POST", "/mcp", nil, json.encode { jsonrpc = "2.0", id = 2, method = "ping" }))
    assert.same(1, json.decode(assert(c:read_response()).body).id)
    assert.same(2, json.decode(assert(c:read_response()).body).id)
    c:close()
  end)

  -- answers are written once per loop iteration, batched: many in one read still go out
  -- complete and in order, and "Connection: close" closes only after its answer
  it("answers 100 requests pipelined in one write in order, then honours Connection: close", function()
    local c = http.connect(s.port)
    local batch = {}
    for i = 1, 100 do
      batch[i] = http.format("POST", "/mcp", i == 100 and { Connection = "close" } or nil,
        json.encode { jsonrpc = "2.0", id = i, method = "ping" })
    end
    c:send_raw(table.concat(batch))
    for i = 1, 100 do
      local res = assert(c:read_response())
      assert.same(200, res.status)
      assert.same(i, json.decode(res.body).id)
    end
    local res, err = c:read_response()
    assert.is_nil(res)
    assert.truthy(err)
    c:close()
  end)

  it("reads a chunked request body", function()
    local body = json.encode { jsonrpc = "2.0", id = "chunked", method = "ping" }
    local c = http.connect(s.port)
    c:send_raw("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" ..
      "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" ..
      ("%x\r\n%s\r\n"):format(10, body:sub(1, 10)) .. ("%x\r\n%s\r\n"):format(#body - 10, body:sub(11)) .. "0\r\n\r\n")
    local res = assert(c:read_response())
    assert.same("chunked", json.decode(res.body).id)
    c:close()
  end)

  it("answers malformed JSON with 400 and -32700", function()
    local res = assert(http.post(s.port, "{nope"))
    assert.same(400, res.status)
    assert.same(-32700, json.decode(res.body).error.code)
    assert.matches("at offset 1", json.decode(res.body).error.message) -- decoded from bytes
    still_serving()
  end)

  it("answers a JSON array body with 400 and -32600", function()
    local res = assert(http.post(s.port, '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'))
    assert.same(400, res.status)
    assert.same(-32600, json.decode(res.body).error.code)
  end)

  it("answers a wrong content type with 415", function()
    local res = assert(http.post(s.port, "{}", { ["Content-Type"] = "text/plain" }))
    assert.same(415, res.status)
    still_serving()
  end)

  it("answers a missing Accept with 406", function()
    local res = assert(http.post(s.port, json.encode { jsonrpc = "2.0", id = 1, method = "ping" },
      { Accept = "text/html" }))
    assert.same(406, res.status)
  end)

  it("answers an oversize body with 413 before reading it", function()
    local c = http.connect(s.port)
    c:send_raw("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" ..
      "Content-Length: 999999999\r\n\r\n")
    assert.same(413, assert(c:read_response()).status)
    c:close()
    still_serving()
  end)

  it("answers a POST without a length with 411", function()
    local c = http.connect(s.port)
    c:send_raw("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\r\n")
    assert.same(411, assert(c:read_response()).status)
    c:close()
  end)

  it("answers oversize headers with 431", function()
    local c = http.connect(s.port)
    c:send_raw("POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Big: " .. ("a"):rep(20000) .. "\r\n\r\n")
    assert.same(431, assert(c:read_response()).status)
    c:close()
  end)

  it("answers too many headers with 431", function()
    local headers = {}
    for i = 1, 100 do
      headers[i] = "X-H" .. i .. ": v\r\n"
    end
    local c = http.connect(s.port)
    c:send_raw("POST /mcp HTTP/1.1\r\nHost: localhost\r\n" .. table.concat(headers) .. "\r\n")
    assert.same(431, assert(c:read_response()).status)
    c:close()
  end)

  it("answers other paths with 404 and other methods with 405", function()
    assert.same(404, assert(http.request(s.port, "POST", nil, "{}", "/other")).status)
    assert.same(405, assert(http.request(s.port, "PUT", nil, "{}")).status)
  end)

  it("answers a foreign Host or Origin with 403", function()
    assert.same(403, assert(http.post(s.port, "{}", { Host = "evil.example.com" })).status)
    assert.same(403, assert(http.post(s.port, "{}", { Origin = "http://evil.example.com" })).status)
    assert.same(200, assert(http.mcp(s.port, { jsonrpc = "2.0", id = 1, method = "ping" },
      { Origin = "http://localhost:3000" })).status)
  end)

  it("answers malformed HTTP with 400", function()
    local c = http.connect(s.port)
    c:send_raw("GARBAGE\r\n\r\n")
    assert.same(400, assert(c:read_response()).status)
    c:close()
    still_serving()
  end)

  it("survives a truncated request and serves others", function()
    local c = http.connect(s.port)
    c:send_raw("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" ..
      "Content-Length: 100\r\n\r\n{")
    c:close()
    still_serving()
  end)

  it("turns a handler error into an isError result and keeps serving", function()
    local _, msg = http.mcp(s.port, { jsonrpc = "2.0", id = 1, method = "tools/call", params = { name = "raise" } })
    assert.is_true(msg.result.isError)
    assert.same("something broke", msg.result.content[1].text)
    still_serving()
  end)

  it("answers notifications with 202 and no body", function()
    local res = assert(http.post(s.port, json.encode { jsonrpc = "2.0", method = "notifications/initialized" }))
    assert.same(202, res.status)
    assert.same("", res.body)
  end)

  it("answers an unsupported MCP-Protocol-Version with 400", function()
    local res = assert(http.post(s.port, json.encode { jsonrpc = "2.0", id = 1, method = "ping" },
      { ["MCP-Protocol-Version"] = "1999-01-01" }))
    assert.same(400, res.status)
  end)

  it("cancels the call of a client that disconnects", function()
    local c = http.connect(s.port)
    c:send_raw(http.format("POST", "/mcp", nil, tool("sleep_logged", { seconds = 5 })))
    assert(s:wait_log("sleep_logged started", 5))
    c:close()
    assert(s:wait_log("sleep_logged cancelled", 5))
    still_serving()
  end)
end)

describe("a client that stops reading", function()
  it("is dropped once 16 MiB wait for it, and the server keeps serving", function()
    local s = server.http { "spec/fixtures/scripts" }
    local get = http.connect(s.port)
    get:send_raw(http.format("GET", "/mcp", { ["Content-Type"] = false }))
    assert.same(200, assert(get:read_head()).status)
    -- never read that stream again: 400,000 notifications (~30 MB) pile up for it
    local _, msg = http.mcp(s.port, { jsonrpc = "2.0", id = 1, method = "tools/call",
      params = { name = "flood", arguments = { count = 400000 } } })
    assert.same("flooded", msg.result.content[1].text)
    local rest = assert(get.sock:read_all()) -- what the kernel still held, then the close
    assert.is_true(#rest < 400000 * 60, "the whole flood was delivered") -- each event is ~85 bytes
    assert.is_nil(rest:find("0\r\n\r\n$"), "the stream ended cleanly instead of being dropped")
    local _, pong = http.mcp(s.port, { jsonrpc = "2.0", id = "after", method = "ping" })
    assert.same("after", pong.id)
    get:close()
    s:stop()
  end)
end)

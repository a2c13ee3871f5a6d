-- 1,000 concurrent calls to a tool that sleeps 1 s finish in well under 2 s in total, over
-- HTTP and over stdio, and while they are parked, ping answers at once.
local server = require "helpers.server"
local http = require "helpers.http"
local json = require "moonmcp.json"
local core = require "moonmcp.core"

local N = 1000

describe("concurrency", function()
  it("parks 1,000 sleeping calls over stdio and still answers ping at once", function()
    local p = server.stdio { "spec/fixtures/scripts" }
    local t0 = core.clock()
    for i = 1, N do
      p:send { jsonrpc = "2.0", id = i, method = "tools/call",
        params = { name = "sleep", arguments = { seconds = 1 } } }
    end
    p:send { jsonrpc = "2.0", id = "ping", method = "ping" }
    local first = p:recv()
    assert.same("ping", first.id)
    assert.is_true(core.clock() - t0 < 0.9, "ping waited for the sleepers")
    local seen = 0
    for _ = 1, N do
      local msg = p:recv()
      assert.same("slept 1", msg.result.content[1].text)
      seen = seen + 1
    end
    local elapsed = core.clock() - t0
    assert.same(N, seen)
    assert.is_true(elapsed < 2, ("took %.2f s"):format(elapsed))
    p:close_stdin()
    p:wait()
  end)

  it("parks 1,000 sleeping calls over HTTP and still answers ping at once", function()
    local s = server.http { "spec/fixtures/scripts" }
    local conns = {}
    local t0 = core.clock()
    for i = 1, N do
      local c = http.connect(s.port)
      c:send_raw(http.format("POST", "/mcp", nil, json.encode { jsonrpc = "2.0", id = i, method = "tools/call",
        params = { name = "sleep", arguments = { seconds = 1 } } }))
      conns[i] = c
    end
    local t_ping = core.clock()
    local _, pong = http.mcp(s.port, { jsonrpc = "2.0", id = "ping", method = "ping" })
    assert.same("ping", pong.id)
    assert.is_true(core.clock() - t_ping < 0.5, "ping waited for the sleepers")
    for i = 1, N do
      local res = assert(conns[i]:read_response())
      assert.same(i, json.decode(res.body).id)
      conns[i]:close()
    end
    local elapsed = core.clock() - t0
    assert.is_true(elapsed < 2, ("took %.2f s"):format(elapsed))
    s:stop()
  end)
end)

-- A handler that never yields cannot freeze the host (CPU budget), and a call cannot
-- outlive its deadline (a tool's own `timeout`, or the config's call_timeout).
local server = require "helpers.server"
local http = require "helpers.http"
local json = require "moonmcp.json"
local core = require "moonmcp.core"

describe("runaway calls", function()
  local s
  setup(function()
    s = server.http { "--config", "spec/fixtures/config/budgets.lua", "spec/fixtures/scripts" }
  end)
  teardown(function()
    s:stop()
  end)

  it("stop an endless loop with a clear error, and others are served again", function()
    local c = http.connect(s.port)
    c:send_raw(http.format("POST", "/mcp", nil, json.encode { jsonrpc = "2.0", id = 1, method = "tools/call",
      params = { name = "spin" } }))
    local t0 = core.clock()
    local _, pong = http.mcp(s.port, { jsonrpc = "2.0", id = "ping", method = "ping" })
    assert.same("ping", pong.id)
    assert.is_true(core.clock() - t0 < 3)
    local res = json.decode(assert(c:read_response()).body)
    c:close()
    assert.is_true(res.result.isError)
    assert.matches("cpu budget exceeded", res.result.content[1].text)
  end)

  it("end a call that sleeps past the tool's own deadline", function()
    local t0 = core.clock()
    local _, msg = http.mcp(s.port, { jsonrpc = "2.0", id = 2, method = "tools/call", params = { name = "slow" } })
    assert.is_true(msg.result.isError)
    assert.matches("deadline exceeded", msg.result.content[1].text)
    assert.is_true(core.clock() - t0 < 1)
  end)

  it("bound prompt handlers too: past call_timeout the answer is a deadline error", function()
    local _, msg = http.mcp(s.port, { jsonrpc = "2.0", id = 4, method = "prompts/get",
      params = { name = "slow_prompt" } })
    assert.same(-32603, msg.error.code)
    assert.matches("deadline exceeded", msg.error.message)
  end)

  it("end a call that sleeps past the configured call_timeout", function()
    local _, msg = http.mcp(s.port, { jsonrpc = "2.0", id = 3, method = "tools/call",
      params = { name = "sleep", arguments = { seconds = 5 } } })
    assert.is_true(msg.result.isError)
    assert.matches("deadline exceeded", msg.result.content[1].text)
  end)
end)

-- The real binary over stdio: one call per line, answers out of order, malformed lines
-- answered, exit 0 at end of input once the calls in flight have finished.
local server = require "helpers.server"

describe("stdio transport", function()
  it("answers calls out of order and exits 0 at end of input", function()
    local p = server.stdio { "spec/fixtures/scripts" }
    p:send { jsonrpc = "2.0", id = 1, method = "tools/call",
      params = { name = "sleep", arguments = { seconds = 0.3 } } }
    p:send { jsonrpc = "2.0", id = 2, method = "ping" }
    p:close_stdin()
    assert.same(2, p:recv().id)
    assert.same(1, p:recv().id)
    assert.same(0, (p:wait()))
  end)

  it("answers a malformed line with -32700 and goes on", function()
    local p = server.stdio { "spec/fixtures/scripts" }
    p:send "this is not json"
    local msg = p:recv()
    assert.same(-32700, msg.error.code)
    p:send { jsonrpc = "2.0", id = "after", method = "ping" }
    assert.same("after", p:recv().id)
    p:close_stdin()
    assert.same(0, (p:wait()))
  end)

  it("writes only protocol messages on stdout (logs go to stderr)", function()
    local p = server.stdio { "spec/fixtures/scripts" }
    p:send { jsonrpc = "2.0", id = 1, method = "tools/call", params = { name = "log_it" } }
    local msg = p:recv()
    assert.same(1, msg.id)
    p:close_stdin()
    assert.is_nil((p:recv(2)))
    p:wait()
  end)

  it("cancels a call on notifications/cancelled and sends nothing for it", function()
    local p = server.stdio { "spec/fixtures/scripts" }
    p:send { jsonrpc = "2.0", id = 7, method = "tools/call", params = { name = "sleep", arguments = { seconds = 5 } } }
    p:send { jsonrpc = "2.0", method = "notifications/cancelled",
      params = { requestId = 7, reason = "changed my mind" } }
    p:send { jsonrpc = "2.0", id = 8, method = "ping" }
    assert.same(8, p:recv().id)
    p:close_stdin()
    assert.is_nil((p:recv(2)))
    assert.same(0, (p:wait(3)))
  end)
end)

describe("start-up", function()
  it("seeds math.random per process", function()
    local draws = {}
    for i = 1, 2 do
      local p = server.stdio { "spec/fixtures/scripts" }
      p:send { jsonrpc = "2.0", id = 1, method = "tools/call", params = { name = "random_number" } }
      draws[i] = p:recv().result.structuredContent.n
      p:close_stdin()
      p:wait()
    end
    assert.are_not.equal(draws[1], draws[2])
  end)

  it("fails with file and line on a script with a syntax error", function()
    local exec = require "moonmcp.exec"
    local res = assert(exec.run { server.bin, "serve", "--stdio", "spec/fixtures/broken/syntax.lua", stdin = "" })
    assert.are_not.equal(0, res.code)
    assert.matches("spec/fixtures/broken/syntax.lua:4:", res.stderr)
  end)

  it("prints usage and exits 2 on a bad flag", function()
    local exec = require "moonmcp.exec"
    local res = assert(exec.run { server.bin, "serve", "--frobnicate" })
    assert.same(2, res.code)
    assert.matches("Usage: moonmcp", res.stderr)
  end)

  it("prints its version", function()
    local exec = require "moonmcp.exec"
    local res = assert(exec.run { server.bin, "--version" })
    assert.same(0, res.code)
    assert.matches("^moonmcp %d+%.%d+%.%d+", res.stdout)
  end)
end)

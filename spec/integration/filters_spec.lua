-- Request filters (config file) run in the request phase, may yield, reject, and add to
-- the context; a user accessor carries what they add into the call.
local server = require "helpers.server"
local http = require "helpers.http"

describe("request filters", function()
  local s
  setup(function()
    s = server.http { "--config", "spec/fixtures/config/auth.lua", "spec/fixtures/scripts" }
  end)
  teardown(function()
    s:stop()
  end)

  local function whoami(headers)
    return http.mcp(s.port, { jsonrpc = "2.0", id = 1, method = "tools/call", params = { name = "whoami" } }, headers)
  end

  it("reject a request with the status and headers the filter chose", function()
    local res, msg = whoami()
    assert.same(401, res.status)
    assert.same("Bearer", res.headers["www-authenticate"])
    assert.matches("bearer token", msg.error.message)
  end)

  it("set the principal the handler sees", function()
    local res, msg = whoami { Authorization = "Bearer good" }
    assert.same(200, res.status)
    assert.same({ name = "alice" }, msg.result.structuredContent.principal)
  end)

  it("feed user accessors", function()
    local _, msg = whoami { Authorization = "Bearer good" }
    assert.same("acme", msg.result.structuredContent.tenant)
  end)

  it("add log fields to every line the call logs", function()
    http.mcp(s.port, { jsonrpc = "2.0", id = 1, method = "tools/call", params = { name = "log_it" } },
      { Authorization = "Bearer good", ["X-Request-Id"] = "req-from-client" })
    local line = assert(s:wait_log("from the handler.*request_id=req%-from%-client", 5))
    assert.matches("tenant=acme", line)
    assert.matches("tool=log_it", line)
    assert.matches("trace_id=%x+", line)
  end)
end)

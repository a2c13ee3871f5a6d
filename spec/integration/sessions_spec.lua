-- Legacy-era sessions on Streamable HTTP: off by default (stateless), on with the config's
-- `sessions = true` — minted by initialize, scoping log level, subscriptions and the GET
-- stream, ended by DELETE.
local server = require "helpers.server"
local http = require "helpers.http"

local INIT = { jsonrpc = "2.0", id = 1, method = "initialize", params = { protocolVersion = "2025-11-25",
  capabilities = {}, clientInfo = { name = "spec", version = "1" } } }

describe("without sessions (the default)", function()
  local s
  setup(function()
    s = server.http { "spec/fixtures/scripts" }
  end)
  teardown(function()
    s:stop()
  end)

  it("initialize mints no session", function()
    local res = http.mcp(s.port, INIT)
    assert.same(200, res.status)
    assert.is_nil(res.headers["mcp-session-id"])
  end)

  it("DELETE is 405", function()
    assert.same(405, assert(http.request(s.port, "DELETE", { ["Mcp-Session-Id"] = "x" })).status)
  end)
end)

describe("with sessions", function()
  local s
  setup(function()
    local conf = os.tmpname()
    local f = assert(io.open(conf, "w"))
    f:write("return { sessions = true }")
    f:close()
    s = server.http { "--config", conf, "spec/fixtures/scripts" }
  end)
  teardown(function()
    s:stop()
  end)

  local function open_session()
    local res = http.mcp(s.port, INIT)
    local id = res.headers["mcp-session-id"]
    assert.matches("^[\33-\126]+$", id)
    return id
  end

  it("initialize answers with an Mcp-Session-Id of visible ASCII", function()
    open_session()
  end)

  it("serves requests in the session", function()
    local id = open_session()
    local res, msg = http.mcp(s.port, { jsonrpc = "2.0", id = 2, method = "ping" }, { ["Mcp-Session-Id"] = id })
    assert.same(200, res.status)
    assert.same(2, msg.id)
  end)

  it("answers an unknown session with 404", function()
    local res = http.mcp(s.port, { jsonrpc = "2.0", id = 2, method = "ping" }, { ["Mcp-Session-Id"] = "nope" })
    assert.same(404, res.status)
  end)

  it("ends a session on DELETE; the id is 404 afterwards", function()
    local id = open_session()
    assert.same(204, assert(http.request(s.port, "DELETE", { ["Mcp-Session-Id"] = id })).status)
    local res = http.mcp(s.port, { jsonrpc = "2.0", id = 3, method = "ping" }, { ["Mcp-Session-Id"] = id })
    assert.same(404, res.status)
  end)

  it("keeps logging/setLevel to its session", function()
    local a, b = open_session(), open_session()
    http.mcp(s.port, { jsonrpc = "2.0", id = 4, method = "logging/setLevel", params = { level = "info" } },
      { ["Mcp-Session-Id"] = a })
    local call = { jsonrpc = "2.0", id = 5, method = "tools/call", params = { name = "log_it" } }
    local ra = http.mcp(s.port, call, { ["Mcp-Session-Id"] = a })
    assert.same("notifications/message", ra.events[1].method)
    local rb = http.mcp(s.port, call, { ["Mcp-Session-Id"] = b })
    assert.is_nil(rb.events) -- no log level in session b: a plain JSON answer
  end)

  it("delivers a subscribed resource's updates on the session's GET stream", function()
    local id = open_session()
    local get = http.connect(s.port)
    get:send_raw(http.format("GET", "/mcp", { ["Mcp-Session-Id"] = id, ["Content-Type"] = false }))
    local head = assert(get:read_head())
    assert.same(200, head.status)
    local _, sub = http.mcp(s.port, { jsonrpc = "2.0", id = 6, method = "resources/subscribe",
      params = { uri = "test://fixture/counter" } }, { ["Mcp-Session-Id"] = id })
    assert.same({}, sub.result)
    http.mcp(s.port, { jsonrpc = "2.0", id = 7, method = "tools/call", params = { name = "fx_bump_counter" } },
      { ["Mcp-Session-Id"] = id })
    local event = assert(get:read_event())
    assert.same("notifications/resources/updated", event.method)
    assert.same("test://fixture/counter", event.params.uri)
    get:close()
  end)
end)

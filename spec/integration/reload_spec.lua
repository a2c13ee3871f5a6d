-- Hot reload against the real binary: a saved change is served, SIGHUP forces a reload,
-- --no-watch turns watching off, a broken script keeps the current tools and is
-- reported with file and line, clients hear list_changed.
local core = require "moonmcp.core"
local moonmcp = require "moonmcp"
local server = require "helpers.server"
local http = require "helpers.http"
local scratch = require "helpers.scratch"

local function tool_names(port)
  local _, msg = http.mcp(port, { jsonrpc = "2.0", id = 1, method = "tools/list" })
  local names = {}
  for _, t in ipairs(msg and msg.result and msg.result.tools or {}) do
    names[t.name] = true
  end
  return names
end

local function call(port, name)
  local _, msg = http.mcp(port, { jsonrpc = "2.0", id = 2, method = "tools/call", params = { name = name } })
  return msg and msg.result and msg.result.content[1].text
end

-- Polls fn until it returns a true value or seconds pass.
local function eventually(fn, seconds)
  local deadline = core.clock() + (seconds or 5)
  repeat
    local v = fn()
    if v then
      return v
    end
    moonmcp.sleep(0.02)
  until core.clock() > deadline
  return fn()
end

describe("hot reload (server)", function()
  local dir, s

  before_each(function()
    dir = scratch.new()
    dir:write("a.lua", scratch.tool("a", "v1"))
  end)

  after_each(function()
    if s then
      s:stop()
      s = nil
    end
    dir:destroy()
  end)

  it("serves a saved change without a restart", function()
    s = server.http { dir.root }
    dir:save("b.lua", scratch.tool("b", "new tool"))
    assert.truthy(eventually(function()
      return tool_names(s.port).b
    end))
    assert.equal("new tool", call(s.port, "b"))
  end)

  it("reloads on SIGHUP", function()
    s = server.http { "--no-watch", dir.root }
    dir:write("a.lua", scratch.tool("a", "v2"))
    assert.equal("v1", call(s.port, "a"))
    s.proc:kill("HUP")
    assert.truthy(s:wait_log("scripts reloaded.*reason=SIGHUP"))
    assert.equal("v2", call(s.port, "a"))
  end)

  it("does not watch with --no-watch", function()
    s = server.http { "--no-watch", dir.root }
    dir:write("a.lua", scratch.tool("a", "v2"))
    assert.is_nil(s:wait_log("scripts reloaded", 0.5))
    assert.equal("v1", call(s.port, "a"))
  end)

  it("keeps serving the current tools when a change is broken, and logs file and line", function()
    s = server.http { dir.root }
    dir:write("a.lua", "return {\n  tools = \n}}\n")
    local line = s:wait_log("a%.lua:3:")
    assert.truthy(line)
    assert.truthy(s:wait_log("reload failed; keeping the current scripts"))
    assert.equal("v1", call(s.port, "a"))
  end)

  it("fails no call while reloading under load", function()
    dir:write("a.lua", scratch.tool("a", "v0", { delay = 0.02 }))
    s = server.http { dir.root }
    local failed, made, running, done = 0, 0, true, 0
    for _ = 1, 4 do
      core.spawn(function()
        while running do
          local text = call(s.port, "a")
          made = made + 1
          if not (text and text:match("^v%d+$")) then
            failed = failed + 1
          end
        end
        done = done + 1
      end)
    end
    for i = 1, 20 do
      dir:save("a.lua", scratch.tool("a", "v" .. i, { delay = 0.02 }))
      assert.truthy(eventually(function()
        return call(s.port, "a") == "v" .. i
      end))
    end
    running = false
    assert.truthy(eventually(function()
      return done == 4
    end))
    assert.is_true(made > 20)
    assert.equal(0, failed)
  end)

  it("sends notifications/tools/list_changed to a stdio client", function()
    local p = server.stdio { dir.root }
    p:send { jsonrpc = "2.0", id = 1, method = "initialize", params = { protocolVersion = "2025-06-18",
      capabilities = {}, clientInfo = { name = "spec", version = "0" } } }
    assert.equal(1, p:recv().id)
    p:send { jsonrpc = "2.0", method = "notifications/initialized" }
    p:send { jsonrpc = "2.0", id = 2, method = "ping" } -- the server is up and listening
    assert.equal(2, p:recv().id)
    dir:save("a.lua", scratch.tool("a", "v1", { description = "now described differently" }))
    local msg = p:recv(5)
    assert.equal("notifications/tools/list_changed", msg and msg.method)
    p:close_stdin()
    p:wait()
  end)
end)

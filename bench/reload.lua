-- bench/reload.lua — hot reload, measured against the real binary (docs/performance.md).
--
--   ./build/moonmcp test bench/reload.lua            (MOONMCP_BIN picks the binary)
--   RELOADS=100 SAMPLES=10 WORKERS=8 ./build/moonmcp test bench/reload.lua
--
-- 1. Save-to-served latency: a new script file is saved (written to a temporary name and
--    renamed, as editors do); the time until tools/list shows its tool, polled every
--    2 ms over HTTP. SAMPLES runs; prints every sample, the median and the maximum.
-- 2. Reloads under load: WORKERS clients call a tool (it sleeps 20 ms, so calls are in
--    flight at every swap) in a loop while the script is edited RELOADS times, each edit
--    awaited in the server log ("scripts reloaded"). Prints calls made, calls failed
--    (anything but a result that is not isError), and reloads seen. Fails when a call
--    failed or a reload was missed.
-- luacheck: std +busted
local core = require "moonmcp.core"
local moonmcp = require "moonmcp"
local server = require "helpers.server"
local http = require "helpers.http"
local scratch = require "helpers.scratch"

local SAMPLES = tonumber(os.getenv("SAMPLES")) or 10
local RELOADS = tonumber(os.getenv("RELOADS")) or 100
local WORKERS = tonumber(os.getenv("WORKERS")) or 8

local function has_tool(port, name)
  local _, msg = http.mcp(port, { jsonrpc = "2.0", id = 1, method = "tools/list" })
  for _, t in ipairs(msg and msg.result and msg.result.tools or {}) do
    if t.name == name then
      return true
    end
  end
  return false
end

local function median(list)
  local s = {}
  for i, v in ipairs(list) do
    s[i] = v
  end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) / 2] or (s[n / 2] + s[n / 2 + 1]) / 2
end

local function count_lines(s, pattern)
  local n = 0
  for _, line in ipairs(s:log_lines()) do
    if line:find(pattern) then
      n = n + 1
    end
  end
  return n
end

describe("reload bench", function()
  it("serves a saved change quickly", function()
    local dir = scratch.new()
    dir:write("base.lua", scratch.tool("base", "ok"))
    local s = server.http { dir.root }
    local samples = {}
    for i = 1, SAMPLES do
      local name = "t" .. i
      local t0 = core.clock()
      dir:save(name .. ".lua", scratch.tool(name, "ok"))
      local deadline = t0 + 5
      while not has_tool(s.port, name) do
        assert(core.clock() < deadline, "the change was not served within 5 s")
        moonmcp.sleep(0.002)
      end
      samples[i] = (core.clock() - t0) * 1000
    end
    s:stop()
    dir:destroy()
    local shown = {}
    for i, v in ipairs(samples) do
      shown[i] = ("%.0f"):format(v)
    end
    print(("\nsave -> served (ms): %s\nmedian %.0f ms, max %.0f ms over %d saves"):format(table.concat(shown, " "),
      median(samples), math.max(unpack(samples)), #samples))
    assert.is_true(median(samples) < 300)
  end)

  it("drops no call while reloading under load", function()
    local dir = scratch.new()
    dir:write("work.lua", scratch.tool("work", "v0", { delay = 0.02 }))
    local s = server.http { dir.root }
    local made, failed, running = 0, 0, true
    local done = 0
    for _ = 1, WORKERS do
      core.spawn(function()
        while running do
          local _, msg = http.mcp(s.port, { jsonrpc = "2.0", id = 1, method = "tools/call",
            params = { name = "work" } })
          made = made + 1
          if not (msg and msg.result and not msg.result.isError) then
            failed = failed + 1
          end
        end
        done = done + 1
      end)
    end
    local base = count_lines(s, "scripts reloaded")
    local t0 = core.clock()
    for i = 1, RELOADS do
      dir:save("work.lua", scratch.tool("work", "v" .. i, { delay = 0.02 }))
      local deadline = core.clock() + 5
      while count_lines(s, "scripts reloaded") < base + i and core.clock() < deadline do
        moonmcp.sleep(0.005)
      end
    end
    local elapsed = core.clock() - t0
    running = false
    while done < WORKERS do
      moonmcp.sleep(0.01)
    end
    local reloads = count_lines(s, "scripts reloaded") - base
    s:stop()
    dir:destroy()
    print(("\n%d reloads in %.1f s under load from %d clients: %d calls, %d failed"):format(reloads, elapsed,
      WORKERS, made, failed))
    assert.equal(0, failed)
    assert.equal(RELOADS, reloads)
  end)
end)

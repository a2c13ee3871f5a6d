-- bench/inproc.lua — the Lua side of a call, in process (docs/performance.md).
--
--   taskset -c 0 ./build/moonmcp test bench/inproc.lua        (N, REPS, PARKED: sizes)
--   PROFILE=v taskset -c 0 ./build/moonmcp test bench/inproc.lua   (jit.p mode: v, F, l...)
--
-- No sockets and no C HTTP: it calls the HTTP transport's request hook the way http.c
-- does, with core.http_respond (and core.stdio_write) stubbed, for bench/echo.sh's echo
-- body. It reports
--   * µs per echo call: N calls in batches of 1,000 (each batch then yields so that the
--     calls run), REPS times, median and minimum;
--   * bytes allocated per echo call (1,000 calls with the GC stopped);
--   * the live Lua heap per call parked on an elicitation (legacy era, over stdio, as
--     bench/elicit.sh) and per call parked in moonmcp.sleep (as bench/park.sh), after a
--     full collection, over PARKED calls of each.
-- With PROFILE set, LuaJIT's profiler runs over the timed echo batches and its report is
-- printed at the end.
-- luacheck: std +busted
local core = require "moonmcp.core"

local N = tonumber(os.getenv("N")) or 20000
local REPS = tonumber(os.getenv("REPS")) or 7
local PARKED = tonumber(os.getenv("PARKED")) or 5000
local PROFILE = os.getenv("PROFILE")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "bench"

local ECHO = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
  .. '"arguments":{"text":"hello, world","n":42,"ok":true}}}'

-- stubs for the C side, installed before the transports capture them
core.http_respond = function()
  return true
end
core.stdio_write = function()
  return true
end

local serve = require "moonmcp.serve"
local loader = require "moonmcp.loader"
local registry = require "moonmcp.registry"
local json = require "moonmcp.json"

local function median(list)
  table.sort(list)
  local n = #list
  return n % 2 == 1 and list[(n + 1) / 2] or (list[n / 2] + list[n / 2 + 1]) / 2
end

describe("in-process bench", function()
  setup(function()
    assert(serve.configure({}))
    local scripts = here .. "/scripts/"
    registry.set(assert(loader.load({ scripts .. "echo.lua", scripts .. "elicit.lua", scripts .. "sleep.lua" })))
  end)

  it("times an echo tools/call and weighs what it allocates", function()
    local http = require "moonmcp.transport.http"
    local function batch(n)
      for i = 1, n do
        http.request(i, "POST", { host = "127.0.0.1:8080", ["user-agent"] = "wrk",
          ["content-type"] = "application/json", accept = "application/json, text/event-stream",
          ["content-length"] = tostring(#ECHO) }, ECHO, "127.0.0.1")
      end
      core.sleep(0) -- the calls run
    end
    for _ = 1, 5 do
      batch(1000)
    end
    local prof = PROFILE and require "jit.p"
    if prof then
      prof.start(PROFILE, "/tmp/moonmcp-inproc-profile.txt")
    end
    local times = {}
    for r = 1, REPS do
      collectgarbage()
      local t0 = core.clock()
      for _ = 1, N / 1000 do
        batch(1000)
      end
      times[r] = (core.clock() - t0) * 1e6 / N
    end
    if prof then
      prof.stop()
    end
    collectgarbage()
    collectgarbage("stop")
    local before = collectgarbage("count")
    batch(1000)
    local allocated = (collectgarbage("count") - before) * 1024 / 1000
    collectgarbage("restart")
    table.sort(times)
    print(("\necho tools/call: %.2f µs per call (median of %d × %d calls; min %.2f); %.0f bytes allocated per call")
      :format(median(times), REPS, N, times[1], allocated))
    if prof then
      local f = assert(io.open("/tmp/moonmcp-inproc-profile.txt"))
      print("jit.p " .. PROFILE .. ":\n" .. f:read("*a"))
      f:close()
    end
  end)

  it("weighs a parked call", function()
    local stdio = require "moonmcp.transport.stdio"
    stdio.line(json.encode { jsonrpc = "2.0", id = 0, method = "initialize",
      params = { protocolVersion = "2025-06-18", capabilities = { elicitation = {} },
        clientInfo = { name = "bench", version = "1" } } })
    core.sleep(0)
    local base = 0
    local function park(tool, n)
      for i = 1, n do
        stdio.line(('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s",'
          .. '"arguments":{"seconds":600}}}'):format(base + i, tool))
      end
      base = base + n
      core.sleep(0) -- they run until they park
    end
    for _, tool in ipairs { "ask", "sleep" } do
      park(tool, 200) -- warm-up
      collectgarbage()
      collectgarbage()
      local before = collectgarbage("count")
      park(tool, PARKED)
      collectgarbage()
      collectgarbage()
      local per_call = (collectgarbage("count") - before) * 1024 / PARKED
      print(("parked on %s: %.0f bytes of live Lua heap per call (%d calls)")
        :format(tool == "ask" and "an elicitation" or "moonmcp.sleep", per_call, PARKED))
    end
  end)
end)

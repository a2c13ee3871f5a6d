-- bench/spawn.lua — what a child coroutine costs: ctx:spawn + ctx:wait against a plain
-- function call, inside a real call of the host (docs/performance.md).
--
--   ./build/moonmcp test bench/spawn.lua
--   N=20000 REPS=9 taskset -c 0 ./build/moonmcp test bench/spawn.lua
--
-- Through moonmcp.testing's in-process client (the real protocol layer, no socket), the
-- fixture bench/scripts/spawn.lua's `loop` tool runs N iterations of a mode inside one
-- call and times them (monotonic clock and process CPU time, os.clock):
--   call    N x `local f = function() return 1 end; f()`
--   spawn   N x `local t = ctx:spawn(function() return 1 end); ctx:wait(t)`
--   fanout  N spawns first, then N waits (N children alive at once)
-- REPS timed calls per mode after one warm-up call; prints the median µs per iteration
-- (wall and CPU) and spawn - call = µs per spawn+wait. Done twice, the fixture loaded
-- afresh each time: with the watchdog on (as `moonmcp serve` runs by default: the fixture
-- is loaded with the JIT off for its code, and the VM count hook is installed), then off
-- (handler code JIT-compiled, no hook). The watchdog is left as `moonmcp test` set it.
-- luacheck: std +busted
local testing = require "moonmcp.testing"
local watchdog = require "moonmcp.watchdog"

local N = tonumber(os.getenv("N")) or 10000
local REPS = tonumber(os.getenv("REPS")) or 7
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "bench"
local FIXTURE = here .. "/scripts/spawn.lua"

local function median(list)
  local s = {}
  for i, v in ipairs(list) do
    s[i] = v
  end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) / 2] or (s[n / 2] + s[n / 2 + 1]) / 2
end

local function measure(c, mode)
  local function once()
    local result = c:call_tool("loop", { n = N, mode = mode })
    assert(result and not result.isError, "loop " .. mode .. " failed: " .. testing.text(result or {}))
    return result.structuredContent
  end
  once() -- warm-up
  local wall, cpu = {}, {}
  for i = 1, REPS do
    local r = once()
    wall[i], cpu[i] = r.wall_us / N, r.cpu_us / N
  end
  return median(wall), median(cpu), math.min(unpack(wall))
end

local function run(label)
  local c = testing.client { paths = { FIXTURE }, log_level = false }
  local rows = {}
  for _, mode in ipairs { "call", "spawn", "fanout" } do
    local w, u, m = measure(c, mode)
    rows[mode] = { w, u, m }
  end
  print(("\n%s: N = %d, median of %d calls (µs per iteration)"):format(label, N, REPS))
  print(("| mode | wall µs | CPU µs | min wall µs |\n|---|---|---|---|"))
  for _, mode in ipairs { "call", "spawn", "fanout" } do
    local r = rows[mode]
    print(("| %s | %.3f | %.3f | %.3f |"):format(mode, r[1], r[2], r[3]))
  end
  print(("spawn+wait over a plain call: %.2f µs wall, %.2f µs CPU (fanout: %.2f µs)"):format(
    rows.spawn[1] - rows.call[1], rows.spawn[2] - rows.call[2], rows.fanout[1] - rows.call[1]))
  return rows
end

describe("spawn bench", function()
  local initially = watchdog.enabled() -- moonmcp test: off since 1fb08eb, on before

  local function with_watchdog(on, label)
    if on and not watchdog.enabled() then
      watchdog.enable()
    elseif not on and watchdog.enabled() then
      watchdog.disable()
    end
    local ok, err = pcall(run, label)
    if initially and not watchdog.enabled() then
      watchdog.enable()
    elseif not initially and watchdog.enabled() then
      watchdog.disable()
    end
    assert(ok, err)
  end

  it("measures spawn + wait with the watchdog on (serve's default)", function()
    with_watchdog(true, "watchdog on (serve's default: handler JIT-off, count hook)")
  end)

  it("measures spawn + wait with the watchdog off", function()
    with_watchdog(false, "watchdog off (handler JIT-compiled, no hook)")
  end)
end)

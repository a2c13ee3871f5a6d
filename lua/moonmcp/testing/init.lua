-- moonmcp.testing — helpers for testing tool scripts with `moonmcp test` (busted inside
-- the host: specs may yield, the event loop runs). See docs/tools.md#testing.
--
--   local testing = require "moonmcp.testing"
--   local c = testing.client { paths = { "scripts/my-tools" }, era = "modern",
--                              answers = { confirm = { ok = true } } }
--   local result, info = c:call_tool("deploy", { env = "staging" })
--   testing.text(result)                       -- the text of the content blocks
--   info.progress, info.logs, info.asked       -- what the call reported and asked
--
--   local clock = testing.clock()  -- moonmcp.sleep now runs on virtual time: a sleeping
--   ...                            -- call is woken as soon as every other call is
--   clock:now()                    -- parked too, with the virtual time advanced to its
--   clock:restore()                -- deadline; restore() puts the real sleep back
--
-- The client is moonmcp.testing.client (both eras, scripted answers to elicitation,
-- sampling and roots, progress and log capture). testing.reset() forgets moonmcp.state
-- tables, so each spec can start from nothing.
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local client = require "moonmcp.testing.client"

local type, error, table_insert, table_remove = type, error, table.insert, table.remove

local _M = {}

--- A new in-process client (see moonmcp.testing.client).
function _M.client(opts)
  return client.new(opts)
end

_M.load = client.load
_M.text = client.text

--- Forgets every moonmcp.state table (or the one named).
function _M.reset(name)
  require("moonmcp.state").reset(name)
end

local Clock = {}
Clock.__index = Clock

local installed = nil

-- Wakes the earliest sleepers (all those due at the same virtual instant) once the
-- rest of the host had a turn: a real zero-length sleep lets every ready call run
-- until it parks again.
local function drive(clock)
  while #clock.sleepers > 0 and installed == clock do
    host.await(core.sleep(0))
    local first = clock.sleepers[1]
    if first and installed == clock then
      if first.at > clock.t then
        clock.t = first.at
      end
      while clock.sleepers[1] and clock.sleepers[1].at <= clock.t do
        local s = table_remove(clock.sleepers, 1)
        core.wake(s.id, true)
      end
    end
  end
  clock.driver = nil
end

--- Installs a virtual clock for moonmcp.sleep (starting at `start`, default 0).
--- Install it before loading the scripts under test, so scripts that keep a reference
--- to moonmcp.sleep get the virtual one. Returns the clock.
function _M.clock(start)
  if installed then
    installed:restore()
  end
  local moonmcp = require "moonmcp"
  local clock = setmetatable({ t = start or 0, sleepers = {}, seq = 0, real = moonmcp.sleep }, Clock)
  moonmcp.sleep = function(seconds)
    if type(seconds) ~= "number" or seconds < 0 or seconds ~= seconds or seconds == math.huge then
      error("sleep: seconds must be a finite number >= 0", 2)
    end
    local id = core.current()
    if not id then
      error("sleep: must be called inside a moonmcp call", 2)
    end
    clock.seq = clock.seq + 1
    local entry = { at = clock.t + seconds, id = id, seq = clock.seq }
    local pos = #clock.sleepers + 1
    for i, s in ipairs(clock.sleepers) do
      if s.at > entry.at then
        pos = i
        break
      end
    end
    table_insert(clock.sleepers, pos, entry)
    if not clock.driver then
      clock.driver = core.spawn(drive, clock)
    end
    local r = core.park()
    if r == core.CANCELLED then
      for i, s in ipairs(clock.sleepers) do
        if s == entry then
          table_remove(clock.sleepers, i)
          break
        end
      end
      error("cancelled", 0)
    end
    return true
  end
  installed = clock
  return clock
end

--- The virtual time (seconds since the clock started at `start`).
function Clock:now()
  return self.t
end

--- Advances the virtual time by seconds at once (sleepers due by then wake in order).
function Clock:advance(seconds)
  self.t = self.t + seconds
  while self.sleepers[1] and self.sleepers[1].at <= self.t do
    local s = table_remove(self.sleepers, 1)
    core.wake(s.id, true)
  end
end

--- Puts the real moonmcp.sleep back; calls still asleep on this clock are woken.
function Clock:restore()
  if installed ~= self then
    return
  end
  installed = nil
  require("moonmcp").sleep = self.real
  for _, s in ipairs(self.sleepers) do
    core.wake(s.id, true)
  end
  self.sleepers = {}
end

return _M

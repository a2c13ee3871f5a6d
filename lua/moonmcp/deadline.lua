-- moonmcp.deadline — per-call deadlines: when a call's time is up it is cancelled
-- (core.cancel), and the protocol layer answers "deadline exceeded".
--
--   local deadline = require "moonmcp.deadline"
--   deadline.set_default(seconds | nil)   the default for every call (nil: none)
--   local disarm = deadline.arm(call_id, seconds)   seconds nil/false: no deadline
--   disarm()                              when the call ends (idempotent)
--   deadline.expired(call_id)             the deadline's seconds once it cancelled the call
--                                         (else nil)
--   deadline.MESSAGE                      "deadline exceeded"
--
-- Wiring: moonmcp.call arms the default for every call but subscriptions/listen, and the
-- tools method arms a tool's own `timeout`; when expired(id) says so, the answer is
-- "deadline exceeded" (an isError result for a tool, -32603 otherwise) instead of the
-- silence of a client cancellation.
-- Inside the handler the deadline looks like any cancellation: the pending yield raises
-- "cancelled", so every cleanup path (pcall, context clear, child tasks) runs as usual.
-- Each armed deadline is one entry of moonmcp.timers (no coroutine); disarming removes it.
local core = require "moonmcp.core"
local timers = require "moonmcp.timers"
local calls = require "moonmcp.calls"

local type, error = type, error
local cancel = core.cancel

local _M = { MESSAGE = "deadline exceeded" }

local default = nil
local expired = {} -- call id -> true

local function check(seconds, what)
  if seconds ~= nil and seconds ~= false and
    (type(seconds) ~= "number" or seconds <= 0 or seconds ~= seconds or seconds == math.huge) then
    error(what .. ": seconds must be a finite number > 0, or nil", 3)
  end
end

function _M.set_default(seconds)
  check(seconds, "deadline.set_default")
  default = seconds or nil
end

function _M.default()
  return default
end


local function noop() end

function _M.arm(call_id, seconds)
  if type(call_id) ~= "number" then
    error("deadline.arm: call_id must be a number", 2)
  end
  check(seconds, "deadline.arm")
  if not seconds then
    return noop
  end
  local timer = timers.after(seconds, function()
    expired[call_id] = seconds
    if not cancel(call_id) then
      expired[call_id] = nil -- the call had already ended
    end
  end)
  return function()
    timers.cancel(timer)
  end
end

function _M.expired(call_id)
  return expired[call_id]
end

-- Forget a call once it left (the protocol layer checks expired() before that).
calls.on_leave(function(id)
  expired[id] = nil
end)

return _M

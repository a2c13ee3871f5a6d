-- moonmcp.watchdog — CPU budgets for calls, so a handler stuck in a loop that never yields
-- cannot freeze the host (core/lwatchdog.c: a VM count hook).
--
--   local watchdog = require "moonmcp.watchdog"
--   watchdog.enable{ every = 10000, budget = seconds }
--                                      starts watching (the hook, once armed, checks every
--                                      N VM instructions); budget applies to every call
--                                      without one of its own
--   watchdog.disable()
--   watchdog.watch(call_id, seconds)   a call's own budget: running longer than seconds in one resume
--                                      (between two yields) gets the error
--                                      "cpu budget exceeded" raised in its handler code
--   watchdog.unwatch(call_id)          (done automatically when the call leaves)
--   watchdog.prepare(fn) -> fn         turns the JIT off for fn and every function defined
--                                      in it: call it on each loaded script chunk, before
--                                      running it (compiled loops do not run hooks)
-- The error is raised only while handler code runs, never inside the host's runtime, so
-- cleanup is not disturbed; a handler that catches it gets it again shortly after.
local core = require "moonmcp.core"
local calls = require "moonmcp.calls"

local type, error = type, error
local jit_off = jit and jit.off

local _M = { DEFAULT_EVERY = 10000, MESSAGE = "cpu budget exceeded" }

local enabled = false

local overridden = {} -- call id -> true: calls with a budget of their own

function _M.enable(opts)
  local every = opts and opts.every or _M.DEFAULT_EVERY
  if type(every) ~= "number" or every < 1 then
    error("watchdog.enable: every must be a number >= 1", 2)
  end
  local budget = opts and opts.budget
  if budget ~= nil and (type(budget) ~= "number" or budget <= 0) then
    error("watchdog.enable: budget must be a number of seconds > 0", 2)
  end
  core.watchdog_start(every, "/lua/moonmcp/", budget)
  enabled = true
end

function _M.disable()
  core.watchdog_stop()
  enabled = false
end

function _M.enabled()
  return enabled
end

function _M.watch(call_id, seconds)
  if type(call_id) ~= "number" then
    error("watchdog.watch: call_id must be a number", 2)
  end
  if type(seconds) ~= "number" or seconds <= 0 then
    error("watchdog.watch: seconds must be a number > 0", 2)
  end
  overridden[call_id] = true
  core.watchdog_watch(call_id, seconds)
end

function _M.unwatch(call_id)
  overridden[call_id] = nil
  core.watchdog_watch(call_id, nil)
end

function _M.prepare(fn)
  if type(fn) ~= "function" then
    error("watchdog.prepare: fn must be a function", 2)
  end
  if jit_off then
    jit_off(fn, true)
  end
  return fn
end

calls.on_leave(function(id)
  if overridden[id] then
    _M.unwatch(id)
  end
end)

return _M

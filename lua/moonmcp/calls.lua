-- moonmcp.calls — the calls alive right now: scheduler call id -> { ctx, exchange }.
--
-- Lets code that is not handed the context (the logger, the I/O modules) find the call
-- it runs in: the scheduler knows which coroutine runs (core.current()), this table
-- knows what that call is. Entries are added when a call's context is restored and
-- removed when it is cleared, so nothing outlives its call.
local core = require "moonmcp.core"

local current = core.current

local _M = {}

local live = {}

function _M.enter(id, ctx, exchange)
  live[id] = { ctx = ctx, exchange = exchange }
end

local leave_hooks = {}

--- Registers fn(id), run whenever a call (or a child task) leaves — e.g. to cancel the
--- child tasks it leaves behind (moonmcp.ctx_tasks).
function _M.on_leave(fn)
  leave_hooks[#leave_hooks + 1] = fn
end

function _M.leave(id)
  live[id] = nil
  for i = 1, #leave_hooks do
    leave_hooks[i](id)
  end
end

--- The record of the running call ({ ctx, exchange }), or nil outside a call.
function _M.current()
  local id = current()
  return id and live[id]
end

function _M.get(id)
  return live[id]
end

return _M

-- moonmcp.calls — the calls alive right now: scheduler call id -> its ctx and exchange.
--
-- Lets code that is not handed the context (the logger, the I/O modules) find the call
-- it runs in: the scheduler knows which coroutine runs (core.current()), this table
-- knows what that call is. Entries are added when a call starts and removed when its
-- context is cleared, so nothing outlives its call.
local core = require "moonmcp.core"

local current = core.current

local _M = {}

-- Two maps rather than a record per call (one allocation less for every call): call id
-- -> ctx, and ctx -> exchange (which the ctx methods look up, see exchange_of).
local ctxs, exchanges = {}, {}

--- Call (or child task) id runs with ctx; exchange: its call's, or nil.
function _M.enter(id, ctx, exchange)
  ctxs[id] = ctx
  if exchange then
    exchanges[ctx] = exchange
  end
end

local leave_hooks = {}

--- Registers fn(id), run whenever a call (or a child task) leaves — e.g. to cancel the
--- child tasks it leaves behind (moonmcp.ctx_tasks).
function _M.on_leave(fn)
  leave_hooks[#leave_hooks + 1] = fn
end

function _M.leave(id)
  local ctx = ctxs[id]
  if ctx then
    ctxs[id], exchanges[ctx] = nil, nil
  end
  for i = 1, #leave_hooks do
    leave_hooks[i](id)
  end
end

--- The running call's ctx and exchange (nil outside a call; a child task's exchange is
--- its parent call's, or nil).
function _M.current()
  local id = current()
  local ctx = id and ctxs[id]
  if ctx then
    return ctx, exchanges[ctx]
  end
end

--- Call id's ctx and exchange, or nil once it left.
function _M.get(id)
  local ctx = ctxs[id]
  if ctx then
    return ctx, exchanges[ctx]
  end
end

--- The exchange of a live call's (or child task's) ctx, for the ctx methods; nil for any
--- other table.
function _M.exchange_of(ctx)
  return exchanges[ctx]
end

return _M

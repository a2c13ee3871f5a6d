-- moonmcp.call — the life of one JSON-RPC call (DESIGN §2, steps 3-6).
--
-- start(request, msg, exchange) takes the context snapshot from the request context and
-- spawns the call's own coroutine. Inside it: the accessors restore a copy of the
-- snapshot into a fresh context table, the protocol layer dispatches, the answer goes to
-- the exchange's output, and then — whatever happened: result, error, cancellation —
-- every accessor clears in reverse order and the table is emptied.
--
-- The exchange is the host's own per-call state, passed beside the context and never
-- mixed into it: { msg (the request), generation, out, call_id, ... }. exchange.out is
-- the transport's sink: out:send(message) mid-call, out:finish(message) at the end.
-- A transport may keep what is the same for all its calls (transport, out, on_done...)
-- in the exchange's metatable: a parked call then holds only what is its own.
local core = require "moonmcp.core"
local context = require "moonmcp.context"
local calls = require "moonmcp.calls"
local server = require "moonmcp.server"
local registry = require "moonmcp.registry"
local log = require "moonmcp.log"
local deadline = require "moonmcp.deadline"
local jsonrpc = require "moonmcp.jsonrpc"

local setmetatable, xpcall, pcall, tostring = setmetatable, xpcall, pcall, tostring
local server_run, server_response, handle_error = server.run, server.response, server.handle_error
local spawn, current, is_cancelled = core.spawn, core.current, core.cancelled
local restore = context.restore
local new_tab = require "table.new"

local _M = {}

--- Methods available on every ctx (ctx:progress, ...); other modules add to it.
_M.ctx_methods = {}
local CTX_MT = { __index = _M.ctx_methods }

--- The exchange of a live call's context table (for ctx methods), or nil.
_M.exchange_of = calls.exchange_of

-- The answer to a run's outcome (server.response), called through a Lua frame: a JIT
-- trace of server.response may return here, not straight into pcall.
local function answer(msg, exchange, ok, result)
  local response = server_response(msg, exchange, ok, result)
  return response
end

local function body(exchange, msg, snap)
  local id = current()
  exchange.call_id = id
  local accessors = snap.accessors
  local ctx = setmetatable(new_tab(0, #accessors), CTX_MT) -- room for what they restore
  calls.enter(id, ctx, exchange)
  local ok, response = xpcall(restore, handle_error, snap, ctx)
  snap = nil -- luacheck: ignore 311 (restored: a parked call does not keep it)
  -- the default deadline bounds every call but a subscription (a tool may set its own)
  local limit = msg.method ~= "subscriptions/listen" and deadline.default()
  local disarm = limit and deadline.arm(id, limit)
  if ok then -- the method runs right above this xpcall (server.run tail-calls it)
    ok, response = xpcall(server_run, handle_error, msg, exchange, ctx)
  end
  ok, response = pcall(answer, msg, exchange, ok, response)
  if disarm then
    disarm()
  end
  if not ok then
    log.error("call failed", { error = tostring(response) })
    response = jsonrpc.error(msg.id, jsonrpc.INTERNAL_ERROR, "internal error")
  end
  local expired = deadline.expired(id)
  if not response and expired then
    response = jsonrpc.error(msg.id, jsonrpc.INTERNAL_ERROR, ("deadline exceeded (%g s)"):format(expired))
  end
  if response and (not is_cancelled(id) or expired) then
    exchange.out:finish(response, exchange.http_status)
  elseif exchange.out.cancel then
    exchange.out:cancel()
  end
  local err = context.clear(accessors, ctx)
  if err then
    log.error("a context accessor failed to clear", { error = tostring(err) })
  end
  calls.leave(id)
  if exchange.on_done then
    exchange.on_done(exchange)
  end
end

--- Snapshots the request context and spawns the call. Returns the call id.
function _M.start(request, msg, exchange)
  local snap = context.snapshot(request)
  if msg.params == nil then
    msg.params = {}
  end
  exchange.msg = msg
  exchange.generation = exchange.generation or registry.current()
  return spawn(body, exchange, msg, snap)
end

return _M

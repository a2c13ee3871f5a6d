-- moonmcp.ctx — the methods every handler context has (ctx:progress, ctx:client, ...),
-- and the call's output helpers they share (send a notification on the call's own
-- stream, forward a log line to the client).
--
-- Methods live on the metatable of the context table (moonmcp.call's ctx_methods), so the
-- context itself holds only what accessors restored and what the handler wrote. They
-- reach the call's exchange through call.exchange_of(ctx).
local core = require "moonmcp.core"
local call = require "moonmcp.call"
local jsonrpc = require "moonmcp.jsonrpc"
local log = require "moonmcp.log"

local type, error, tostring, pairs = type, error, tostring, pairs
local is_cancelled = core.cancelled
local exchange_of = call.exchange_of
local RANK = log.RANK

local _M = {}
local methods = call.ctx_methods

--- Sends a notification on the call's own output (SSE stream / stdout), unless the call
--- was cancelled. Returns true when sent.
function _M.send(exchange, method, params)
  if exchange.call_id and is_cancelled(exchange.call_id) then
    return false
  end
  exchange.out:send(jsonrpc.notification(method, params))
  return true
end

--- Sends a whole message (already built) on the call's output, unless cancelled.
function _M.send_message(exchange, msg)
  if exchange.call_id and is_cancelled(exchange.call_id) then
    return false
  end
  exchange.out:send(msg)
  return true
end

--- The log hook of an exchange: forwards handler log lines at or above the client's
--- level as notifications/message (only when the client asked for a level).
function _M.on_log(exchange, level, message, fields)
  local wanted = exchange.log_level
  if not wanted or not RANK[wanted] or RANK[level] < RANK[wanted] then
    return
  end
  local data = { message = message }
  if type(fields) == "table" then
    for k, v in pairs(fields) do
      if type(k) == "string" and k ~= "message" then
        data[k] = v
      end
    end
  end
  _M.send(exchange, "notifications/message", { level = level, logger = exchange.logger or "moonmcp", data = data })
end

log.set_forwarder(_M.on_log)

local function exchange(ctx, what)
  local ex = exchange_of(ctx)
  if not ex then
    error(what .. ": not a call context (use ctx:" .. what .. "(...), with a colon)", 3)
  end
  return ex
end

--- ctx:progress(progress, total, message): reports progress when the request asked for
--- it (a progressToken); progress must increase. Returns true when a notification went out.
function methods.progress(ctx, progress, total, message)
  local ex = exchange(ctx, "progress")
  if type(progress) ~= "number" then
    error("progress: progress must be a number", 2)
  end
  if total ~= nil and type(total) ~= "number" then
    error("progress: total must be a number or nil", 2)
  end
  if message ~= nil and type(message) ~= "string" then
    error("progress: message must be a string or nil", 2)
  end
  if ex.last_progress and progress <= ex.last_progress then
    error(("progress: must increase (was %s, got %s)"):format(tostring(ex.last_progress), tostring(progress)), 2)
  end
  ex.last_progress = progress
  if ex.progress_token == nil then
    return false
  end
  return _M.send(ex, "notifications/progress", { progressToken = ex.progress_token, progress = progress,
    total = total, message = message })
end

--- ctx:client() -> { info = Implementation?, capabilities = {...} } of the requesting client
--- (legacy: from its initialize when known; modern: from the request's _meta).
function methods.client(ctx)
  local ex = exchange(ctx, "client")
  return ex.client or { capabilities = {} }
end

--- ctx:protocol() -> the protocol version and era ("legacy" | "modern") of this request.
function methods.protocol(ctx)
  local ex = exchange(ctx, "protocol")
  return ex.version, ex.era and ex.era.name
end

--- ctx:cancelled() -> whether the call was cancelled (its next yield raises "cancelled").
function methods.cancelled(ctx)
  local ex = exchange(ctx, "cancelled")
  return is_cancelled(ex.call_id)
end

return _M

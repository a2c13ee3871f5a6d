-- moonmcp.methods.listen — subscriptions/listen (modern era): a long-lived request whose
-- answer is a stream of the change notifications the client opted in to.
--
-- The call acknowledges first (notifications/subscriptions/acknowledged with the filter
-- it agreed to honour), then parks until the client goes away (HTTP: the stream closes;
-- stdio: notifications/cancelled) — the call is cancelled and nothing more is sent — or
-- the server shuts down, when it answers with a complete result (graceful end).
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local json = require "moonmcp.json"
local jsonrpc = require "moonmcp.jsonrpc"
local server = require "moonmcp.server"
local notify = require "moonmcp.notify"
local ctx_methods = require "moonmcp.ctx"

local type, pcall, error = type, pcall, error

local _M = {}

local FLAGS = { "toolsListChanged", "promptsListChanged", "resourcesListChanged" }

local function accepted_filter(requested)
  if requested ~= nil and (type(requested) ~= "table" or json.is_array(requested)) then
    jsonrpc.raise(jsonrpc.INVALID_PARAMS, "subscriptions/listen: notifications must be an object")
  end
  requested = requested or {}
  local filter = {}
  for _, flag in ipairs(FLAGS) do
    local v = requested[flag]
    if v ~= nil and type(v) ~= "boolean" then
      jsonrpc.raise(jsonrpc.INVALID_PARAMS, "subscriptions/listen: notifications." .. flag .. " must be a boolean")
    end
    if v then
      filter[flag] = true
    end
  end
  local uris = requested.resourceSubscriptions
  if uris ~= nil then
    if type(uris) ~= "table" or (next(uris) ~= nil and not json.is_array(uris)) then
      jsonrpc.raise(jsonrpc.INVALID_PARAMS, "subscriptions/listen: resourceSubscriptions must be an array of URIs")
    end
    local list = json.array()
    for i = 1, #uris do
      if type(uris[i]) ~= "string" then
        jsonrpc.raise(jsonrpc.INVALID_PARAMS, "subscriptions/listen: resourceSubscriptions must hold strings")
      end
      list[i] = uris[i]
    end
    filter.resourceSubscriptions = list
  end
  return filter
end

server.method("subscriptions/listen", function(params, exchange)
  local filter = accepted_filter(params.notifications)
  local id = exchange.msg.id
  local sink = notify.add {
    era = "modern",
    filter = filter,
    subscription_id = id,
    call_id = exchange.call_id,
    send = function(msg)
      ctx_methods.send_message(exchange, msg)
    end,
  }
  ctx_methods.send(exchange, "notifications/subscriptions/acknowledged",
    { _meta = { [notify.SUBSCRIPTION_KEY] = id }, notifications = filter })
  local ok, err = pcall(function()
    return host.await(core.park())
  end)
  notify.remove(sink)
  if not ok then
    error(err, 0)
  end
  return { _meta = { [notify.SUBSCRIPTION_KEY] = id } }
end)

--- Ends every listen stream gracefully (server shutdown).
function _M.close_all()
  notify.each(function(sink)
    if sink.era == "modern" and sink.call_id then
      core.wake(sink.call_id, "shutdown")
    end
  end)
end

return _M

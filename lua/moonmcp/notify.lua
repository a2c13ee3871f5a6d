-- moonmcp.notify — server-initiated notifications: list changes and resource updates,
-- delivered to whoever listens, in the listener's era.
--
-- Listeners ("sinks"):
--   legacy  { era = "legacy", key = subscriber key, send = fn(message) }
--           the stdio channel of a legacy client, or an HTTP GET stream. The key names
--           the subscriber of resources/subscribe (moonmcp.subscriptions): "stdio", a
--           session id, or "http" for sessionless HTTP, where every client of this server
--           is one audience (see docs/architecture.md).
--   modern  { era = "modern", filter = notifications filter of subscriptions/listen,
--             subscription_id = id, send = fn(message) }
--           a subscriptions/listen stream; it receives only what its filter asked for,
--           each message tagged with io.modelcontextprotocol/subscriptionId.
local jsonrpc = require "moonmcp.jsonrpc"
local subscriptions = require "moonmcp.subscriptions"

local pairs, type = pairs, type

local _M = {}

local SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
_M.SUBSCRIPTION_KEY = SUBSCRIPTION_KEY

local sinks = {} -- sink -> true

function _M.add(sink)
  sinks[sink] = true
  return sink
end

function _M.remove(sink)
  sinks[sink] = nil
end

local function tagged(method, params, sink)
  local p = {}
  for k, v in pairs(params) do
    p[k] = v
  end
  p._meta = { [SUBSCRIPTION_KEY] = sink.subscription_id }
  return jsonrpc.notification(method, p)
end

local FILTER_OF = { tools = "toolsListChanged", prompts = "promptsListChanged", resources = "resourcesListChanged" }

--- Sends notifications/<kind>/list_changed (kind: tools, prompts, resources).
function _M.list_changed(kind)
  local method = "notifications/" .. kind .. "/list_changed"
  local flag = FILTER_OF[kind]
  for sink in pairs(sinks) do
    if sink.era == "legacy" then
      sink.send(jsonrpc.notification(method))
    elseif sink.filter and sink.filter[flag] == true then
      sink.send(tagged(method, {}, sink))
    end
  end
end

local function listed(list, uri)
  if type(list) ~= "table" then
    return false
  end
  for i = 1, #list do
    if list[i] == uri then
      return true
    end
  end
  return false
end

-- Modern listeners name the URIs they follow in their own filter: every update is
-- offered to them (legacy subscribers are reached through moonmcp.subscriptions below).
local function resource_updated(uri)
  for sink in pairs(sinks) do
    if sink.era == "modern" and sink.filter and listed(sink.filter.resourceSubscriptions, uri) then
      sink.send(tagged("notifications/resources/updated", { uri = uri }, sink))
    end
  end
end

-- Legacy subscribers (resources/subscribe) are keys of legacy listeners.
subscriptions.set_sender(function(subscriber, message)
  for sink in pairs(sinks) do
    if sink.era == "legacy" and sink.key == subscriber then
      sink.send(message)
    end
  end
end)
subscriptions.on_updated(resource_updated)

--- Every modern listener (shutdown ends them gracefully).
function _M.each(fn)
  for sink in pairs(sinks) do
    fn(sink)
  end
end

return _M

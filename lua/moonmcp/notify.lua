-- moonmcp.notify — server-initiated notifications: list changes and resource updates,
-- delivered to whoever listens, in the listener's era.
--
-- Listeners ("sinks"):
--   legacy  { era = "legacy", key = subscriber key, send = fn(message) }
--           the stdio channel of a legacy client, or an HTTP GET stream. The key names
--           the subscriber for resources/subscribe ("stdio", or "http" — without sessions,
--           every HTTP client of this server is one audience; see docs/architecture.md).
--   modern  { era = "modern", filter = notifications filter of subscriptions/listen,
--             subscription_id = id, send = fn(message) }
--           a subscriptions/listen stream; it receives only what its filter asked for,
--           each message tagged with io.modelcontextprotocol/subscriptionId.
local jsonrpc = require "moonmcp.jsonrpc"

local pairs, type, next = pairs, type, next

local _M = {}

local SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
_M.SUBSCRIPTION_KEY = SUBSCRIPTION_KEY

local sinks = {}   -- sink -> true
local subscribed = {} -- legacy: uri -> { key -> true }

function _M.add(sink)
  sinks[sink] = true
  return sink
end

function _M.remove(sink)
  sinks[sink] = nil
end

--- Legacy resources/subscribe and unsubscribe, per subscriber key.
function _M.subscribe(key, uri)
  local set = subscribed[uri]
  if not set then
    set = {}
    subscribed[uri] = set
  end
  set[key] = true
end

function _M.unsubscribe(key, uri)
  local set = subscribed[uri]
  if set then
    set[key] = nil
    if next(set) == nil then
      subscribed[uri] = nil
    end
  end
end

--- Is anything subscribed to uri by key? (for specs)
function _M.is_subscribed(key, uri)
  return subscribed[uri] ~= nil and subscribed[uri][key] == true
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

--- Sends notifications/resources/updated { uri } to every subscriber of uri.
function _M.resource_updated(uri)
  local keys = subscribed[uri]
  for sink in pairs(sinks) do
    if sink.era == "legacy" then
      if keys and keys[sink.key] then
        sink.send(jsonrpc.notification("notifications/resources/updated", { uri = uri }))
      end
    elseif sink.filter and listed(sink.filter.resourceSubscriptions, uri) then
      sink.send(tagged("notifications/resources/updated", { uri = uri }, sink))
    end
  end
end

--- Number of listeners (for specs and shutdown).
function _M.count()
  local n = 0
  for _ in pairs(sinks) do
    n = n + 1
  end
  return n
end

--- Every modern listener (shutdown ends them gracefully).
function _M.each(fn)
  for sink in pairs(sinks) do
    fn(sink)
  end
end

return _M

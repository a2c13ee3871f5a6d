-- moonmcp.subscriptions — who is subscribed to which resource URI, and the delivery of
-- notifications/resources/updated to them.
--
-- Transport-agnostic: a subscriber is any key that identifies where notifications go (a
-- session table or id on the legacy era's HTTP transport, the stdio connection, a
-- subscriptions/listen stream on the modern era). The host installs one sender with
-- set_sender(fn(subscriber, message)); notify_updated(uri) builds a fresh notification
-- message per subscriber (so the sender may decorate it, e.g. with a subscriptionId) and
-- hands it over. Without a sender nothing can be delivered, and the resources capability
-- must not claim `subscribe`. Audiences that keep their own filter instead of subscribing
-- here (the modern era's subscriptions/listen streams, which name their URIs up front)
-- register on_updated(fn(uri)) and are told of every update.
--
-- Lifetime: subscriptions live until unsubscribe(), or drop(subscriber) when the session
-- or stream ends. Table keys are weak, so a session table that is collected takes its
-- subscriptions with it even if nobody called drop().
local jsonrpc = require "moonmcp.jsonrpc"
local log = require "moonmcp.log"

local type, pairs, next, setmetatable, xpcall, traceback, tostring, error, remove =
  type, pairs, next, setmetatable, xpcall, debug.traceback, tostring, error, table.remove

local _M = {}

--- Most URIs one subscriber may watch at once.
_M.MAX_PER_SUBSCRIBER = 1000

local sender = nil
local listeners = {}
local by_subscriber = setmetatable({}, { __mode = "k" }) -- subscriber -> { uris = { uri -> true }, n = count }
local by_uri = {}                                          -- uri -> weak set of subscribers

--- Installs the function that delivers a notification message to a subscriber
--- (nil: none; notifications are then dropped).
function _M.set_sender(fn)
  if fn ~= nil and type(fn) ~= "function" then
    error("subscriptions.set_sender: expected a function or nil", 2)
  end
  sender = fn
end

--- The installed sender (nil: none).
function _M.get_sender()
  return sender
end

--- Registers fn(uri), called by notify_updated for every update (other audiences).
--- Registering the same function twice has no effect.
function _M.on_updated(fn)
  if type(fn) ~= "function" then
    error("subscriptions.on_updated: expected a function", 2)
  end
  for i = 1, #listeners do
    if listeners[i] == fn then
      return
    end
  end
  listeners[#listeners + 1] = fn
end

--- Removes a function registered with on_updated.
function _M.off_updated(fn)
  for i = #listeners, 1, -1 do
    if listeners[i] == fn then
      remove(listeners, i)
    end
  end
end

--- Can notifications be delivered (is a sender installed)?
function _M.has_sender()
  return sender ~= nil
end

--- Subscribes subscriber to uri. Returns true, or nil and a message when the subscriber
--- already watches MAX_PER_SUBSCRIBER URIs.
function _M.subscribe(subscriber, uri)
  if subscriber == nil or type(uri) ~= "string" then
    error("subscriptions.subscribe: expected a subscriber and a URI string", 2)
  end
  local mine = by_subscriber[subscriber]
  if not mine then
    mine = { uris = {}, n = 0 }
    by_subscriber[subscriber] = mine
  end
  if mine.uris[uri] then
    return true
  end
  if mine.n >= _M.MAX_PER_SUBSCRIBER then
    return nil, "too many subscriptions (at most " .. _M.MAX_PER_SUBSCRIBER .. ")"
  end
  mine.uris[uri] = true
  mine.n = mine.n + 1
  local set = by_uri[uri]
  if not set then
    set = setmetatable({}, { __mode = "k" })
    by_uri[uri] = set
  end
  set[subscriber] = true
  return true
end

--- Unsubscribes subscriber from uri. Returns true if it was subscribed.
function _M.unsubscribe(subscriber, uri)
  local mine = subscriber ~= nil and by_subscriber[subscriber]
  if not mine or not mine.uris[uri] then
    return false
  end
  mine.uris[uri] = nil
  mine.n = mine.n - 1
  if mine.n == 0 then
    by_subscriber[subscriber] = nil
  end
  local set = by_uri[uri]
  if set then
    set[subscriber] = nil
    if next(set) == nil then
      by_uri[uri] = nil
    end
  end
  return true
end

--- Forgets every subscription of subscriber (its session or stream ended).
function _M.drop(subscriber)
  local mine = subscriber ~= nil and by_subscriber[subscriber]
  if not mine then
    return
  end
  for uri in pairs(mine.uris) do
    local set = by_uri[uri]
    if set then
      set[subscriber] = nil
      if next(set) == nil then
        by_uri[uri] = nil
      end
    end
  end
  by_subscriber[subscriber] = nil
end

--- Is subscriber subscribed to uri?
function _M.is_subscribed(subscriber, uri)
  local mine = subscriber ~= nil and by_subscriber[subscriber]
  return mine and mine.uris[uri] == true or false
end

--- The URIs subscriber watches (a list, unsorted).
function _M.uris_of(subscriber)
  local out = {}
  local mine = subscriber ~= nil and by_subscriber[subscriber]
  if mine then
    for uri in pairs(mine.uris) do
      out[#out + 1] = uri
    end
  end
  return out
end

--- Tells the on_updated listeners, then sends notifications/resources/updated {uri} to
--- every subscriber of uri. Returns the number of subscribers it was handed to. A sender
--- or listener that raises is logged and skipped.
function _M.notify_updated(uri)
  if type(uri) ~= "string" then
    error("notify_updated: expected a URI string, got " .. type(uri), 2)
  end
  for i = 1, #listeners do
    local ok, err = xpcall(listeners[i], traceback, uri)
    if not ok then
      log.error("a resource update listener failed", { uri = uri, error = tostring(err) })
    end
  end
  local set = by_uri[uri]
  if not set or not sender then
    return 0
  end
  -- copy first: a sender may unsubscribe (or drop) while we iterate
  local targets = {}
  for subscriber in pairs(set) do
    targets[#targets + 1] = subscriber
  end
  local sent = 0
  for i = 1, #targets do
    local message = jsonrpc.notification("notifications/resources/updated", { uri = uri })
    local ok, err = xpcall(sender, traceback, targets[i], message)
    if ok then
      sent = sent + 1
    else
      log.error("delivering notifications/resources/updated failed", { uri = uri, error = tostring(err) })
    end
  end
  return sent
end

return _M

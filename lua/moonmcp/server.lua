-- moonmcp.server — dispatch of JSON-RPC messages to the protocol's methods.
--
-- One dispatch path serves both transports. Requests run in their call's coroutine:
-- dispatch(msg, exchange, ctx) returns the response message (a result or an error).
-- Notifications and client responses are handled inline by notify() / respond(), in the
-- request phase, without a call coroutine. Methods are registered by the modules under
-- moonmcp.methods: method(params, exchange, ctx) -> result table, raising
-- jsonrpc.raise(code, message) for protocol errors. A method that fails any other way is
-- an internal error: the client gets -32603 and a generic message, the log gets the
-- traceback.
local jsonrpc = require "moonmcp.jsonrpc"
local log = require "moonmcp.log"

local type, xpcall, traceback, tostring = type, xpcall, debug.traceback, tostring

local _M = {}

local methods = {}       -- name -> fn(params, exchange, ctx)
local notifications = {} -- name -> fn(params, info)

function _M.method(name, fn)
  methods[name] = fn
end

function _M.notification(name, fn)
  notifications[name] = fn
end

function _M.has_method(name)
  return methods[name] ~= nil
end

local function handle_error(err)
  if jsonrpc.is_error(err) or err == "cancelled" then
    return err
  end
  return { internal = true, trace = traceback(tostring(err), 2) }
end

--- Runs the request msg; returns the response message, or nil when the call was
--- cancelled (nothing may be sent for it then).
function _M.dispatch(msg, exchange, ctx)
  local fn = methods[msg.method]
  if not fn then
    return jsonrpc.error(msg.id, jsonrpc.METHOD_NOT_FOUND, "method not found: " .. msg.method)
  end
  local ok, result = xpcall(fn, handle_error, msg.params or {}, exchange, ctx)
  if ok then
    return jsonrpc.result(msg.id, result)
  end
  if result == "cancelled" then
    return nil
  end
  if jsonrpc.is_error(result) then
    return jsonrpc.error(msg.id, result.code, result.message, result.data)
  end
  log.error("internal error in " .. msg.method, { error = result.trace })
  return jsonrpc.error(msg.id, jsonrpc.INTERNAL_ERROR, "internal error")
end

--- Handles a notification inline (info: what the transport knows about the sender).
function _M.notify(msg, info)
  local fn = notifications[msg.method]
  if fn then
    local ok, err = xpcall(fn, traceback, msg.params or {}, info)
    if not ok then
      log.error("notification " .. msg.method .. " failed", { error = err })
    end
  end
end

local responders = {}

--- Registers fn(msg, info) -> handled for client responses (answers to server requests).
function _M.on_response(fn)
  responders[#responders + 1] = fn
end

--- Routes a client response; unknown ids are ignored (and logged at debug level).
function _M.respond(msg, info)
  for i = 1, #responders do
    if responders[i](msg, info) then
      return true
    end
  end
  log.debug("response for an unknown request id", { id = type(msg.id) == "string" and msg.id or tostring(msg.id) })
  return false
end

return _M

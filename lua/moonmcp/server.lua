-- moonmcp.server — dispatch of JSON-RPC messages to the protocol's methods.
--
-- One dispatch path serves both transports. Requests run in their call's coroutine:
-- run(msg, exchange, ctx) inside the call's protected call, then response(msg, exchange,
-- ok, result) makes the response message (a result or an error); dispatch does both.
-- Notifications and client responses are handled inline by notify() / respond(), in the
-- request phase, without a call coroutine. Methods are registered by the modules under
-- moonmcp.methods: method(params, exchange, ctx) -> result table, raising
-- jsonrpc.raise(code, message) for protocol errors. A method that fails any other way is
-- an internal error: the client gets -32603 and a generic message, the log gets the
-- traceback.
local jsonrpc = require "moonmcp.jsonrpc"
local log = require "moonmcp.log"
local eras = require "moonmcp.eras"

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

--- The error handler of a call's protected run: protocol errors and cancellation pass as
--- they are; anything else becomes an internal error carrying its traceback (for the log).
function _M.handle_error(err)
  if jsonrpc.is_error(err) or err == "cancelled" then
    return err
  end
  return { internal = true, trace = traceback(tostring(err), 2) }
end

-- Selects msg's era (exchange.era), prepares the exchange and returns the method to run.
-- Apart from run, so that the JIT compiles it on its own: run leads into handlers, whose
-- code runs uncompiled while the watchdog is on (a trace cannot enter them).
local function resolve(msg, exchange)
  if msg.params == nil then
    msg.params = {}
  end
  local era, problem = eras.select(msg, exchange)
  exchange.era = era
  if problem then
    error(problem, 0)
  end
  era.prepare(msg, exchange)
  local method = msg.method
  local fn = era.METHODS[method] and methods[method]
  if not fn then
    jsonrpc.raise(jsonrpc.METHOD_NOT_FOUND, "method not found: " .. method)
  end
  return fn
end

--- Runs the request msg (inside the call's protected run, see call.lua): resolves the
--- method and tail-calls it, so no frame of the dispatch stays under a handler (a parked
--- call keeps every frame below it alive). Raises protocol errors.
function _M.run(msg, exchange, ctx)
  return resolve(msg, exchange)(msg.params, exchange, ctx)
end

--- The response message for the outcome of run (ok, result: what xpcall(run,
--- handle_error, ...) returned), or nil when the call was cancelled (nothing may be sent
--- for it then). Sets exchange.http_status (the status an HTTP answer carries).
function _M.response(msg, exchange, ok, result)
  local era = exchange.era or eras.legacy
  -- A module that took over the call's outcome may replace it: exchange.outcome(exchange,
  -- ok, result) -> ok, result (moonmcp.mrtr: a handler stopped for input_required).
  local outcome = exchange.outcome
  if outcome then
    ok, result = outcome(exchange, ok, result)
  end
  local response
  if ok then
    response = era.result(msg, result, exchange)
  elseif result == "cancelled" then
    return nil
  elseif jsonrpc.is_error(result) then
    response = jsonrpc.error(msg.id, result.code, result.message, result.data)
  else
    log.error("internal error in " .. msg.method, { error = result.trace })
    response = jsonrpc.error(msg.id, jsonrpc.INTERNAL_ERROR, "internal error")
  end
  exchange.http_status = era.http_status(response)
  return response
end

--- Runs the request msg and returns its response message (or nil when cancelled): run
--- and response in one step, for callers outside a call's coroutine (specs, tools).
function _M.dispatch(msg, exchange, ctx)
  return _M.response(msg, exchange, xpcall(_M.run, _M.handle_error, msg, exchange, ctx))
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

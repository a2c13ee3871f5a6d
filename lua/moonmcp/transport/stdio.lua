-- moonmcp.transport.stdio — newline-delimited JSON-RPC on stdin/stdout.
--
-- Every line is its own call (so calls run concurrently and answers may come out of
-- order). There is no request phase: each call's request context is the process-level
-- one (transport, a fresh request id, the message's _meta). A malformed line is answered
-- with a JSON-RPC error, never dropped. At end of input the calls in flight finish, then
-- the process exits 0. stdout carries only protocol messages; logs go to stderr.
local core = require "moonmcp.core"
local json = require "moonmcp.json"
local jsonrpc = require "moonmcp.jsonrpc"
local server = require "moonmcp.server"
local call = require "moonmcp.call"
local notify = require "moonmcp.notify"

local type, setmetatable, encode, write, random_hex = type, setmetatable, json.encode_bytes, core.stdio_write,
  core.random_hex

local new_tab = require "table.new"

local _M = {}

local in_flight, eof = 0, false
local by_request_id = {} -- JSON-RPC id -> call id, for notifications/cancelled

local function maybe_stop()
  if eof and in_flight == 0 then
    core.stop(0)
  end
end

local Out = {}
Out.__index = Out

function Out:send(msg)
  write(encode(msg))
end

function Out:finish(msg)
  write(encode(msg))
end

local function done(exchange)
  in_flight = in_flight - 1
  local id = exchange.msg.id
  if by_request_id[id] == exchange.call_id then
    by_request_id[id] = nil
  end
  maybe_stop()
end

local out = setmetatable({}, Out)

-- A client that initializes speaks the legacy era: from then on it hears list changes
-- and updates of the resources it subscribed to (modern clients use subscriptions/listen).
local legacy_sink = nil
local function on_initialize()
  if not legacy_sink then
    legacy_sink = notify.add { era = "legacy", key = "stdio", send = function(msg)
      write(encode(msg))
    end }
  end
end

-- What the exchanges of all stdio calls share (a call's own table holds only its own).
local EXCHANGE = { __index = { transport = "stdio", out = out, on_done = done, subscriber = "stdio" } }

--- Hook: one line of stdin, as bytes (core/bytes.c; a plain call from the loop; a request
--- spawns its call). line is nil, err when it was too long.
function _M.line(line, err)
  if not line then
    return write(encode(jsonrpc.error(nil, jsonrpc.INVALID_REQUEST, err)))
  end
  local msg, kind, message, id = jsonrpc.parse(line)
  if not msg then
    return write(encode(jsonrpc.error(id, kind, message)))
  end
  local request = {
    transport = "stdio",
    request_id = random_hex(8),
    message = msg,
    meta = type(msg.params) == "table" and msg.params._meta or nil,
  }
  if kind == "notification" then
    request.calls = by_request_id -- notifications/cancelled finds the call here
    return server.notify(msg, request)
  elseif kind == "response" then
    return server.respond(msg, request)
  end
  in_flight = in_flight + 1
  local exchange = setmetatable(new_tab(0, 8), EXCHANGE) -- room for what the call adds
  exchange.request = request
  if msg.method == "initialize" then
    exchange.on_initialize = on_initialize
  end
  by_request_id[msg.id] = call.start(request, msg, exchange)
end

--- Hook: end of input.
function _M.eof()
  eof = true
  maybe_stop()
end

function _M.in_flight()
  return in_flight
end

return _M

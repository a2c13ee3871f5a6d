-- spec/helpers/inproc.lua — drives the real protocol layer in-process: a call is started
-- exactly as the transports start one (moonmcp.call.start), with an output that records
-- what the call sends.
--
--   local inproc = require "helpers.inproc"
--   inproc.load{ "spec/fixtures/scripts" }                 -- a generation, swapped in
--   local res, sent = inproc.call(message, request?)       -- waits for the answer
--   local pending = inproc.start(message, request?)        -- returns at once
--   pending:wait() -> response, sent;  pending.call_id
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local call = require "moonmcp.call"
local loader = require "moonmcp.loader"
local registry = require "moonmcp.registry"

local _M = {}

function _M.load(paths)
  local gen, errors = loader.load(paths)
  assert(gen, errors and loader.format_errors(errors))
  registry.set(gen)
  return gen
end

local Out = {}
Out.__index = Out

function Out:send(msg)
  self.sent[#self.sent + 1] = msg
end

function Out:finish(msg, status)
  self.response, self.status, self.done = msg, status, true
  if self.waiter then
    core.wake(self.waiter, true)
  end
end

function Out:cancel()
  self.cancelled, self.done = true, true
  if self.waiter then
    core.wake(self.waiter, true)
  end
end

local Pending = {}
Pending.__index = Pending

--- Waits for the call's end; returns the response (nil if cancelled) and the messages sent before it.
function Pending:wait()
  local out = self.out
  if not out.done then
    out.waiter = core.current()
    host.await(core.park())
    out.waiter = nil
  end
  return out.response, out.sent, out.status
end

function _M.start(message, request)
  request = request or { transport = "inproc", request_id = "spec-" .. core.random_hex(4), log = {} }
  local out = setmetatable({ sent = {} }, Out)
  local exchange = { transport = "inproc", out = out, request = request }
  local id = call.start(request, message, exchange)
  return setmetatable({ out = out, call_id = id, exchange = exchange }, Pending)
end

function _M.call(message, request)
  return _M.start(message, request):wait()
end

--- A tools/call message.
function _M.tool(name, args, id)
  return { jsonrpc = "2.0", id = id or 1, method = "tools/call", params = { name = name, arguments = args } }
end

return _M

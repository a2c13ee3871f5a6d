-- spec/helpers/calls.lua — runs JSON-RPC calls through the real call path (call.start ->
-- server.run -> methods) with a fake output that records what the call sends, for
-- specs of handler-facing APIs (moonmcp.ask, moonmcp.mrtr). Unlike helpers.inproc, each
-- call gets its own generation, transport name, headers, session and principal.
--
--   local calls = require "helpers.calls"
--   local gen = calls.generation { tools = { name = handler | def, ... } }
--   local run = calls.start(msg, { generation = gen, transport = "http", principal = ... })
--   calls.wait(function() return run.out.done end)   -- polls with a deadline
--   local response = calls.rpc(msg, opts)             -- start + wait for the end
local core = require "moonmcp.core"
local call = require "moonmcp.call"
local moonmcp = require "moonmcp"

local _M = {}

--- A generation holding the given tools (name -> handler function or definition).
function _M.generation(defs)
  local tools = {}
  for name, def in pairs(defs.tools or {}) do
    if type(def) == "function" then
      def = { handler = def }
    end
    tools[name] = { name = name, def = def, input_schema = { type = "object" } }
  end
  return { tools = tools, prompts = {}, resources = {}, templates = {}, files = {} }
end

local Out = {}
Out.__index = Out

function Out:send(msg)
  self.sent[#self.sent + 1] = msg
  if self.on_send then
    self.on_send(msg)
  end
end

function Out:finish(msg, status)
  self.done, self.status = msg, status
end

function Out:cancel()
  self.cancelled = true
end

--- Polls pred() until true (every millisecond, at most `seconds`, default 3).
function _M.wait(pred, seconds)
  local deadline = core.clock() + (seconds or 3)
  while not pred() do
    if core.clock() > deadline then
      error("spec helper: condition not met in time", 2)
    end
    moonmcp.sleep(0.001)
  end
end

--- Starts msg as a call. Returns { out, exchange, request, id }.
function _M.start(msg, opts)
  opts = opts or {}
  local out = setmetatable({ sent = {} }, Out)
  local transport = opts.transport or "inproc"
  local request = {
    transport = transport,
    headers = opts.headers or {},
    principal = opts.principal,
    request_id = "spec",
    log = {},
    message = msg,
    meta = type(msg.params) == "table" and msg.params._meta or nil,
  }
  local exchange = { transport = transport, out = out, request = request, generation = opts.generation,
    session = opts.session }
  local id = call.start(request, msg, exchange)
  return { out = out, exchange = exchange, request = request, id = id }
end

--- Runs msg to its end; returns the response message (nil when cancelled) and the run.
function _M.rpc(msg, opts)
  local run = _M.start(msg, opts)
  _M.wait(function()
    return run.out.done or run.out.cancelled
  end)
  return run.out.done, run
end

local next_id = 0

--- A request message.
function _M.request(method, params)
  next_id = next_id + 1
  return { jsonrpc = "2.0", id = next_id, method = method, params = params or {} }
end

--- A modern-era (2026-07-28) request: params._meta carries version and capabilities.
function _M.modern(method, params, caps)
  params = params or {}
  params._meta = {
    ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28",
    ["io.modelcontextprotocol/clientCapabilities"] = caps or { elicitation = {}, sampling = {}, roots = {} },
  }
  return _M.request(method, params)
end

--- The text of the first content block of a tools/call response.
function _M.text(response)
  local result = response and response.result
  local block = result and result.content and result.content[1]
  return block and block.text
end

return _M

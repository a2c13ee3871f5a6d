-- moonmcp.testing.client — an in-process MCP client for specs and `moonmcp call`.
--
-- It drives the real protocol layer: every request is started exactly as the transports
-- start one (moonmcp.call.start: context snapshot, call coroutine, era selection,
-- dispatch, result shaping), with an output that records what the call sends. Nothing
-- listens on a socket. Both protocol eras are selectable:
--   legacy  (default 2025-11-25) the client is "initialized": its capabilities, info and
--           log level travel in a session the exchange carries; elicitation, sampling
--           and roots are server->client requests on the call's output, answered by
--           this client (moonmcp.pending routes the answer to the parked call)
--   modern  (2026-07-28) every request carries the _meta envelope; a handler that asks
--           for input ends the round with input_required; the client answers every
--           inputRequest and retries with inputResponses and requestState until the
--           result is complete (multi round-trip requests, moonmcp.mrtr)
--
--   local c = client.new {
--     paths = { "scripts/my-tools" },   -- load these scripts (a new generation) first
--     era = "legacy" | "modern", version = "...",
--     capabilities = { elicitation = {}, sampling = {}, roots = {} },  -- the default
--     log_level = "debug",              -- ask for the call's log lines (false: none)
--     request = { principal = {...} },  -- request-context fields (what filters set)
--     answers = { [key or message] = answer | fn(params, key, method) },
--     on_progress = fn(params), on_log = fn(params),  -- as they come (moonmcp call)
--     on_ask = fn(method, params, key) -> answer       -- questions without a scripted answer
--   }
--   c:call_tool(name, args, opts)      -> result (CallToolResult), info
--   c:get_prompt(name, args, opts)     -> result, info
--   c:read_resource(uri, opts)         -> result, info
--   c:list_tools() / list_prompts() / list_resources() / list_templates() -> the list
--   c:request(method, params, opts)    -> result or nil, error ({ code, message, data }), info
-- info = { progress = { params... }, logs = { params... }, asked = { { method, params,
-- key }... }, messages = { every message the call sent }, rounds = n }.
-- c.last is the info of the latest request. A protocol error returns nil, the error.
--
-- Answers: a question is looked up in `answers` by its key (modern era: the
-- inputRequests key, e.g. "confirm" or "elicit_1"; legacy era: the key is not on the
-- wire, so questions are numbered per call the way ctx:elicit numbers them:
-- "elicit_1", "sample_2"...), then by the elicitation's message. An answer may be:
--   elicitation  { action = "accept", content = {...} } | "decline" | "cancel" | a plain
--                table of content (accepted)
--   sampling     a CreateMessageResult | a string (an assistant text message)
--   roots        a list of { uri, name } | { roots = list }
--   a function(params, key, method) returning one of the above.
-- An unanswered question raises an error naming it (in the handler: legacy era; or from
-- the request: modern era).
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local call = require "moonmcp.call"
local server = require "moonmcp.server"
local loader = require "moonmcp.loader"
local registry = require "moonmcp.registry"
local json = require "moonmcp.json"

local type, pairs, ipairs, error, setmetatable, tostring, sort, concat, next, pcall =
  type, pairs, ipairs, error, setmetatable, tostring, table.sort, table.concat, next, pcall

local _M = {}

_M.LEGACY_VERSION = "2025-11-25"
_M.MODERN_VERSION = "2026-07-28"
_M.MAX_ROUNDS = 16

local META = {
  version = "io.modelcontextprotocol/protocolVersion",
  capabilities = "io.modelcontextprotocol/clientCapabilities",
  info = "io.modelcontextprotocol/clientInfo",
  log_level = "io.modelcontextprotocol/logLevel",
}

local KIND_OF = { ["elicitation/create"] = "elicit", ["sampling/createMessage"] = "sample", ["roots/list"] = "roots" }

local Client = {}
Client.__index = Client

--- Loads scripts into a new generation and swaps it in (as a reload does). Returns the
--- generation, or raises with every error as "file:line: message".
function _M.load(paths)
  local gen, errors = loader.load(paths)
  if not gen then
    error("cannot load the scripts:\n" .. loader.format_errors(errors), 2)
  end
  registry.set(gen)
  return gen
end

function _M.new(opts)
  opts = opts or {}
  local era = opts.era or "legacy"
  if era ~= "legacy" and era ~= "modern" then
    error("testing.client: era must be \"legacy\" or \"modern\"", 2)
  end
  if opts.paths then
    _M.load(opts.paths)
  end
  local self = setmetatable({
    era = era,
    version = opts.version or (era == "modern" and _M.MODERN_VERSION or _M.LEGACY_VERSION),
    capabilities = opts.capabilities or { elicitation = {}, sampling = {}, roots = {} },
    info = opts.client_info or { name = "moonmcp-testing", version = core.version },
    log_level = opts.log_level == nil and "debug" or opts.log_level or nil,
    request_fields = opts.request or {},
    answers = opts.answers or {},
    on_progress = opts.on_progress,
    on_log = opts.on_log,
    on_ask = opts.on_ask,
    next_id = 0,
  }, Client)
  return self
end

-- ---- answering questions ----

local function shape_answer(method, a)
  if method == "elicitation/create" then
    if a == "decline" or a == "cancel" then
      return { action = a }
    end
    if type(a) == "table" and a.action == nil then
      return { action = "accept", content = a }
    end
    return a
  elseif method == "sampling/createMessage" then
    if type(a) == "string" then
      return { role = "assistant", content = { type = "text", text = a }, model = "moonmcp-testing",
        stopReason = "endTurn" }
    end
    return a
  elseif method == "roots/list" then
    if type(a) == "table" and a.roots == nil then
      return { roots = json.array(a) }
    end
    return a
  end
  return a
end

--- The answer to a question (method, params, key), or raises.
function Client:answer(method, params, key)
  local a = key and self.answers[key]
  if a == nil and type(params) == "table" and type(params.message) == "string" then
    a = self.answers[params.message]
  end
  if type(a) == "function" then
    a = a(params, key, method)
  end
  if a == nil and self.on_ask then
    a = self.on_ask(method, params, key)
  end
  if a == nil then
    error(("testing client: no answer for %s %q%s"):format(method, tostring(key),
      type(params) == "table" and params.message and (" (" .. params.message .. ")") or ""), 0)
  end
  return shape_answer(method, a)
end

-- ---- the call's output ----

local Out = {}
Out.__index = Out

function Out:send(msg)
  local info = self.info
  info.messages[#info.messages + 1] = msg
  local method = msg.method
  if method == "notifications/progress" then
    info.progress[#info.progress + 1] = msg.params
    if self.client.on_progress then
      self.client.on_progress(msg.params)
    end
  elseif method == "notifications/message" then
    info.logs[#info.logs + 1] = msg.params
    if self.client.on_log then
      self.client.on_log(msg.params)
    end
  elseif method and msg.id ~= nil then
    -- a server->client request (legacy era): answer it as a client would, from a task
    -- of its own, so the call parks and is woken by the answer's routing
    self.seq = self.seq + 1
    local key = (KIND_OF[method] or "ask") .. "_" .. self.seq
    info.asked[#info.asked + 1] = { method = method, params = msg.params, key = key }
    local client = self.client
    core.spawn(function()
      local ok, answer = pcall(client.answer, client, method, msg.params, key)
      local reply
      if ok then
        reply = { jsonrpc = "2.0", id = msg.id, result = answer }
      else
        reply = { jsonrpc = "2.0", id = msg.id, error = { code = -32603, message = tostring(answer) } }
      end
      server.respond(reply, { transport = "inproc" })
    end)
  end
end

function Out:finish(msg)
  self.response, self.done = msg, true
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

-- Starts one JSON-RPC request; returns the output (wait with await_out).
function Client:start(msg, info)
  local request = {}
  for k, v in pairs(self.request_fields) do
    request[k] = v
  end
  request.transport = "inproc"
  request.request_id = request.request_id or ("test-" .. core.random_hex(4))
  request.log = request.log or {}
  request.meta = msg.params and msg.params._meta
  local out = setmetatable({ sent = {}, info = info, client = self, seq = 0 }, Out)
  local exchange = { transport = "inproc", out = out, request = request }
  if self.era == "legacy" then
    exchange.session = { version = self.version, log_level = self.log_level or nil,
      client = { info = self.info, capabilities = self.capabilities } }
  end
  out.call_id = call.start(request, msg, exchange)
  return out
end

local function await_out(out)
  if not out.done then
    out.waiter = core.current()
    host.await(core.park())
    out.waiter = nil
  end
  return out.response
end

--- Sends one request (method, params) and waits for the final answer, answering
--- questions on the way. Returns result, info; or nil, error, info.
function Client:request(method, params, opts)
  opts = opts or {}
  params = params or {}
  local info = { progress = {}, logs = {}, asked = {}, messages = {}, rounds = 0 }
  self.last = info
  local meta = {}
  for k, v in pairs(params._meta or {}) do
    meta[k] = v
  end
  if opts.progress ~= false then
    self.next_id = self.next_id + 1
    meta.progressToken = "progress-" .. self.next_id
  end
  if self.era == "modern" then
    meta[META.version] = self.version
    meta[META.capabilities] = self.capabilities
    meta[META.info] = self.info
    meta[META.log_level] = self.log_level or nil
  end
  local p = {}
  for k, v in pairs(params) do
    p[k] = v
  end
  p._meta = next(meta) and meta or nil
  while true do
    info.rounds = info.rounds + 1
    self.next_id = self.next_id + 1
    local out = self:start({ jsonrpc = "2.0", id = self.next_id, method = method, params = p }, info)
    local response = await_out(out)
    if not response then
      return nil, { code = -32800, message = "cancelled" }, info
    end
    info.response = response
    if response.error then
      return nil, response.error, info
    end
    local result = response.result
    if type(result) ~= "table" or result.resultType ~= "input_required" then
      return result, info
    end
    if info.rounds >= (opts.max_rounds or _M.MAX_ROUNDS) then
      return nil, { code = -32603, message = "testing client: too many input_required rounds" }, info
    end
    local keys, responses = {}, {}
    for key in pairs(result.inputRequests or {}) do
      keys[#keys + 1] = key
    end
    sort(keys)
    for _, key in ipairs(keys) do
      local req = result.inputRequests[key]
      info.asked[#info.asked + 1] = { method = req.method, params = req.params, key = key }
      local ok, answer = pcall(self.answer, self, req.method, req.params, key)
      if not ok then
        return nil, { code = -32603, message = tostring(answer) }, info
      end
      responses[key] = answer
    end
    local retry = {}
    for k, v in pairs(p) do
      retry[k] = v
    end
    retry.inputResponses = responses
    retry.requestState = result.requestState
    p = retry
  end
end

--- Calls a tool: returns the CallToolResult (isError results included), info.
function Client:call_tool(name, args, opts)
  return self:request("tools/call", { name = name, arguments = args or {} }, opts)
end

function Client:get_prompt(name, args, opts)
  return self:request("prompts/get", { name = name, arguments = args or {} }, opts)
end

function Client:read_resource(uri, opts)
  return self:request("resources/read", { uri = uri }, opts)
end

-- Every page of a list method.
local function list_all(self, method, field)
  local all, cursor = {}, nil
  repeat
    local result, err = self:request(method, { cursor = cursor }, { progress = false })
    if not result then
      error(("%s failed: %s"):format(method, tostring(err and err.message)), 3)
    end
    for _, item in ipairs(result[field] or {}) do
      all[#all + 1] = item
    end
    cursor = result.nextCursor
  until cursor == nil
  return all
end

function Client:list_tools()
  return list_all(self, "tools/list", "tools")
end

function Client:list_prompts()
  return list_all(self, "prompts/list", "prompts")
end

function Client:list_resources()
  return list_all(self, "resources/list", "resources")
end

function Client:list_templates()
  return list_all(self, "resources/templates/list", "resourceTemplates")
end

--- The text of a result's content blocks, joined by newlines (for quick assertions).
function _M.text(result)
  local parts = {}
  for _, block in ipairs(result and result.content or result and result.messages or {}) do
    local c = block.type and block or block.content
    if type(c) == "table" and c.type == "text" then
      parts[#parts + 1] = c.text
    end
  end
  return concat(parts, "\n")
end

return _M

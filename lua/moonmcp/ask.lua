-- moonmcp.ask — the handler API for asking the client: elicitation, sampling, roots.
-- One API for both protocol eras, on the ctx of tool handlers, prompt handlers and
-- resource readers.
--
--   ctx:elicit{ message = "...", schema = { type = "object", properties = {...},
--               required = {...} }, key = "name", timeout = s }
--       -> { action = "accept" | "decline" | "cancel", content = {...} }
--       Form mode. The schema is flat: each property is a string (minLength, maxLength,
--       format email|uri|date|date-time), number/integer (minimum, maximum), boolean,
--       single-select enum (string + enum, or string + oneOf {const, title}) or
--       multi-select enum (array + items.enum, or array + items.anyOf {const, title}),
--       each with an optional default, title and description.
--   ctx:elicit_url{ url = "https://...", message = "...", key =, id = }
--       -> { action = ... }   URL mode (protocol 2025-11-25 and later). Legacy era: id is
--       the elicitationId (default: random).
--   ctx:sample{ messages = {...} | "text", max_tokens = n, system_prompt =, temperature =,
--               stop_sequences =, model_preferences =, include_context =, metadata =,
--               tools =, tool_choice =, key = }
--       -> the client's CreateMessageResult ({ role, content, model, stopReason }).
--       A message's content may be a plain string (a text block).
--   ctx:roots{ key = }  -> the client's roots, an array of { uri, name }
--   ctx:ask{ key = { elicit = {...} } | { elicit_url = {...} } | { sample = {...} }
--                  | { roots = true }, ... }
--       -> { key = answer, ... }: several questions in one round (modern era: one
--       input_required result asking all of them; legacy era: sent one after the other,
--       in key order). Answers are shaped as by the single methods.
-- `key` names the question in inputRequests / inputResponses (2026-07-28). Without one,
-- questions are numbered in the order a run asks them ("elicit_1", "sample_2", ...).
--
-- How a call waits, per era
--   Legacy (2025-11-25 and earlier): the question is a server->client request sent on the
--   call's own stream (HTTP: the answer becomes SSE; stdio: a line); the handler's
--   coroutine parks until the client's response comes back (moonmcp.pending). A client
--   error answer raises a pending.ClientError; no answer within the timeout (default
--   300 s, pending.set_timeout, or `timeout =` per question) raises an error; a
--   cancellation or disconnect ends the call.
--   Modern (2026-07-28): multi round-trip requests (moonmcp.mrtr). The first question
--   nobody answered yet STOPS the handler (it sees the error "cancelled"): the call
--   answers { resultType = "input_required", inputRequests, requestState }. The client
--   retries the same request with inputResponses and requestState, and THE HANDLER RUNS
--   AGAIN FROM THE TOP: every question already answered returns its answer at once
--   (replayed from the ledger sealed inside requestState), until the next unanswered one.
--   Only tools/call, prompts/get and resources/read may ask; anything else raises.
--
-- Contract for authors (it matters in the modern era)
--   * Code before the last question runs once per round. Put side effects (writes,
--     payments, messages) after the last question, or make them idempotent.
--   * Ask the same questions in the same order on every run: a question is identified by
--     its key, and its answer is bound to a fingerprint of the question. If a re-run asks
--     something different under a key that was already answered, the call fails
--     (-32602) rather than replay an answer to another question. So do not build
--     questions from the clock or from random numbers.
--   * Do not swallow the stop: if you pcall around an ask, re-raise "cancelled" (as for
--     any cancellation). A swallowed stop does not help: the round still ends with
--     input_required once the handler returns.
--   * Progress and log notifications sent during a round go out on that round's response
--     stream (SSE), before the input_required result; each round is a new request, so
--     progress starts afresh every round.
--   * A client that did not declare the capability (elicitation, elicitation.url,
--     sampling, sampling.tools, roots) is never asked. Modern era: the call ends with
--     -32021 (HTTP 400), data.requiredCapabilities naming what is missing. Legacy era:
--     the ask raises an error the handler may catch. Legacy capabilities are known from
--     initialize: with a session, the session's; over stdio, the process's last
--     initialize; over sessionless HTTP they are unknown and the client is assumed
--     capable (it answers an unsupported request with an error, which the ask raises).
local call = require "moonmcp.call"
local json = require "moonmcp.json"
local jsonrpc = require "moonmcp.jsonrpc"
local mrtr = require "moonmcp.mrtr"
local pending = require "moonmcp.pending"
local core = require "moonmcp.core"

local type, pairs, ipairs, error, tostring, next, sort, concat, floor =
  type, pairs, ipairs, error, tostring, next, table.sort, table.concat, math.floor
local exchange_of = call.exchange_of
local MISSING_CAPABILITY = -32021

local _M = {}
local methods = call.ctx_methods

-- Misuse by the handler's author: raised without a position (the depth varies; the
-- traceback in the log shows the caller).
local function misuse(what, message)
  error("ctx:" .. what .. ": " .. message, 0)
end

-- ---------------------------------------------------------------------------------------
-- Building the requests

local PROPERTY_TYPES = { string = true, number = true, integer = true, boolean = true, array = true }

local function check_schema(what, schema)
  if schema == nil then
    return { type = "object", properties = {} }
  end
  if type(schema) ~= "table" then
    misuse(what, "schema must be a table")
  end
  if schema.type ~= nil and schema.type ~= "object" then
    misuse(what, 'schema.type must be "object" (a flat object of primitive properties)')
  end
  local props = schema.properties or {}
  if type(props) ~= "table" then
    misuse(what, "schema.properties must be a table")
  end
  for name, p in pairs(props) do
    if type(name) ~= "string" or type(p) ~= "table" then
      misuse(what, "schema.properties must map names to property schemas")
    end
    if not PROPERTY_TYPES[p.type] then
      misuse(what, ("property %q: type must be string, number, integer, boolean or array (multi-select enum)")
        :format(name))
    end
    if p.type == "array" then
      local items = p.items
      if type(items) ~= "table" or (items.enum == nil and items.anyOf == nil) then
        misuse(what, ("property %q: an array must be a multi-select enum (items.enum or items.anyOf)"):format(name))
      end
    end
  end
  local out = {}
  for k, v in pairs(schema) do
    out[k] = v
  end
  out.type = "object"
  out.properties = props
  local required = schema.required
  if required ~= nil then
    if type(required) ~= "table" then
      misuse(what, "schema.required must be a list of property names")
    end
    local list = json.array()
    for i, name in ipairs(required) do
      if props[name] == nil then
        misuse(what, ("schema.required names %q, which is not a property"):format(tostring(name)))
      end
      list[i] = name
    end
    out.required = #list > 0 and list or nil
  end
  return out
end

local function check_message(what, spec)
  if type(spec.message) ~= "string" then
    misuse(what, "message must be a string")
  end
end

local BUILD = {}

function BUILD.elicit(spec)
  check_message("elicit", spec)
  return { method = "elicitation/create",
    params = { message = spec.message, requestedSchema = check_schema("elicit", spec.schema) } }
end

function BUILD.elicit_url(spec, exchange, legacy)
  check_message("elicit_url", spec)
  if type(spec.url) ~= "string" or not spec.url:match("^[%a][%w+.-]*:") then
    misuse("elicit_url", "url must be an absolute URL string")
  end
  local params = { mode = "url", message = spec.message, url = spec.url }
  if legacy then
    if (exchange.version or "") < "2025-11-25" then
      misuse("elicit_url", "URL mode elicitation needs protocol 2025-11-25 or later (this client speaks "
        .. tostring(exchange.version) .. ")")
    end
    if spec.id ~= nil and type(spec.id) ~= "string" then
      misuse("elicit_url", "id must be a string")
    end
    params.elicitationId = spec.id or core.random_hex(16)
  end
  return { method = "elicitation/create", params = params }
end

local SAMPLE_FIELDS = {
  max_tokens = "maxTokens", system_prompt = "systemPrompt", temperature = "temperature",
  stop_sequences = "stopSequences", model_preferences = "modelPreferences", include_context = "includeContext",
  metadata = "metadata", tools = "tools", tool_choice = "toolChoice",
}
local SAMPLE_ARRAYS = { stopSequences = true, tools = true }

local function text_block(text)
  return { type = "text", text = text }
end

function BUILD.sample(spec)
  local messages = spec.messages
  if type(messages) == "string" then
    messages = { { role = "user", content = messages } }
  end
  if type(messages) ~= "table" or #messages == 0 then
    misuse("sample", "messages must be a non-empty list (or a string: one user message)")
  end
  local list = json.array()
  for i, m in ipairs(messages) do
    if type(m) ~= "table" or (m.role ~= "user" and m.role ~= "assistant") then
      misuse("sample", ("messages[%d] must be { role = \"user\" | \"assistant\", content = ... }"):format(i))
    end
    local content = m.content
    if type(content) == "string" then
      content = text_block(content)
    elseif type(content) ~= "table" then
      misuse("sample", ("messages[%d].content must be a string or a content block"):format(i))
    end
    list[i] = { role = m.role, content = content }
  end
  local params = { messages = list }
  for snake, camel in pairs(SAMPLE_FIELDS) do
    local v = spec[snake]
    if v == nil then
      v = spec[camel]
    end
    if v ~= nil then
      if SAMPLE_ARRAYS[camel] and type(v) == "table" then
        v = json.array(v)
      end
      params[camel] = v
    end
  end
  local max = params.maxTokens
  if type(max) ~= "number" or max < 1 or max ~= floor(max) then
    misuse("sample", "max_tokens must be an integer >= 1")
  end
  return { method = "sampling/createMessage", params = params }
end

function BUILD.roots()
  return { method = "roots/list" }
end

-- ---------------------------------------------------------------------------------------
-- Capabilities

-- What a question needs from the client: the capability path as a table.
local function needs(kind, request)
  if kind == "elicit" then
    return "elicitation", "form"
  elseif kind == "elicit_url" then
    return "elicitation", "url"
  elseif kind == "sample" then
    return "sampling", request.params.tools ~= nil and "tools" or nil
  end
  return "roots", nil
end

local function capable(caps, kind, request)
  local cap, sub = needs(kind, request)
  local c = caps[cap]
  if type(c) ~= "table" then
    return false
  end
  if cap == "elicitation" then
    if sub == "form" then -- {} means form only (backwards compatibility)
      return c.form ~= nil or c.url == nil
    end
    return c.url ~= nil
  end
  if sub then
    return c[sub] ~= nil
  end
  return true
end

local function required_capabilities(missing)
  local req, names = {}, {}
  for _, q in ipairs(missing) do
    local cap, sub = needs(q.kind, q.request)
    local entry = req[cap]
    if not entry then
      entry = {}
      req[cap] = entry
    end
    if sub and not (cap == "elicitation" and sub == "form") then
      entry[sub] = {}
      names[#names + 1] = cap .. "." .. sub
    else
      names[#names + 1] = cap
    end
  end
  sort(names)
  return req, names
end

-- ---------------------------------------------------------------------------------------
-- Answers

local function shape(kind, answer, method)
  if kind == "roots" then
    if type(answer) ~= "table" or type(answer.roots) ~= "table" then
      error(method .. ": the client's answer has no roots list", 0)
    end
    return json.array(answer.roots)
  end
  if type(answer) ~= "table" then
    error(method .. ": the client's answer is not an object", 0)
  end
  return answer
end

local function exchange(ctx, what)
  local ex = exchange_of(ctx)
  if not ex then
    error(what .. ": not a call context (use ctx:" .. what .. "{...}, with a colon)", 3)
  end
  return ex
end

-- Legacy era: raises a catchable error when the client's declared capabilities (when
-- known) do not cover the question.
local function check_capable(ex, kind, request)
  local caps = ex.client and ex.client.capabilities
  if type(caps) == "table" and not capable(caps, kind, request) then
    local _, names = required_capabilities({ { kind = kind, request = request } })
    error(("%s: the client did not declare the %s capability"):format(request.method, names[1]), 0)
  end
end

-- Asks the questions of list ({ key, kind, request, timeout }); returns { key = answer }.
local function run(ex, what, list)
  local modern = ex.era and ex.era.name == "modern"
  if modern then
    local round = mrtr.round(ex)
    if not round then
      error(("%s: %s cannot ask the client for input in protocol %s (only tools/call, prompts/get and "
        .. "resources/read can)"):format(what, tostring(ex.msg.method), tostring(ex.version)), 3)
    end
    local caps = ex.client and ex.client.capabilities or {}
    local answers = mrtr.resolve(round, list, function(missing)
      local lacking = {}
      for _, q in ipairs(missing) do
        if not capable(caps, q.kind, q.request) then
          lacking[#lacking + 1] = q
        end
      end
      if #lacking > 0 then
        local req, names = required_capabilities(lacking)
        return jsonrpc.error_value(MISSING_CAPABILITY, "Missing required client capability: " .. concat(names, ", "),
          { requiredCapabilities = req })
      end
    end)
    for _, q in ipairs(list) do
      answers[q.key] = shape(q.kind, answers[q.key], q.request.method)
    end
    return answers
  end
  for _, q in ipairs(list) do
    check_capable(ex, q.kind, q.request)
  end
  local answers = {}
  for _, q in ipairs(list) do
    local r = pending.request(ex, q.request.method, q.request.params, q.timeout)
    answers[q.key] = shape(q.kind, r, q.request.method)
  end
  return answers
end

-- The options of a question, checked (a table; key and timeout well-formed).
local function options(kind, spec)
  if spec == nil and kind == "roots" then
    spec = {}
  end
  if type(spec) ~= "table" then
    misuse(kind, "expects a table of options")
  end
  local key = spec.key
  if key ~= nil and (type(key) ~= "string" or key == "") then
    misuse(kind, "key must be a non-empty string")
  end
  local timeout = spec.timeout
  if timeout ~= nil and (type(timeout) ~= "number" or timeout <= 0) then
    misuse(kind, "timeout must be a number of seconds > 0")
  end
  return spec
end

-- A question { key, kind, request, timeout }. Without a key of its own it is numbered
-- in the order the run asks ("elicit_1", "sample_2", ...).
local function question(ex, kind, spec, key)
  spec = options(kind, spec)
  if key == nil then
    key = spec.key
  end
  if key == nil then
    ex.ask_seq = (ex.ask_seq or 0) + 1
    key = kind .. "_" .. ex.ask_seq
  end
  local legacy = not (ex.era and ex.era.name == "modern")
  return { key = key, kind = kind, request = BUILD[kind](spec, ex, legacy), timeout = spec.timeout }
end

-- The params and timeout of a legacy-era single question, checked (options,
-- capability). It needs no key, so none is numbered, and no question table is made.
local function legacy_params(ex, kind, spec)
  spec = options(kind, spec)
  local request = BUILD[kind](spec, ex, true)
  check_capable(ex, kind, request)
  return request.params, spec.timeout
end

local METHOD = { elicit = "elicitation/create", elicit_url = "elicitation/create", sample = "sampling/createMessage",
  roots = "roots/list" }

-- One question. In the legacy era it goes straight to pending.request, and no local here
-- holds the question: a parked call's coroutine keeps every frame below the park alive
-- with what its slots hold, and that is the memory of 10,000 parked calls.
local function single(kind)
  local method = METHOD[kind]
  return function(ctx, spec)
    local ex = exchange(ctx, kind)
    if ex.era and ex.era.name == "modern" then
      local q = question(ex, kind, spec)
      return run(ex, kind, { q })[q.key]
    end
    return shape(kind, pending.request(ex, method, legacy_params(ex, kind, spec)), method)
  end
end

methods.elicit = single("elicit")
methods.elicit_url = single("elicit_url")
methods.sample = single("sample")
methods.roots = single("roots")

local KINDS = { "elicit", "elicit_url", "sample", "roots" }

--- ctx:ask{ key = { elicit = {...} } | ..., ... } -> { key = answer, ... }
function methods.ask(ctx, spec)
  local ex = exchange(ctx, "ask")
  if type(spec) ~= "table" or next(spec) == nil then
    misuse("ask", "expects a non-empty table { key = { elicit = {...} } | { sample = {...} } | { roots = true } }")
  end
  local keys = {}
  for k in pairs(spec) do
    if type(k) ~= "string" or k == "" then
      misuse("ask", "keys must be non-empty strings")
    end
    keys[#keys + 1] = k
  end
  sort(keys)
  local list = {}
  for i, k in ipairs(keys) do
    local entry = spec[k]
    if type(entry) ~= "table" then
      misuse("ask", ("%s must be a table such as { elicit = {...} }"):format(k))
    end
    local found
    for _, kind in ipairs(KINDS) do
      if entry[kind] ~= nil then
        if found then
          misuse("ask", ("%s asks both %s and %s: one question per key"):format(k, found, kind))
        end
        found = kind
      end
    end
    if not found then
      misuse("ask", ("%s must hold one of elicit, elicit_url, sample, roots"):format(k))
    end
    local opts = entry[found]
    if found == "roots" and opts == true then
      opts = {}
    end
    list[i] = question(ex, found, opts, k)
  end
  return run(ex, "ask", list)
end

return _M

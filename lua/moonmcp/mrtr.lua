-- moonmcp.mrtr — multi round-trip requests (2026-07-28, basic/patterns/mrtr): the rounds
-- of a tools/call, prompts/get or resources/read whose handler asks the client for input,
-- and the ledger of answers carried from round to round inside a sealed requestState.
--
-- A round, as seen from here:
--   1. prepare(msg, exchange) (called by moonmcp.era.modern for the three methods that may
--      answer input_required): validates params.inputResponses (absent or an object) and
--      opens params.requestState, if any: authenticates it (AES-256-GCM), checks it is
--      not expired and was issued for this very request (method, target, a digest of the
--      arguments) and principal. Any failure is -32602 before the handler runs.
--   2. The handler runs from the top. Each question it asks (moonmcp.ask -> resolve) is
--      answered from the ledger (answers of earlier rounds), else from inputResponses
--      (answers to the previous round's questions), else it becomes an input request of
--      this round and the handler is stopped (it sees the error "cancelled", like a
--      cancellation; the method layers let that through).
--   3. outcome() (server.response's exchange.outcome hook) turns a stopped run into
--      { resultType = "input_required", inputRequests = {...}, requestState = "..." }, or
--      into the protocol error the round recorded (-32021 missing capability, -32602).
--
-- requestState = "v1." .. base64url(nonce || AES-256-GCM(JSON state) || tag), AAD
-- "moonmcp/mrtr/v1". The JSON state: { v = 1, m = method, t = target, a = digest of the
-- arguments, p = digest of the principal, x = expiry (epoch seconds), l = ledger
-- { key = { f = fingerprint of the question, r = answer } }, q = the questions of this
-- round { key = fingerprint } }. The nonce is random per seal, so the state differs
-- every round. Every answer is bound to the fingerprint (SHA-256 of the canonical JSON)
-- of its question: when a re-run asks a different question under a known key, the call
-- is refused (-32602) instead of replaying an answer to another question.
--
-- inputResponses are accepted without a requestState (the first round has none to echo),
-- and answers are taken only for the questions a run actually asks: unknown keys are
-- ignored, and every answer used is checked against its question's method (an object; an
-- elicitation action; a content; a roots list) — -32602 otherwise. When a requestState
-- is present, an answer must also belong to the question asked under its key in the
-- previous round. Once in the ledger, an answer wins over anything resent for that key.
-- Every round's state gets a fresh expiry (set_ttl, default 600 s, measured with
-- set_clock's clock); the state binds no round number, so a client may replay a state
-- within its lifetime — the spec's "does not by themselves guarantee single-use".
--
-- Digests use a canonical JSON encoding (sorted object keys, moonmcp.json's scalars), so
-- they do not depend on table iteration order.
--
-- Key: set_key(32 raw bytes | 64 hex digits) — the same key on every instance behind a
-- load balancer (config `mrtr_key`). Without one, an ephemeral random key is made at first
-- use (with a warning): rounds then do not survive a restart and do not cross instances.
local core = require "moonmcp.core"
local json = require "moonmcp.json"
local jsonrpc = require "moonmcp.jsonrpc"
local base64 = require "moonmcp.base64"
local log = require "moonmcp.log"
local copy = require("moonmcp.context").copy

local type, pairs, next, tostring, error, sort, concat, floor =
  type, pairs, next, tostring, error, table.sort, table.concat, math.floor
local format, gsub, char = string.format, string.gsub, string.char
local encode, decode, kind = json.encode, json.decode, json.kind
local seal, unseal, sha256, random_bytes = core.seal, core.unseal, core.sha256, core.random_bytes

local _M = {}

--- The methods that may answer input_required (the spec's "Supported Requests").
_M.METHODS = { ["tools/call"] = true, ["prompts/get"] = true, ["resources/read"] = true }

--- The handler-stop value (the same as a cancellation's, so method layers pass it on).
_M.STOP = "cancelled"

local PREFIX = "v1."
local AAD = "moonmcp/mrtr/v1"
local DEFAULT_TTL = 600

local key = nil          -- 32 raw bytes
local ephemeral = false
local ttl = DEFAULT_TTL
local clock = core.now

local HEX = {}
for i = 0, 255 do
  HEX[char(i)] = format("%02x", i)
end

local function hex(s)
  return (gsub(s, ".", HEX))
end

--- Sets the sealing key: 32 raw bytes or 64 hex digits; nil forgets it (the next seal
--- makes an ephemeral key).
function _M.set_key(k)
  if k == nil then
    key, ephemeral = nil, false
    return
  end
  if type(k) ~= "string" then
    error("mrtr.set_key: the key must be a string (32 bytes or 64 hex digits)", 2)
  end
  if #k == 64 and k:match("^%x+$") then
    k = k:gsub("%x%x", function(h)
      return char(tonumber(h, 16))
    end)
  elseif #k ~= 32 then
    error("mrtr.set_key: the key must be 32 bytes or 64 hex digits, got " .. #k .. " characters", 2)
  end
  key, ephemeral = k, false
end

--- Lifetime of a requestState in seconds (default 600).
function _M.set_ttl(seconds)
  if type(seconds) ~= "number" or seconds <= 0 then
    error("mrtr.set_ttl: seconds must be a number > 0", 2)
  end
  ttl = seconds
end

--- The clock expiries are measured with: fn() -> epoch seconds (nil: the wall clock).
function _M.set_clock(fn)
  if fn ~= nil and type(fn) ~= "function" then
    error("mrtr.set_clock: a function or nil", 2)
  end
  clock = fn or core.now
end

local function current_key()
  if not key then
    key, ephemeral = random_bytes(32), true
    log.warning("mrtr: no mrtr_key configured; requestState is sealed with an ephemeral key, so "
      .. "input_required rounds do not survive a restart and cannot move between instances")
  end
  return key
end

--- Whether the key in use was generated at random (no key configured).
function _M.is_ephemeral()
  return ephemeral
end

-- ---------------------------------------------------------------------------------------
-- Canonical JSON and digests

local function canon(v, out)
  local k = kind(v)
  if k == "object" then
    local keys = {}
    for name in pairs(v) do
      keys[#keys + 1] = tostring(name)
    end
    sort(keys)
    out[#out + 1] = "{"
    for i, name in ipairs(keys) do
      if i > 1 then
        out[#out + 1] = ","
      end
      local value = v[name]
      if value == nil then -- a number key stringified above
        value = v[tonumber(name)]
      end
      out[#out + 1] = encode(name)
      out[#out + 1] = ":"
      canon(value, out)
    end
    out[#out + 1] = "}"
  elseif k == "array" then
    out[#out + 1] = "["
    for i = 1, #v do
      if i > 1 then
        out[#out + 1] = ","
      end
      canon(v[i], out)
    end
    out[#out + 1] = "]"
  elseif k then
    out[#out + 1] = encode(v)
  else
    -- Not JSON (a function, userdata, a table encode() refuses): a type marker, so that
    -- digests of arbitrary principals still work (such values compare as equal).
    out[#out + 1] = encode("\0" .. type(v))
  end
end

--- Canonical JSON text of v (object keys sorted; same scalars as moonmcp.json).
function _M.canonical(v)
  local out = {}
  canon(v, out)
  return concat(out)
end

--- Hex SHA-256 of the canonical JSON of v.
function _M.digest(v)
  return hex(sha256(_M.canonical(v)))
end

--- The fingerprint of a question ({ method, params }): 128 bits of its digest, in hex.
function _M.fingerprint(request)
  return hex(sha256(_M.canonical(request)):sub(1, 16))
end

-- ---------------------------------------------------------------------------------------
-- Sealing

--- Seals a state table into a requestState string.
function _M.seal(state)
  return PREFIX .. base64.encode_url(seal(current_key(), encode(state), AAD))
end

--- Opens a requestState string; returns the state table, or nil, message.
function _M.open(text)
  if type(text) ~= "string" or text:sub(1, #PREFIX) ~= PREFIX then
    return nil, "not a requestState of this server"
  end
  local box = base64.decode_url(text:sub(#PREFIX + 1))
  if not box then
    return nil, "requestState is not valid base64url"
  end
  local plain = unseal(current_key(), box, AAD)
  if not plain then
    return nil, "requestState failed authentication (altered, truncated, or sealed with another key)"
  end
  local state = decode(plain)
  if type(state) ~= "table" or state.v ~= 1 then
    return nil, "requestState has an unknown format"
  end
  return state
end

-- ---------------------------------------------------------------------------------------
-- Rounds

local function invalid(message, reason)
  jsonrpc.raise(jsonrpc.INVALID_PARAMS, message, { reason = reason })
end

-- The request a state is bound to: method, target, digest of the arguments (params
-- without _meta, inputResponses, requestState), digest of the principal.
local function binding(msg, exchange)
  local params = msg.params
  local args = {}
  for k, v in pairs(params) do
    if k ~= "_meta" and k ~= "inputResponses" and k ~= "requestState" then
      args[k] = v
    end
  end
  local target = params.name
  if msg.method == "resources/read" then
    target = params.uri
  end
  local request = exchange.request
  local principal = request and request.principal
  return {
    m = msg.method,
    t = type(target) == "string" and target or "",
    a = _M.digest(args),
    p = principal == nil and "" or _M.digest(principal),
  }
end

local function describe(m, t)
  return ("%s '%s'"):format(m, t)
end

local function check_state(state, bind)
  local x = state.x
  if type(x) ~= "number" then
    invalid("requestState has no expiry", "malformed")
  end
  if clock() > x then
    invalid(("requestState expired (a round is valid for %d s): retry the request without requestState and "
      .. "inputResponses"):format(floor(ttl)), "expired")
  end
  if state.m ~= bind.m or state.t ~= bind.t then
    invalid(("requestState was issued for %s, not for this %s"):format(describe(tostring(state.m),
      tostring(state.t)), describe(bind.m, bind.t)), "other_request")
  end
  if state.a ~= bind.a then
    invalid(("requestState was issued for other arguments of %s"):format(describe(bind.m, bind.t)), "other_arguments")
  end
  if state.p ~= bind.p then
    invalid("requestState was issued to another principal", "other_principal")
  end
  if type(state.l) ~= "table" or type(state.q) ~= "table" then
    invalid("requestState is malformed", "malformed")
  end
end

--- Prepares the round of a modern request msg that may answer input_required (raises
--- -32602 for invalid inputResponses / requestState). Sets exchange.mrtr and the
--- exchange's outcome hook.
function _M.prepare(msg, exchange)
  local params = msg.params
  local responses = params.inputResponses
  if responses == nil then
    responses = {}
  elseif kind(responses) ~= "object" then
    invalid("inputResponses must be an object mapping the keys of inputRequests to the client's results",
      "invalid_input_responses")
  end
  -- The binding (digests of the arguments and the principal) is needed only to check an
  -- incoming state or to seal an outgoing one: most requests do neither.
  local bind
  local ledger, asked = {}, {}
  local text = params.requestState
  if text ~= nil then
    bind = binding(msg, exchange)
    if type(text) ~= "string" then
      invalid("requestState must be a string", "malformed")
    end
    local state, err = _M.open(text)
    if not state then
      invalid("invalid requestState: " .. err, "tampered")
    end
    check_state(state, bind)
    ledger, asked = state.l, state.q
  end
  exchange.mrtr = {
    bind = bind,         -- made on demand (see outcome)
    msg = msg,
    ledger = ledger,     -- key -> { f, r }: answers of earlier rounds
    asked = asked,       -- key -> fingerprint: the questions of the previous round
    responses = responses,
    used = {},           -- key -> { f, r }: answers taken from inputResponses in this run
    requests = {},       -- key -> request: what this run asks and nobody answered yet
    fingerprints = {},   -- key -> fingerprint of everything this run asked
    error = nil,         -- a protocol error that ends the call instead
  }
  exchange.outcome = _M.outcome
end

--- The round of an exchange, or nil when this request cannot ask for input.
function _M.round(exchange)
  return exchange.mrtr
end

local ELICIT_ACTIONS = { accept = true, decline = true, cancel = true }

-- Checks a client answer against the question's method; returns nil or a reason.
local function check_answer(method, answer)
  if kind(answer) ~= "object" then
    return "must be an object"
  end
  if method == "elicitation/create" then
    if not ELICIT_ACTIONS[answer.action] then
      return 'action must be "accept", "decline" or "cancel"'
    end
    if answer.content ~= nil and kind(answer.content) ~= "object" then
      return "content must be an object"
    end
  elseif method == "sampling/createMessage" then
    if type(answer.content) ~= "table" then
      return "content is required"
    end
  elseif method == "roots/list" then
    if kind(answer.roots) ~= "array" and not (type(answer.roots) == "table" and next(answer.roots) == nil) then
      return "roots must be an array"
    end
  end
  return nil
end

--- Records a protocol error that ends the call, and stops the handler.
function _M.fail(round, err)
  round.error = round.error or err
  error(_M.STOP, 0)
end

--- Looks up the answer to each question of list ({ { key =, request = { method, params } },
--- ... }). Returns { key = answer } when all are answered; otherwise records the missing
--- ones as this round's input requests (missing(list) is called first with them, to
--- check capabilities) and stops the handler.
function _M.resolve(round, list, missing_check)
  local answers, missing = {}, {}
  for i = 1, #list do
    local q = list[i]
    local k, request = q.key, q.request
    local fp = _M.fingerprint(request)
    local seen = round.fingerprints[k]
    if seen and seen ~= fp then
      error(("ctx: key %q was already used for another question in this call"):format(k), 0)
    end
    round.fingerprints[k] = fp
    local entry = round.ledger[k] or round.used[k]
    if entry then
      if entry.f ~= fp then
        _M.fail(round, jsonrpc.error_value(jsonrpc.INVALID_PARAMS, ("the question %q changed since the client "
          .. "answered it; retry the request without requestState"):format(k),
          { reason = "question_changed", key = k }))
      end
      answers[k] = copy(entry.r)
    else
      local answer = round.responses[k]
      if answer ~= nil then
        local was = round.asked[k]
        if was and was ~= fp then
          _M.fail(round, jsonrpc.error_value(jsonrpc.INVALID_PARAMS, ("the question %q changed since the client "
            .. "was asked; retry the request without requestState"):format(k),
            { reason = "question_changed", key = k }))
        end
        local problem = check_answer(request.method, answer)
        if problem then
          _M.fail(round, jsonrpc.error_value(jsonrpc.INVALID_PARAMS, ("inputResponses.%s is not a valid result of %s: "
            .. "%s"):format(k, request.method, problem), { reason = "invalid_input_response", key = k }))
        end
        round.used[k] = { f = fp, r = answer }
        answers[k] = copy(answer)
      else
        missing[#missing + 1] = q
      end
    end
  end
  if #missing == 0 then
    return answers
  end
  if missing_check then
    local err = missing_check(missing)
    if err then
      _M.fail(round, err)
    end
  end
  for i = 1, #missing do
    round.requests[missing[i].key] = missing[i].request
  end
  error(_M.STOP, 0)
end

--- server.response's outcome hook: an input_required result or the round's error
--- replaces whatever the method produced once the handler was stopped.
function _M.outcome(exchange, ok, result)
  local round = exchange.mrtr
  if not round then
    return ok, result
  end
  if round.error then
    return false, round.error
  end
  if next(round.requests) == nil then
    return ok, result
  end
  local ledger = {}
  for k, v in pairs(round.ledger) do
    ledger[k] = v
  end
  for k, v in pairs(round.used) do
    ledger[k] = v
  end
  local asked = {}
  for k, request in pairs(round.requests) do
    asked[k] = _M.fingerprint(request)
  end
  local bind = round.bind or binding(round.msg, exchange)
  local state = { v = 1, m = bind.m, t = bind.t, a = bind.a, p = bind.p, x = clock() + ttl, l = ledger, q = asked }
  return true, {
    resultType = "input_required",
    inputRequests = round.requests,
    requestState = _M.seal(state),
  }
end

return _M

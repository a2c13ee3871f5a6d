-- spec/helpers/wire_schema.lua — validates what moonmcp put on the wire against the MCP
-- JSON Schema of the era (/work/shared/mcp-spec/<era>/schema.json, or $MCP_SPEC_DIR), with
-- the project's own validator (moonmcp.schema).
--
--   local wire = require "helpers.wire_schema"
--   local problems, checked = wire.check(report, "2025-11-25")   -- report from helpers.peers
--   assert.same({}, problems)
--   wire.validate("2026-07-28", "CallToolResult", value) -> true | false, "path: message; ..."
--
-- Every message is checked twice: against its JSON-RPC envelope (JSONRPCResultResponse,
-- JSONRPCErrorResponse, JSONRPCNotification, JSONRPCRequest), then against the definition
-- of what it carries: a result against the result type of the request it answers (found
-- by id among the messages the client sent: tools/call -> CallToolResult, ...; on
-- 2026-07-28 a result whose resultType is "input_required" -> InputRequiredResult), a
-- notification against the definition of its method (an unknown method fails), a
-- server->client request against ServerRequest's member for its method (2025-11-25 only:
-- on 2026-07-28 the server never sends requests). The generic `Result` of the union
-- ServerResult accepts any object, so a result is never checked against the union alone.
local schema = require "moonmcp.schema"
local json = require "moonmcp.json"

local _M = {}

_M.dir = os.getenv("MCP_SPEC_DIR") or "/work/shared/mcp-spec"

local RESULTS = {
  initialize = "InitializeResult",
  ["server/discover"] = "DiscoverResult",
  ping = "EmptyResult",
  ["logging/setLevel"] = "EmptyResult",
  ["tools/list"] = "ListToolsResult",
  ["tools/call"] = "CallToolResult",
  ["prompts/list"] = "ListPromptsResult",
  ["prompts/get"] = "GetPromptResult",
  ["resources/list"] = "ListResourcesResult",
  ["resources/templates/list"] = "ListResourceTemplatesResult",
  ["resources/read"] = "ReadResourceResult",
  ["resources/subscribe"] = "EmptyResult",
  ["resources/unsubscribe"] = "EmptyResult",
  ["completion/complete"] = "CompleteResult",
  ["subscriptions/listen"] = "SubscriptionsListenResult",
}

local NOTIFICATIONS = {
  ["notifications/cancelled"] = "CancelledNotification",
  ["notifications/progress"] = "ProgressNotification",
  ["notifications/message"] = "LoggingMessageNotification",
  ["notifications/resources/updated"] = "ResourceUpdatedNotification",
  ["notifications/resources/list_changed"] = "ResourceListChangedNotification",
  ["notifications/prompts/list_changed"] = "PromptListChangedNotification",
  ["notifications/tools/list_changed"] = "ToolListChangedNotification",
  ["notifications/subscriptions/acknowledged"] = "SubscriptionsAcknowledgedNotification",
  ["notifications/elicitation/complete"] = "ElicitationCompleteNotification",
}

local REQUESTS = {
  ping = "PingRequest",
  ["sampling/createMessage"] = "CreateMessageRequest",
  ["elicitation/create"] = "ElicitRequest",
  ["roots/list"] = "ListRootsRequest",
}

local eras = {}

local function load_era(era)
  local e = eras[era]
  if e then
    return e
  end
  local path = _M.dir .. "/" .. era .. "/schema.json"
  local f = assert(io.open(path, "rb"))
  local doc = assert(json.decode(f:read("*a")))
  f:close()
  local defs = doc["$defs"] or doc.definitions
  assert(type(defs) == "table", path .. ": no $defs")
  e = { defs = defs, key = doc["$defs"] and "$defs" or "definitions", validators = {} }
  eras[era] = e
  return e
end

--- The validator of one definition of the era's schema (compiled once).
function _M.validator(era, name)
  local e = load_era(era)
  local v = e.validators[name]
  if v then
    return v
  end
  if e.defs[name] == nil then
    error(("%s has no definition %s"):format(era, name), 2)
  end
  local err
  v, err = schema.compile { [e.key] = e.defs, ["$ref"] = "#/" .. e.key .. "/" .. name }
  if not v then
    error(("cannot compile %s/%s: %s"):format(era, name, tostring(err)), 2)
  end
  e.validators[name] = v
  return v
end

--- Validates value against definition name of era: true | false, "path: message; ...".
function _M.validate(era, name, value)
  local ok, errors = _M.validator(era, name):validate(value)
  if ok then
    return true
  end
  return false, schema.format_errors(errors)
end

local function short(v)
  local s = json.encode(v)
  return #s > 300 and s:sub(1, 300) .. "..." or s
end

--- Checks every raw message of a driver report (helpers.peers) against era. Returns the
--- list of problems (strings; empty when all is well) and how many messages were checked.
function _M.check(report, era)
  local problems = {}
  local function problem(i, msg, text)
    problems[#problems + 1] = ("received[%d] %s: %s"):format(i, msg and short(msg) or "?", text)
  end
  local function expect(i, msg, name, value)
    local ok, err = _M.validate(era, name, value)
    if not ok then
      problem(i, msg, name .. ": " .. err)
    end
  end
  -- id -> method of the requests the client sent
  local methods = {}
  for _, s in ipairs(report.sent or {}) do
    local m = s.msg
    if type(m) == "table" and m.method and m.id ~= nil then
      methods[json.encode(m.id)] = m.method
    end
  end
  local checked = 0
  for i, r in ipairs(report.received or {}) do
    local m = r.msg
    if r.parseError or type(m) ~= "table" then
      problem(i, nil, "not a JSON object: " .. tostring(r.raw))
    elseif m.method ~= nil and m.id ~= nil then -- a request from the server
      checked = checked + 1
      if era ~= "2025-11-25" then
        problem(i, m, "the server sent a request, which " .. era .. " does not allow")
      else
        expect(i, m, "JSONRPCRequest", m)
        local def = REQUESTS[m.method]
        if def then
          expect(i, m, def, m)
        else
          problem(i, m, "unknown server->client request method " .. tostring(m.method))
        end
      end
    elseif m.method ~= nil then -- a notification
      checked = checked + 1
      expect(i, m, "JSONRPCNotification", m)
      local def = NOTIFICATIONS[m.method]
      if def and _M.has(era, def) then
        expect(i, m, def, m)
      else
        problem(i, m, "unknown notification method " .. tostring(m.method) .. " in " .. era)
      end
    elseif m.error ~= nil then
      checked = checked + 1
      expect(i, m, "JSONRPCErrorResponse", m)
    elseif m.result ~= nil then
      checked = checked + 1
      expect(i, m, "JSONRPCResultResponse", m)
      local method = methods[json.encode(m.id)]
      local res = m.result
      if not method then
        problem(i, m, "a result for an id the client never sent")
      elseif type(res) == "table" and res.resultType == "input_required" and _M.has(era, "InputRequiredResult") then
        expect(i, m, "InputRequiredResult", res)
      elseif RESULTS[method] and _M.has(era, RESULTS[method]) then
        expect(i, m, RESULTS[method], res)
      else
        problem(i, m, "no result definition for method " .. method .. " in " .. era)
      end
    else
      checked = checked + 1
      problem(i, m, "neither a request, a notification nor a response")
    end
  end
  return problems, checked
end

--- Whether era's schema has definition name.
function _M.has(era, name)
  return load_era(era).defs[name] ~= nil
end

return _M

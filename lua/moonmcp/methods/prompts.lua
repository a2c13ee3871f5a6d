-- moonmcp.methods.prompts — prompts/list and prompts/get, and the shaping of prompt
-- handler results.
--
-- prompts/get checks the arguments before the handler runs: they must be an object of
-- strings, every required argument present, no undeclared one (-32602 naming the
-- argument otherwise). The handler is handler(args, ctx) and returns:
--   a string                          -> one user message holding that text
--   { messages = {...}, description = } -> that result (description defaults to the
--                                        prompt's own)
--   a list of messages                -> those messages
--   nil, message                      -> -32602 carrying message (the handler refused
--                                        its arguments: "language must be lua or c")
-- A message is { role = "user"|"assistant" (default "user"), content = block }, where the
-- content is a content block (moonmcp.content), a string (a text block), or a list of
-- blocks (one message per block, same role); a bare string or content block in the list
-- is a user message. A malformed message is a bug in the script: -32603, details in the
-- log. Errors the handler raises are internal errors too (jsonrpc.raise passes through,
-- so a handler can choose its own protocol error).
local server = require "moonmcp.server"
local jsonrpc = require "moonmcp.jsonrpc"
local json = require "moonmcp.json"
local content = require "moonmcp.content"
local paginate = require "moonmcp.paginate"

local type, pairs, ipairs, error, tostring, select = type, pairs, ipairs, error, tostring, select

local _M = {}

local function invalid(message)
  jsonrpc.raise(jsonrpc.INVALID_PARAMS, message)
end

local function describe(entry)
  local def = entry.def
  return {
    name = entry.name,
    title = def.title,
    description = def.description,
    arguments = entry.arguments,
    icons = def.icons,
    _meta = def._meta,
  }
end

server.method("prompts/list", function(params, exchange)
  local items, next_cursor = paginate.page(exchange.generation.prompts, "prompts", params.cursor, describe, exchange)
  return { prompts = items, nextCursor = next_cursor }
end)

-- Raises with a message naming the prompt: the script returned something malformed.
local function bad_result(name, message)
  error(("prompt %s returned an invalid result: %s"):format(name, message), 0)
end

local function is_block(v)
  return type(v) == "table" and type(v.type) == "string"
end

-- Appends the message(s) m stands for to out.
local function add_message(name, out, m)
  if type(m) == "string" or is_block(m) then
    m = { role = "user", content = m }
  end
  if type(m) ~= "table" then
    bad_result(name, "a message must be a table, got " .. type(m))
  end
  local role = m.role or "user"
  if role ~= "user" and role ~= "assistant" then
    bad_result(name, ("role must be \"user\" or \"assistant\", got %q"):format(tostring(role)))
  end
  local c = m.content
  if type(c) == "string" then
    c = content.text(c)
  end
  local blocks = (type(c) == "table" and not is_block(c)) and c or { c }
  if #blocks == 0 then
    bad_result(name, "a message needs content")
  end
  for _, block in ipairs(blocks) do
    if type(block) == "string" then
      block = content.text(block)
    end
    local ok, err = content.check(block)
    if not ok then
      bad_result(name, err)
    end
    out[#out + 1] = { role = role, content = block, _meta = m._meta }
  end
end

--- Shapes a prompt handler's return values into a GetPromptResult.
function _M.shape(entry, n, value, message)
  local name = entry.name
  if value == nil then
    if n >= 2 and message ~= nil then
      invalid(tostring(message))
    end
    bad_result(name, "nothing (nil)")
  end
  local messages, result = json.array(), { description = entry.def.description }
  if type(value) == "string" then
    add_message(name, messages, value)
  elseif type(value) == "table" and value.messages ~= nil then
    if type(value.messages) ~= "table" then
      bad_result(name, "messages must be a list")
    end
    for _, m in ipairs(value.messages) do
      add_message(name, messages, m)
    end
    result.description = value.description or result.description
    result._meta = value._meta
  elseif type(value) == "table" and not is_block(value) and value.role == nil then
    for _, m in ipairs(value) do
      add_message(name, messages, m)
    end
  elseif type(value) == "table" then
    add_message(name, messages, value)
  else
    bad_result(name, "a " .. type(value))
  end
  result.messages = messages
  return result
end

-- Checks params.arguments against the prompt's declaration; returns the args table.
local function check_arguments(entry, args)
  if args == nil or args == json.null then
    args = {}
  elseif type(args) ~= "table" or (json.is_array(args) and #args > 0) then
    invalid("prompts/get: arguments must be an object of strings")
  end
  for k, v in pairs(args) do
    if not entry.declared[k] then
      invalid(("prompt %s has no argument %q"):format(entry.name, tostring(k)))
    end
    if type(v) ~= "string" then
      invalid(("prompt %s: argument %q must be a string"):format(entry.name, k))
    end
  end
  for _, arg in ipairs(entry.def.arguments or {}) do
    if arg.required and args[arg.name] == nil then
      invalid(("prompt %s: missing required argument %q"):format(entry.name, arg.name))
    end
  end
  return args
end

local function pack(...)
  return select("#", ...), ...
end

server.method("prompts/get", function(params, exchange, ctx)
  local name = params.name
  if type(name) ~= "string" then
    invalid("prompts/get: name must be a string")
  end
  local entry = exchange.generation.prompts[name]
  if not entry then
    invalid("unknown prompt: " .. name)
  end
  local args = check_arguments(entry, params.arguments)
  if ctx and ctx.log then
    ctx.log.prompt = name
  end
  -- Called unprotected: a raise (a bug, "cancelled", a protocol error, the host's own
  -- control flow) goes to the dispatcher, which knows what each one means.
  return _M.shape(entry, pack(entry.def.handler(args, ctx)))
end)

return _M

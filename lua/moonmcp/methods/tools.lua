-- moonmcp.methods.tools — tools/list and tools/call, and the shaping of handler results.
--
-- A handler returns:
--   a string                      -> one text content block
--   a table with a `content` field -> that result as given
--   any other value (table, number, boolean)
--                                 -> structuredContent (objects as they are; other values
--                                    as { result = value }, since structuredContent is an
--                                    object) plus a text block holding the value's JSON
--   nil, message / raises         -> an isError result carrying the message; the
--                                    traceback goes to the log, never to the client
-- Arguments are validated against the tool's input schema before the handler runs; a
-- violation is an isError result naming the offending path, so a model can correct it.
local server = require "moonmcp.server"
local jsonrpc = require "moonmcp.jsonrpc"
local json = require "moonmcp.json"
local log = require "moonmcp.log"
local deadline = require "moonmcp.deadline"
local paginate = require "moonmcp.paginate"

local type, xpcall, traceback, tostring, select = type, xpcall, debug.traceback, tostring, select

local _M = {}

local function text_block(text)
  return { type = "text", text = text }
end

function _M.error_result(message)
  return { content = json.array { text_block(message) }, isError = true }
end

-- "file.lua:12: message" -> "message": positions are for the log, not for the model.
local function client_message(err)
  if type(err) ~= "string" then
    if type(err) == "table" and type(err.message) == "string" then
      return err.message
    end
    return tostring(err)
  end
  return (err:gsub("^[^\n:]+:%d+: ", ""))
end

--- Shapes a handler's return values into a CallToolResult.
function _M.shape(n, value, message)
  if value == nil then
    if n >= 2 and message ~= nil then
      return _M.error_result(client_message(message))
    end
    return { content = json.array() }
  end
  local t = type(value)
  if t == "string" then
    return { content = json.array { text_block(value) } }
  end
  if t == "table" and value.content ~= nil then
    if type(value.content) == "table" then
      json.array(value.content)
    end
    return value
  end
  local structured = value
  if t ~= "table" or json.is_array(value) or (#value > 0) then
    structured = { result = value }
  end
  return { content = json.array { text_block(json.encode(value)) }, structuredContent = structured }
end

local function describe(entry)
  local def = entry.def
  return {
    name = entry.name,
    title = def.title,
    description = def.description,
    inputSchema = entry.input_schema,
    outputSchema = entry.output_schema,
    annotations = def.annotations,
    icons = def.icons,
    _meta = def._meta,
  }
end

server.method("tools/list", function(params, exchange)
  local tools, next_cursor = paginate.page(exchange.generation.tools, "tools", params.cursor, describe, exchange)
  return { tools = tools, nextCursor = next_cursor }
end)

local function pack(ok, ...)
  return ok, select("#", ...), ...
end

local function first_error(errors)
  local e = errors and errors[1]
  if not e then
    return "invalid arguments"
  end
  return ((e.path ~= "" and e.path or "/") .. ": " .. e.message)
end

-- tools/call is cut in three so that the JIT compiles the host's part: a trace cannot
-- enter a handler while the watchdog is on (scripts run uncompiled then), and the
-- function that calls the handler is left to the interpreter. So everything before the
-- handler and everything after it are functions of their own, small enough to trace.

-- The tool and its checked arguments, or nil and an isError result.
local function prepare(params, exchange, ctx)
  local name = params.name
  if type(name) ~= "string" then
    jsonrpc.raise(jsonrpc.INVALID_PARAMS, "tools/call: name must be a string")
  end
  local entry = exchange.generation.tools[name]
  if not entry then
    jsonrpc.raise(jsonrpc.INVALID_PARAMS, "unknown tool: " .. name)
  end
  local args = params.arguments
  if args == nil then
    args = {}
  elseif type(args) ~= "table" or json.is_array(args) then
    return nil, _M.error_result("invalid arguments: arguments must be an object")
  end
  if ctx.log then
    ctx.log.tool = name
  end
  if entry.input_validator then
    local ok, errors = entry.input_validator:validate(args)
    if not ok then
      return nil, _M.error_result("invalid arguments: " .. first_error(errors))
    end
  end
  return entry, args
end

-- The CallToolResult for what the handler did (ok, n, value, message: as pack(xpcall(...))).
local function conclude(entry, id, ok, n, value, message)
  if not ok then
    if value == "cancelled" or (type(value) == "string" and value:match("^cancelled\n")) then
      local limit = id and deadline.expired(id)
      if limit then
        return _M.error_result(("deadline exceeded: the tool did not finish within %g s"):format(limit))
      end
      error("cancelled", 0)
    end
    log.error("tool " .. entry.name .. " raised", { error = tostring(value) })
    local first = type(value) == "string" and value:match("^[^\n]*") or value
    return _M.error_result(client_message(first))
  end
  local result = _M.shape(n, value, message)
  if entry.output_validator and not result.isError then
    if result.structuredContent == nil then
      return _M.error_result("tool " .. entry.name .. " declares an output schema but returned no structured content")
    end
    local valid, errors = entry.output_validator:validate(result.structuredContent)
    if not valid then
      log.error("tool " .. entry.name .. " returned output that violates its output schema",
        { error = first_error(errors) })
      return _M.error_result("output does not match the tool's output schema: " .. first_error(errors))
    end
  end
  return result
end

server.method("tools/call", function(params, exchange, ctx)
  local entry, args = prepare(params, exchange, ctx)
  if not entry then
    return args -- the isError result
  end
  local id = exchange.call_id -- nil when dispatched outside a call (some unit specs)
  local own = entry.def.timeout -- the call's default deadline is armed by moonmcp.call
  local disarm = id and type(own) == "number" and own > 0 and deadline.arm(id, own)
  local ok, n, value, message = pack(xpcall(entry.def.handler, traceback, args, ctx))
  if disarm then
    disarm()
  end
  return conclude(entry, id, ok, n, value, message)
end)

return _M

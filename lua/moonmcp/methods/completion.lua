-- moonmcp.methods.completion — completion/complete for prompt arguments (ref/prompt) and
-- resource template variables (ref/resource).
--
-- A completer is declared on the prompt argument (arguments[i].complete), in the
-- prompt's or template's `complete` table (name -> completer), and is either
--   a list of strings  -> the ones starting with the typed value (ignoring ASCII case),
--                         in the declared order
--   fn(value, ctx, context_args) -> a list of strings, or { values =, total =, hasMore = };
--                         runs in the call's coroutine, so it may yield (sleep, I/O)
-- context_args is params.context.arguments (the values already chosen; {} when absent).
-- At most MAX_VALUES values are sent; when there were more, hasMore is true and total
-- counts them all. An argument without a completer answers an empty list: clients ask
-- for every argument, and "no suggestions" is not an error.
--
-- ref/resource names a template by its text; the modern era also allows a concrete URI,
-- which is matched against the templates (the template that would serve it answers).
local server = require "moonmcp.server"
local jsonrpc = require "moonmcp.jsonrpc"
local json = require "moonmcp.json"
local resources = require "moonmcp.methods.resources"

local type, ipairs, tostring, error, lower = type, ipairs, tostring, error, string.lower

local _M = {}

_M.MAX_VALUES = 100

local function invalid(message)
  jsonrpc.raise(jsonrpc.INVALID_PARAMS, message)
end

-- The completers table of what ref points at.
local function completers_of(gen, ref)
  if type(ref) ~= "table" then
    invalid("completion/complete: ref must be an object")
  end
  if ref.type == "ref/prompt" then
    if type(ref.name) ~= "string" then
      invalid("completion/complete: ref.name must be a string")
    end
    local entry = gen.prompts[ref.name]
    if not entry then
      invalid("unknown prompt: " .. ref.name)
    end
    return entry.completers
  elseif ref.type == "ref/resource" then
    if type(ref.uri) ~= "string" then
      invalid("completion/complete: ref.uri must be a string")
    end
    local entry = gen.templates[ref.uri]
    if not entry then
      local found, vars = resources.resolve(gen, ref.uri)
      entry = vars and found
    end
    if not entry then
      if gen.resources[ref.uri] then
        return {} -- a static resource: nothing to complete
      end
      invalid("unknown resource template: " .. ref.uri)
    end
    return entry.completers
  end
  invalid("completion/complete: ref.type must be \"ref/prompt\" or \"ref/resource\", got " .. tostring(ref.type))
end

local function starts_with_ci(s, prefix)
  return #s >= #prefix and lower(s:sub(1, #prefix)) == lower(prefix)
end

--- Applies a completer to value; returns the CompleteResult's `completion` object.
function _M.complete(completer, value, ctx, context_args)
  local all, total, has_more = {}, nil, nil
  if type(completer) == "table" then
    for _, v in ipairs(completer) do
      if starts_with_ci(v, value) then
        all[#all + 1] = v
      end
    end
  elseif type(completer) == "function" then
    local r = completer(value, ctx, context_args)
    if r == nil then
      r = {}
    end
    if type(r) ~= "table" then
      error("a completion function returned a " .. type(r) .. " (expected a list of strings)", 0)
    end
    local list = r
    if r.values ~= nil then
      list = r.values
      total, has_more = r.total, r.hasMore
      if type(list) ~= "table" then
        error("a completion function returned values that are not a list", 0)
      end
    end
    for _, v in ipairs(list) do
      if type(v) == "number" then
        v = tostring(v)
      elseif type(v) ~= "string" then
        error("a completion function returned a " .. type(v) .. " value (expected strings)", 0)
      end
      all[#all + 1] = v
    end
  end
  local values = json.array()
  for i = 1, math.min(#all, _M.MAX_VALUES) do
    values[i] = all[i]
  end
  if #all > _M.MAX_VALUES then
    has_more = true
    if type(total) ~= "number" or total < #all then
      total = #all
    end
  end
  if type(total) ~= "number" then
    total = #all
  end
  return { values = values, total = total, hasMore = has_more == true }
end

server.method("completion/complete", function(params, exchange, ctx)
  local completers = completers_of(exchange.generation, params.ref)
  local argument = params.argument
  if type(argument) ~= "table" or type(argument.name) ~= "string" then
    invalid("completion/complete: argument must be { name = string, value = string }")
  end
  local value = argument.value
  if value == nil or value == json.null then
    value = ""
  elseif type(value) ~= "string" then
    invalid("completion/complete: argument.value must be a string")
  end
  local context_args = type(params.context) == "table" and params.context.arguments
  if type(context_args) ~= "table" then
    context_args = {}
  end
  return { completion = _M.complete(completers[argument.name], value, ctx, context_args) }
end)

return _M

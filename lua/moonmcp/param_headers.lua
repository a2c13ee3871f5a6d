-- moonmcp.param_headers — tool parameters mirrored into HTTP headers (2026-07-28,
-- `x-mcp-header` in a property of a tool's inputSchema; Mcp-Param-{Name} on the wire).
--
-- collect(schema) finds the annotated properties when a tool is loaded, and refuses
-- annotations the spec forbids (so a bad tool fails at load, with its file and line):
-- a name that is not an HTTP token, a duplicate (case-insensitive), a property that is
-- not a string, integer or boolean, or one not reachable through `properties` alone.
-- check(list, args, headers) is the server-side validation of a modern tools/call on
-- HTTP: for every annotated parameter present in the arguments, the header must be there,
-- be clean ASCII, and (after decoding the =?base64?...?= form) equal the value — integers
-- compared as numbers, booleans as true/false. A parameter absent or null expects no header.
local base64 = require "moonmcp.base64"
local json = require "moonmcp.json"

local type, pairs, tostring, tonumber, sort, concat = type, pairs, tostring, tonumber, table.sort, table.concat

local _M = {}

local TOKEN = "^[!#$%%&'*+%-.^_`|~%w]+$"

local function walk(schema, path, out, seen)
  local props = type(schema) == "table" and schema.properties
  if type(props) ~= "table" then
    return true
  end
  local names = {}
  for name in pairs(props) do
    names[#names + 1] = name
  end
  sort(names)
  for _, name in ipairs(names) do
    local prop = props[name]
    local p = {}
    for i = 1, #path do
      p[i] = path[i]
    end
    p[#p + 1] = name
    if type(prop) == "table" then
      local header = prop["x-mcp-header"]
      if header ~= nil then
        if type(header) ~= "string" or not header:match(TOKEN) then
          return nil, ("x-mcp-header of %s must be an HTTP token"):format(concat(p, "."))
        end
        if prop.type ~= "string" and prop.type ~= "integer" and prop.type ~= "boolean" then
          return nil, ("x-mcp-header %q: the parameter must be of type string, integer or boolean"):format(header)
        end
        local key = "mcp-param-" .. header:lower()
        if seen[key] then
          return nil, ("x-mcp-header %q is used twice"):format(header)
        end
        seen[key] = true
        out[#out + 1] = { header = key, name = header, path = p, type = prop.type }
      end
      local ok, err = walk(prop, p, out, seen)
      if not ok then
        return nil, err
      end
    end
  end
  return true
end

--- The annotated parameters of an input schema: a list (empty when none), or nil, err.
function _M.collect(schema)
  local out = {}
  local ok, err = walk(schema, {}, out, {})
  if not ok then
    return nil, err
  end
  return out
end

local function value_at(args, path)
  local v = args
  for i = 1, #path do
    if type(v) ~= "table" then
      return nil
    end
    v = v[path[i]]
  end
  return v
end

local function clean(s)
  return not s:find("[^\t\32-\126]")
end

--- Validates the Mcp-Param-* headers of a call. Returns true, or nil, message.
function _M.check(list, args, headers)
  for i = 1, #list do
    local p = list[i]
    local value = value_at(args, p.path)
    local raw = headers[p.header]
    if value == nil or value == json.null then -- luacheck: ignore 542 (no value: no header expected)
    elseif not raw then
      return nil, ("Mcp-Param-%s header is required (the arguments carry %s)"):format(p.name, concat(p.path, "."))
    else
      raw = raw:match("^[ \t]*(.-)[ \t]*$")
      if not clean(raw) then
        return nil, ("Mcp-Param-%s header holds invalid characters"):format(p.name)
      end
      local inner = raw:match("^=%?base64%?(.*)%?=$")
      local text = raw
      if inner then
        text = base64.is_valid(inner) and base64.decode(inner) or nil
        if not text then
          return nil, ("Mcp-Param-%s header is not valid base64"):format(p.name)
        end
      end
      local same
      if type(value) == "number" then
        same = tonumber(text) == value
      elseif type(value) == "boolean" then
        same = text == tostring(value)
      else
        same = text == value
      end
      if not same then
        return nil, ("Mcp-Param-%s header value '%s' does not match body value '%s'"):format(p.name, text,
          tostring(value))
      end
    end
  end
  return true
end

return _M

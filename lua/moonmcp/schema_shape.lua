-- moonmcp.schema_shape — makes a JSON Schema written as a Lua table encode as written.
--
-- In Lua, `required = {}` is an empty table and would encode as {}; in a schema it is an
-- array. normalize(doc) returns a deep copy of doc in which the values of array-valued
-- keywords (required, enum, type lists, prefixItems, allOf, anyOf, oneOf, examples,
-- dependentRequired lists) are marked as JSON arrays, so inputSchema is sent exactly as
-- the author wrote it. Everything else is copied as is.
local json = require "moonmcp.json"
local schema = require "moonmcp.schema"

local type, pairs = type, pairs

local _M = {}

-- keyword -> true when its value is an array of values
local ARRAY_VALUED = {
  required = true, enum = true, type = true, examples = true,
}
-- keyword -> true when its value is an array of subschemas
local SCHEMA_ARRAYS = { prefixItems = true, allOf = true, anyOf = true, oneOf = true }
-- keyword -> true when its value is a map of name -> subschema
local SCHEMA_MAPS = { properties = true, patternProperties = true, ["$defs"] = true, definitions = true,
  dependentSchemas = true }
-- keyword -> true when its value is a single subschema
local SCHEMA_ONE = { items = true, additionalProperties = true, contains = true, propertyNames = true,
  ["not"] = true, ["if"] = true, ["then"] = true, ["else"] = true, unevaluatedItems = true,
  unevaluatedProperties = true, additionalItems = true }

local copy_value

local function copy_schema(s)
  if type(s) ~= "table" then
    return s
  end
  local c = {}
  for k, v in pairs(s) do
    if ARRAY_VALUED[k] and type(v) == "table" then
      c[k] = json.array(copy_value(v))
    elseif SCHEMA_ARRAYS[k] and type(v) == "table" then
      local list = json.array()
      for i = 1, #v do
        list[i] = copy_schema(v[i])
      end
      c[k] = list
    elseif SCHEMA_MAPS[k] and type(v) == "table" then
      local map = {}
      for name, sub in pairs(v) do
        map[name] = copy_schema(sub)
      end
      c[k] = map
    elseif SCHEMA_ONE[k] then
      c[k] = copy_schema(v)
    elseif k == "dependentRequired" and type(v) == "table" then
      local map = {}
      for name, list in pairs(v) do
        map[name] = type(list) == "table" and json.array(copy_value(list)) or list
      end
      c[k] = map
    else
      c[k] = copy_value(v)
    end
  end
  return c
end

function copy_value(v)
  if type(v) ~= "table" then
    return v
  end
  local c = {}
  for k, x in pairs(v) do
    c[k] = copy_value(x)
  end
  if json.is_array(v) then
    json.array(c)
  end
  return c
end

--- Returns a copy of the schema doc that encodes as the author wrote it.
_M.normalize = copy_schema

--- Compiles doc into a validator (moonmcp.schema), or returns nil, err for an invalid
--- schema. Validators take the value and return true or false, errors.
function _M.compile(doc)
  return schema.compile(copy_schema(doc))
end

return _M

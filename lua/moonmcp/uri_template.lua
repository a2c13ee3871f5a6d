-- moonmcp.uri_template — RFC 6570 URI templates: expansion (levels 1-4) and the reverse,
-- matching a concrete URI against a template to recover its variables (what
-- resources/read needs to route a URI to the template that serves it).
--
--   local t = assert(uri_template.compile("file:///logs/{name}{?lines}"))
--   t:expand { name = "app.log", lines = 20 }   --> "file:///logs/app.log?lines=20"
--   t:match "file:///logs/app.log?lines=20"     --> { name = "app.log", lines = "20" }
--   t.variables                                 --> { "name", "lines" } (template order)
--
-- Expressions: {var} (simple), {+var} (reserved), {#var} (fragment), {.var} (label),
-- {/var} (path segment), {;var} (path parameter), {?var} (query), {&var} (query
-- continuation); several variables per expression ({x,y}); modifiers {var:3} (prefix)
-- and {var*} (explode). Values for expand: strings, numbers, booleans, lists (Lua
-- sequences) and maps (string keys, expanded in sorted key order); nil, json.null,
-- empty lists and empty maps are undefined.
--
-- Matching is the reverse of expansion, with these rules:
--   * {var} and {+var} match at least one character; {var} never crosses "/", "?" or
--     "#" (one path segment), {+var} and {#var} may hold anything.
--   * The optional expressions ({#...} {.x} {/x} {;x} {?x} {&x}) may be absent; their
--     variables are then missing from the result.
--   * Query-style expressions accept their names in any order; a name the template does
--     not declare makes the match fail (unless an exploded variable takes it).
--   * Values are percent-decoded. A decoded value may hold any byte ("%2F" is "/"), so a
--     handler that maps a variable to a file path must still guard against traversal.
--   * Several variables in one simple expression split on ","; an exploded variable gives
--     a list (or, in a query-style expression, a map of the extra names).
--   * When several splits are possible, an expression followed by a literal takes the
--     longest value that still lets the rest match; an expression followed by another
--     expression takes the shortest ("doc:{base}{.ext}" splits "doc:a.b" into a, b).
--     Matching gives up after a fixed number of steps, so a hostile URI cannot make it
--     run long.
local json = require "moonmcp.json"

local type, tostring, pairs, ipairs, next, tonumber, setmetatable, sort, concat, error, byte, char, format =
  type, tostring, pairs, ipairs, next, tonumber, setmetatable, table.sort, table.concat, error, string.byte,
  string.char, string.format

local _M = {}

-- RFC 6570 Appendix A, per operator.
local OPS = {
  [""] = { first = "", sep = ",", named = false, ifemp = "", reserved = false },
  ["+"] = { first = "", sep = ",", named = false, ifemp = "", reserved = true },
  ["#"] = { first = "#", sep = ",", named = false, ifemp = "", reserved = true },
  ["."] = { first = ".", sep = ".", named = false, ifemp = "", reserved = false },
  ["/"] = { first = "/", sep = "/", named = false, ifemp = "", reserved = false },
  [";"] = { first = ";", sep = ";", named = true, ifemp = "", reserved = false },
  ["?"] = { first = "?", sep = "&", named = true, ifemp = "=", reserved = false },
  ["&"] = { first = "&", sep = "&", named = true, ifemp = "=", reserved = false },
}

-- Characters a matched region may not contain, per operator (structural delimiters).
local FORBIDDEN = {
  [""] = "[/?#]", ["+"] = nil, ["#"] = nil, ["."] = "[/?#]", ["/"] = "[?#]", [";"] = "[/?#]",
  ["?"] = "#", ["&"] = "#",
}

local RESERVED_OPS = { ["="] = true, [","] = true, ["!"] = true, ["@"] = true, ["|"] = true }

-- Candidate splits tried per match before giving up.
local MAX_STEPS = 100000

---------------------------------------------------------------------------------------
-- Parsing

local function parse_expression(body, template)
  local op = body:sub(1, 1)
  if RESERVED_OPS[op] then
    return nil, ("operator %q is reserved in %q"):format(op, template)
  end
  if OPS[op] and op ~= "" then
    body = body:sub(2)
  else
    op = ""
  end
  if body == "" then
    return nil, ("empty expression in %q"):format(template)
  end
  local vars = {}
  for spec in (body .. ","):gmatch("([^,]*),") do
    local name, modifier = spec:match("^([%w_%.%%]+)(.*)$")
    if not name or name:sub(1, 1) == "." or name:find("..", 1, true) or name:find("%%[^%x]")
      or name:find("%%%x?$") then
      return nil, ("invalid variable name %q in %q"):format(spec, template)
    end
    local v = { name = name }
    if modifier == "*" then
      v.explode = true
    elseif modifier ~= "" then
      local n = modifier:match("^:(%d+)$")
      n = tonumber(n)
      if not n or n < 1 or n > 9999 then
        return nil, ("invalid modifier %q in %q"):format(modifier, template)
      end
      v.prefix = n
    end
    vars[#vars + 1] = v
  end
  return { op = op, vars = vars }
end

local Template = {}
Template.__index = Template

--- Compiles a template. Returns the template object, or nil and a message.
function _M.compile(template)
  if type(template) ~= "string" then
    return nil, "a URI template must be a string"
  end
  local parts, variables, seen, literal_length = {}, {}, {}, 0
  local pos, n = 1, #template
  while pos <= n do
    local open = template:find("[{}]", pos)
    if not open then
      parts[#parts + 1] = template:sub(pos)
      literal_length = literal_length + (n - pos + 1)
      break
    end
    if template:sub(open, open) == "}" then
      return nil, ("unmatched \"}\" at offset %d in %q"):format(open - 1, template)
    end
    if open > pos then
      parts[#parts + 1] = template:sub(pos, open - 1)
      literal_length = literal_length + (open - pos)
    end
    local close = template:find("}", open + 1, true)
    if not close then
      return nil, ("unclosed \"{\" at offset %d in %q"):format(open - 1, template)
    end
    local body = template:sub(open + 1, close - 1)
    if body:find("{", 1, true) then
      return nil, ("nested \"{\" at offset %d in %q"):format(open - 1, template)
    end
    local expr, err = parse_expression(body, template)
    if not expr then
      return nil, err
    end
    for _, v in ipairs(expr.vars) do
      if not seen[v.name] then
        seen[v.name] = true
        variables[#variables + 1] = v.name
      end
    end
    parts[#parts + 1] = expr
    pos = close + 1
  end
  -- Two literal parts never sit side by side (the loop appends literals between
  -- expressions only), which match() relies on.
  return setmetatable({ template = template, parts = parts, variables = variables,
    literal_length = literal_length }, Template)
end

--- Does s contain template expressions (anything between braces)?
function _M.is_template(s)
  return type(s) == "string" and s:find("{", 1, true) ~= nil
end

---------------------------------------------------------------------------------------
-- Expansion

local function encoder(reserved)
  -- unreserved always; reserved characters and existing %XX triplets too for + and #
  local keep = reserved and "[%w%-%._~:/%?#%[%]@!%$&'%(%)%*%+,;=]" or "[%w%-%._~]"
  return function(s)
    local out, i, n = {}, 1, #s
    while i <= n do
      local c = s:sub(i, i)
      if reserved and c == "%" and s:sub(i + 1, i + 2):match("^%x%x$") then
        out[#out + 1] = s:sub(i, i + 2)
        i = i + 3
      else
        out[#out + 1] = c:find(keep) and c or format("%%%02X", byte(c))
        i = i + 1
      end
    end
    return concat(out)
  end
end

local ENCODE = { [false] = encoder(false), [true] = encoder(true) }

-- The first n characters (code points) of a UTF-8 string.
local function utf8_prefix(s, n)
  local i, count = 1, 0
  while i <= #s do
    if count == n then
      return s:sub(1, i - 1)
    end
    local b = byte(s, i)
    i = i + (b >= 0xF0 and 4 or b >= 0xE0 and 3 or b >= 0xC0 and 2 or 1)
    count = count + 1
  end
  return s
end

local function scalar(v)
  local t = type(v)
  return t == "string" or t == "number" or t == "boolean"
end

-- Classifies a value: "undef" | "string" | "list" | "map".
local function kind_of(v)
  if v == nil or v == json.null then
    return "undef"
  end
  if scalar(v) then
    return "string"
  end
  if type(v) == "table" then
    if next(v) == nil then
      return "undef"
    end
    if json.is_array(v) or v[1] ~= nil then
      return "list"
    end
    return "map"
  end
  error("uri_template.expand: cannot expand a " .. type(v), 3)
end

local function sorted_keys(map)
  local keys = {}
  for k in pairs(map) do
    keys[#keys + 1] = tostring(k)
  end
  sort(keys)
  return keys
end

local function expand_expression(expr, vars)
  local op = OPS[expr.op]
  local enc = ENCODE[op.reserved]
  local out = {}
  for _, v in ipairs(expr.vars) do
    local value = vars[v.name]
    local kind = kind_of(value)
    if kind ~= "undef" then
      local piece
      if kind == "string" then
        local s = tostring(value)
        if v.prefix then
          s = utf8_prefix(s, v.prefix)
        end
        if op.named then
          piece = v.name .. (s == "" and op.ifemp or "=" .. enc(s))
        else
          piece = enc(s)
        end
      elseif not v.explode then
        local items = {}
        if kind == "list" then
          for i = 1, #value do
            items[#items + 1] = enc(tostring(value[i]))
          end
        else
          for _, k in ipairs(sorted_keys(value)) do
            items[#items + 1] = enc(k) .. "," .. enc(tostring(value[k]))
          end
        end
        local joined = concat(items, ",")
        piece = op.named and (v.name .. (joined == "" and op.ifemp or "=" .. joined)) or joined
      else
        local items = {}
        if kind == "list" then
          for i = 1, #value do
            local s = tostring(value[i])
            items[#items + 1] = op.named and (v.name .. (s == "" and op.ifemp or "=" .. enc(s))) or enc(s)
          end
        else
          for _, k in ipairs(sorted_keys(value)) do
            local s = tostring(value[k])
            items[#items + 1] = op.named and (enc(k) .. (s == "" and op.ifemp or "=" .. enc(s)))
              or (enc(k) .. "=" .. enc(s))
          end
        end
        piece = concat(items, op.sep)
      end
      out[#out + 1] = piece
    end
  end
  if #out == 0 then
    return ""
  end
  return op.first .. concat(out, op.sep)
end

--- Expands the template with vars (a table: name -> value).
function Template:expand(vars)
  vars = vars or {}
  local out = {}
  for i, part in ipairs(self.parts) do
    out[i] = type(part) == "string" and part or expand_expression(part, vars)
  end
  return concat(out)
end

--- Expands template (a string) with vars. Raises on an invalid template.
function _M.expand(template, vars)
  local t, err = _M.compile(template)
  if not t then
    error("uri_template.expand: " .. err, 2)
  end
  return t:expand(vars)
end

---------------------------------------------------------------------------------------
-- Matching

local function hex(h)
  return char(tonumber(h, 16))
end

local function decode(s)
  return (s:gsub("%%(%x%x)", hex))
end
_M.percent_decode = decode

local function split(s, sep)
  local out = {}
  local start = 1
  while true do
    local i = s:find(sep, start, true)
    if not i then
      out[#out + 1] = s:sub(start)
      return out
    end
    out[#out + 1] = s:sub(start, i - 1)
    start = i + #sep
  end
end

-- Parses the region of a named expression (";", "?", "&") into out. Returns true/false.
local function parse_named(expr, op, body, out)
  local by_name, exploded = {}, nil
  for _, v in ipairs(expr.vars) do
    by_name[v.name] = v
    if v.explode then
      exploded = exploded or v
    end
  end
  for _, item in ipairs(split(body, op.sep)) do
    local name, value = item:match("^([^=]*)=(.*)$")
    if not name then
      name, value = item, ""
    end
    name, value = decode(name), decode(value)
    local v = by_name[name]
    if v and not v.explode then
      if out[name] ~= nil then
        return false
      end
      out[name] = value
    elseif v then -- {?list*}: the exploded variable's own name, repeated
      local list = out[name]
      if list == nil then
        list = json.array()
        out[name] = list
      elseif not json.is_array(list) then
        return false
      end
      list[#list + 1] = value
    elseif exploded then -- {?keys*}: any other name goes into the exploded map
      local map = out[exploded.name]
      if map == nil then
        map = {}
        out[exploded.name] = map
      elseif json.is_array(map) then
        return false
      end
      map[name] = value
    else
      return false
    end
  end
  return true
end

-- Parses the text a whole expression matched; returns a table of assignments or nil.
local function parse_region(expr, region)
  local op = OPS[expr.op]
  local out = {}
  if region == "" then
    -- only the optional operators may expand to nothing
    return op.first ~= "" and out or nil
  end
  if op.first ~= "" then
    if region:sub(1, 1) ~= op.first then
      return nil
    end
    region = region:sub(2)
  end
  if op.named then
    return parse_named(expr, op, region, out) and out or nil
  end
  local vars = expr.vars
  if #vars == 1 then
    local v = vars[1]
    if v.explode then
      local list = json.array()
      for i, item in ipairs(split(region, op.sep)) do
        list[i] = decode(item)
      end
      out[v.name] = list
    else
      local value = decode(region)
      if v.prefix and #utf8_prefix(value, v.prefix) < #value then
        return nil
      end
      out[v.name] = value
    end
    return out
  end
  local items = split(region, op.sep)
  for i, v in ipairs(vars) do
    if v.explode and i == #vars then
      local list = json.array()
      for j = i, #items do
        list[#list + 1] = decode(items[j])
      end
      out[v.name] = #list > 0 and list or nil
      return out
    end
    if items[i] ~= nil then
      out[v.name] = decode(items[i])
    end
  end
  if #items > #vars then
    return nil
  end
  return out
end

-- Backtracking matcher over the parts; state = { steps = n }. Returns true and fills
-- found on success.
local function match_from(parts, i, uri, pos, found, state)
  state.steps = state.steps + 1
  if state.steps > MAX_STEPS then
    return false
  end
  local part = parts[i]
  if part == nil then
    return pos == #uri + 1
  end
  if type(part) == "string" then
    if uri:sub(pos, pos + #part - 1) ~= part then
      return false
    end
    return match_from(parts, i + 1, uri, pos + #part, found, state)
  end
  -- the farthest this expression's region may extend
  local limit = #uri
  local forbidden = FORBIDDEN[part.op]
  if forbidden then
    local stop = uri:find(forbidden, pos)
    if stop then
      limit = stop - 1
    end
  end
  local nextp = parts[i + 1]
  -- Before a literal (or the end) the region is as long as possible; before another
  -- expression it is as short as possible, so an optional expression such as {.ext}
  -- or {?q} gets the text it can take.
  local first, last, step = limit, pos - 1, -1
  if type(nextp) == "table" then
    first, last, step = pos - 1, limit, 1
  end
  for e = first, last, step do
    state.steps = state.steps + 1
    if state.steps > MAX_STEPS then
      return false
    end
    local ok = true
    if nextp == nil then
      ok = e == #uri
    elseif type(nextp) == "string" then
      ok = uri:sub(e + 1, e + #nextp) == nextp
    end
    if ok then
      local assigned = parse_region(part, uri:sub(pos, e))
      if assigned and match_from(parts, i + 1, uri, e + 1, found, state) then
        for k, v in pairs(assigned) do
          found[k] = v
        end
        return true
      end
    end
    if nextp == nil then
      break -- only e == #uri could succeed
    end
  end
  return false
end

--- Matches uri against the template. Returns the table of variables (name -> decoded
--- string, or a list / map for exploded variables), or nil when it does not match.
function Template:match(uri)
  if type(uri) ~= "string" then
    return nil
  end
  local found = {}
  if match_from(self.parts, 1, uri, 1, found, { steps = 0 }) then
    return found
  end
  return nil
end

--- Matches uri against template (a string). Raises on an invalid template.
function _M.match(template, uri)
  local t, err = _M.compile(template)
  if not t then
    error("uri_template.match: " .. err, 2)
  end
  return t:match(uri)
end

return _M

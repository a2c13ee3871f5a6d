-- moonmcp.loader — loading tool scripts into a generation (DESIGN §6).
--
-- A script file returns a table of definitions: { tools = {...}, prompts = {...},
-- resources = {...}, templates = {...} }. load(paths) loads every file (a directory
-- means every *.lua below it, in sorted order, except *_spec.lua and names starting with
-- "." or "_"), each in its own environment (globals a script sets stay in that script),
-- validates every definition and returns a whole new generation, or nil and the list of
-- errors, each naming its file and, when known, its line. Nothing is half-loaded: one
-- error anywhere and no generation is returned.
local core = require "moonmcp.core"
local schema_shape = require "moonmcp.schema_shape"

local type, pairs, ipairs, tostring, setmetatable, setfenv, loadfile, xpcall, sort, debug_getinfo =
  type, pairs, ipairs, tostring, setmetatable, setfenv, loadfile, xpcall, table.sort, debug.getinfo

local _M = {}

local KINDS = { "tools", "prompts", "resources", "templates" }
local KNOWN = { tools = true, prompts = true, resources = true, templates = true }

-- Lists the *.lua files under dir, recursively, sorted.
local function list_dir(dir, out)
  local names = core.scandir(dir) or {}
  sort(names)
  for _, name in ipairs(names) do
    if name:sub(1, 1) ~= "." and name:sub(1, 1) ~= "_" then
      local path = dir .. "/" .. name
      local kind = core.filetype(path)
      if kind == "directory" then
        list_dir(path, out)
      elseif kind == "file" and name:match("%.lua$") and not name:match("_spec%.lua$") then
        out[#out + 1] = path
      end
    end
  end
end

--- Expands paths (files and directories) into the list of script files, or nil, err.
function _M.expand(paths)
  local files = {}
  for _, p in ipairs(paths) do
    p = p:gsub("/+$", "")
    local kind, err = core.filetype(p)
    if kind == "directory" then
      list_dir(p, files)
    elseif kind == "file" then
      files[#files + 1] = p
    else
      return nil, { { file = p, message = err or "not a file or directory" } }
    end
  end
  return files
end

local function line_of(fn)
  if type(fn) == "function" then
    local info = debug_getinfo(fn, "S")
    return info and info.linedefined
  end
end

local NAME = "^[%w_%-%.]+$"

local function check_tool(name, def, add)
  if type(name) ~= "string" or not name:match(NAME) or #name > 128 then
    return add(("tool name %q must be 1-128 characters of A-Z a-z 0-9 _ - ."):format(tostring(name)))
  end
  if type(def) ~= "table" then
    return add(("tool %q: the definition must be a table"):format(name))
  end
  local line = line_of(def.handler)
  if type(def.handler) ~= "function" then
    return add(("tool %q: handler must be a function"):format(name))
  end
  for _, field in ipairs({ "description", "title" }) do
    if def[field] ~= nil and type(def[field]) ~= "string" then
      return add(("tool %q: %s must be a string"):format(name, field), line)
    end
  end
  for _, field in ipairs({ "input", "output" }) do
    local s = def[field]
    if s ~= nil then
      if type(s) ~= "table" then
        return add(("tool %q: %s must be a JSON Schema table"):format(name, field), line)
      end
      if s.type ~= "object" then
        return add(("tool %q: %s schema must have type = \"object\""):format(name, field), line)
      end
      local validator, err = schema_shape.compile(s)
      if not validator then
        return add(("tool %q: %s schema: %s"):format(name, field, err), line)
      end
    end
  end
  if def.annotations ~= nil and type(def.annotations) ~= "table" then
    return add(("tool %q: annotations must be a table"):format(name), line)
  end
  return {
    name = name,
    def = def,
    input_schema = schema_shape.normalize(def.input or { type = "object" }),
    output_schema = def.output and schema_shape.normalize(def.output),
    input_validator = def.input and schema_shape.compile(def.input),
    output_validator = def.output and schema_shape.compile(def.output),
  }
end

local CHECKS = { tools = check_tool }

--- Loads one file into defs (kind -> name -> def, with def.file set). Appends errors.
local function load_file(path, defs, origin, errors)
  local chunk, err = loadfile(path)
  if not chunk then
    errors[#errors + 1] = { file = path, message = err }
    return
  end
  setfenv(chunk, setmetatable({}, { __index = _G }))
  local ok, ret = xpcall(chunk, debug.traceback)
  if not ok then
    errors[#errors + 1] = { file = path, message = tostring(ret) }
    return
  end
  if type(ret) ~= "table" then
    errors[#errors + 1] = { file = path, message = "a script must return a table of definitions (tools, prompts, resources, templates)" }
    return
  end
  for key in pairs(ret) do
    if not KNOWN[key] then
      errors[#errors + 1] = { file = path, message = ("unknown section %q (expected tools, prompts, resources, templates)"):format(tostring(key)) }
    end
  end
  for _, kind in ipairs(KINDS) do
    local section = ret[kind]
    if section ~= nil and type(section) ~= "table" then
      errors[#errors + 1] = { file = path, message = kind .. " must be a table" }
    elseif section then
      for name, def in pairs(section) do
        local function add(message, line)
          errors[#errors + 1] = { file = path, line = line, message = message }
          return false
        end
        local check = CHECKS[kind]
        local entry = check and check(name, def, add) or (not check and def)
        if entry then
          if defs[kind][name] then
            add(("%s %q is also defined in %s"):format(kind:sub(1, -2), name, origin[kind][name]))
          else
            entry.file = path
            defs[kind][name] = entry
            origin[kind][name] = path
          end
        end
      end
    end
  end
end

--- Loads every script under paths into a new generation.
--- Returns generation, or nil, errors ({ file, line?, message }...).
function _M.load(paths)
  local files, err = _M.expand(paths)
  if not files then
    return nil, err
  end
  local defs = { tools = {}, prompts = {}, resources = {}, templates = {} }
  local origin = { tools = {}, prompts = {}, resources = {}, templates = {} }
  local errors = {}
  for _, path in ipairs(files) do
    load_file(path, defs, origin, errors)
  end
  if #errors > 0 then
    return nil, errors
  end
  local gen = { files = files, origin = origin }
  for _, kind in ipairs(KINDS) do
    gen[kind] = defs[kind]
  end
  return gen
end

--- Formats errors as "file:line: message" lines.
function _M.format_errors(errors)
  local lines = {}
  for i, e in ipairs(errors) do
    if e.line and not e.message:find(e.file, 1, true) then
      lines[i] = ("%s:%d: %s"):format(e.file, e.line, e.message)
    elseif e.message:find(e.file, 1, true) then
      lines[i] = e.message
    else
      lines[i] = e.file .. ": " .. e.message
    end
  end
  return table.concat(lines, "\n")
end

return _M

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
local watchdog = require "moonmcp.watchdog"
local schema_shape = require "moonmcp.schema_shape"
local param_headers = require "moonmcp.param_headers"
local json = require "moonmcp.json"
local uri_template = require "moonmcp.uri_template"
local tasks = require "moonmcp.tasks"

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
      local kind = core.file_stamp(path)
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
    local kind, err = core.file_stamp(p)
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
  local params, err = param_headers.collect(def.input)
  if not params then
    return add(("tool %q: input schema: %s"):format(name, err), line)
  end
  return {
    param_headers = params[1] and params or nil,
    name = name,
    def = def,
    input_schema = schema_shape.normalize(def.input or { type = "object" }),
    output_schema = def.output and schema_shape.normalize(def.output),
    input_validator = def.input and schema_shape.compile(def.input),
    output_validator = def.output and schema_shape.compile(def.output),
  }
end

-- The fields prompts, resources and templates share: display strings, annotations,
-- icons, _meta, caching hints. Marks the lists in them as JSON arrays. Returns true, or
-- false after add().
local function check_common(what, def, add, line)
  for _, field in ipairs({ "title", "description", "mimeType" }) do
    if def[field] ~= nil and type(def[field]) ~= "string" then
      return add(("%s: %s must be a string"):format(what, field), line)
    end
  end
  local a = def.annotations
  if a ~= nil then
    if type(a) ~= "table" then
      return add(("%s: annotations must be a table"):format(what), line)
    end
    if a.audience ~= nil then
      if type(a.audience) ~= "table" then
        return add(("%s: annotations.audience must be a list"):format(what), line)
      end
      for _, role in ipairs(a.audience) do
        if role ~= "user" and role ~= "assistant" then
          return add(("%s: annotations.audience: %q is not \"user\" or \"assistant\""):format(what, tostring(role)),
            line)
        end
      end
      json.array(a.audience)
    end
    if a.priority ~= nil and (type(a.priority) ~= "number" or a.priority < 0 or a.priority > 1) then
      return add(("%s: annotations.priority must be a number from 0 to 1"):format(what), line)
    end
    if a.lastModified ~= nil and type(a.lastModified) ~= "string" then
      return add(("%s: annotations.lastModified must be an ISO 8601 string"):format(what), line)
    end
  end
  if def.icons ~= nil then
    if type(def.icons) ~= "table" then
      return add(("%s: icons must be a list"):format(what), line)
    end
    json.array(def.icons)
  end
  if def._meta ~= nil and type(def._meta) ~= "table" then
    return add(("%s: _meta must be a table"):format(what), line)
  end
  local ttl = def.ttl_ms
  if ttl ~= nil and (type(ttl) ~= "number" or ttl < 0 or ttl ~= math.floor(ttl)) then
    return add(("%s: ttl_ms must be an integer >= 0 (milliseconds)"):format(what), line)
  end
  if def.cache_scope ~= nil and def.cache_scope ~= "public" and def.cache_scope ~= "private" then
    return add(("%s: cache_scope must be \"public\" or \"private\""):format(what), line)
  end
  return true
end

-- A completer: a list of strings (offered by prefix) or fn(value, ctx, context_args).
local function check_completer(what, c, add, line)
  if type(c) == "function" then
    return true
  end
  if type(c) ~= "table" then
    return add(("%s must be a list of strings or a function"):format(what), line)
  end
  local n = 0
  for _ in pairs(c) do
    n = n + 1
  end
  if n ~= #c then
    return add(("%s must be a list of strings or a function"):format(what), line)
  end
  for _, v in ipairs(c) do
    if type(v) ~= "string" then
      return add(("%s must hold strings only"):format(what), line)
    end
  end
  return true
end

local function check_prompt(name, def, add)
  if type(name) ~= "string" or not name:match(NAME) or #name > 128 then
    return add(("prompt name %q must be 1-128 characters of A-Z a-z 0-9 _ - ."):format(tostring(name)))
  end
  if type(def) ~= "table" then
    return add(("prompt %q: the definition must be a table"):format(name))
  end
  if type(def.handler) ~= "function" then
    return add(("prompt %q: handler must be a function"):format(name))
  end
  local line = line_of(def.handler)
  local what = ("prompt %q"):format(name)
  if not check_common(what, def, add, line) then
    return false
  end
  local arguments, declared, completers = json.array(), {}, {}
  if def.arguments ~= nil and type(def.arguments) ~= "table" then
    return add(what .. ": arguments must be a list of { name =, description =, required = }", line)
  end
  for i, arg in ipairs(def.arguments or {}) do
    if type(arg) ~= "table" or type(arg.name) ~= "string" or arg.name == "" then
      return add(("%s: arguments[%d] needs a name (a string)"):format(what, i), line)
    end
    if declared[arg.name] then
      return add(("%s: argument %q is declared twice"):format(what, arg.name), line)
    end
    for _, field in ipairs({ "title", "description" }) do
      if arg[field] ~= nil and type(arg[field]) ~= "string" then
        return add(("%s: argument %q: %s must be a string"):format(what, arg.name, field), line)
      end
    end
    if arg.required ~= nil and type(arg.required) ~= "boolean" then
      return add(("%s: argument %q: required must be a boolean"):format(what, arg.name), line)
    end
    if arg.complete ~= nil then
      if not check_completer(("%s: argument %q: complete"):format(what, arg.name), arg.complete, add, line) then
        return false
      end
      completers[arg.name] = arg.complete
    end
    declared[arg.name] = arg
    -- what prompts/list shows: complete stays on the server
    arguments[i] = { name = arg.name, title = arg.title, description = arg.description, required = arg.required }
  end
  if def.complete ~= nil then
    if type(def.complete) ~= "table" then
      return add(what .. ": complete must be a table: argument name -> list or function", line)
    end
    for arg, c in pairs(def.complete) do
      if not declared[arg] then
        return add(("%s: complete.%s: no such argument"):format(what, tostring(arg)), line)
      end
      if not check_completer(("%s: complete.%s"):format(what, arg), c, add, line) then
        return false
      end
      completers[arg] = c
    end
  end
  return { name = name, def = def, arguments = def.arguments and arguments or nil, declared = declared,
    completers = completers }
end

local SCHEME = "^%a[%w+.%-]*:"

local function check_resource(uri, def, add)
  if type(uri) ~= "string" or not uri:match(SCHEME) then
    return add(("resource %q: the key must be an absolute URI (scheme:...)"):format(tostring(uri)))
  end
  if uri:find("[{}]") then
    return add(("resource %q: a URI with {variables} belongs in templates, not resources"):format(uri))
  end
  if type(def) ~= "table" then
    return add(("resource %q: the definition must be a table"):format(uri))
  end
  if type(def.read) ~= "function" then
    return add(("resource %q: read must be a function(uri, ctx)"):format(uri))
  end
  local line = line_of(def.read)
  local what = ("resource %q"):format(uri)
  if def.name ~= nil and type(def.name) ~= "string" then
    return add(what .. ": name must be a string", line)
  end
  if def.size ~= nil and (type(def.size) ~= "number" or def.size < 0 or def.size ~= math.floor(def.size)) then
    return add(what .. ": size must be an integer >= 0 (bytes)", line)
  end
  if not check_common(what, def, add, line) then
    return false
  end
  return { uri = uri, def = def, name = def.name or uri }
end

local function check_template(template, def, add)
  local compiled, err = uri_template.compile(template)
  if not compiled then
    return add(("template %s"):format(err))
  end
  if not template:match(SCHEME) then
    return add(("template %q: must start with a URI scheme (scheme:...)"):format(template))
  end
  if #compiled.variables == 0 then
    return add(("template %q: has no {variables}; define it under resources"):format(template))
  end
  if type(def) ~= "table" then
    return add(("template %q: the definition must be a table"):format(template))
  end
  if type(def.read) ~= "function" then
    return add(("template %q: read must be a function(uri, vars, ctx)"):format(template))
  end
  local line = line_of(def.read)
  local what = ("template %q"):format(template)
  if def.name ~= nil and type(def.name) ~= "string" then
    return add(what .. ": name must be a string", line)
  end
  if not check_common(what, def, add, line) then
    return false
  end
  local completers = {}
  if def.complete ~= nil then
    if type(def.complete) ~= "table" then
      return add(what .. ": complete must be a table: variable name -> list or function", line)
    end
    local vars = {}
    for _, v in ipairs(compiled.variables) do
      vars[v] = true
    end
    for var, c in pairs(def.complete) do
      if not vars[var] then
        return add(("%s: complete.%s: no such variable in the template"):format(what, tostring(var)), line)
      end
      if not check_completer(("%s: complete.%s"):format(what, var), c, add, line) then
        return false
      end
      completers[var] = c
    end
  end
  return { uri_template = template, template = compiled, def = def, name = def.name or template,
    completers = completers }
end

local CHECKS = { tools = check_tool, prompts = check_prompt, resources = check_resource, templates = check_template }

--- Loads one file into defs (kind -> name -> def, with def.file set). Appends errors.
local function load_file(path, defs, origin, errors)
  local chunk, err = loadfile(path)
  if not chunk then
    errors[#errors + 1] = { file = path, message = err }
    return
  end
  setfenv(chunk, setmetatable({}, { __index = _G }))
  if watchdog.enabled() then
    watchdog.prepare(chunk) -- compiled loops run no hooks: script code runs interpreted
  end
  local ok, ret = xpcall(chunk, debug.traceback)
  if not ok then
    errors[#errors + 1] = { file = path, message = tostring(ret) }
    return
  end
  if type(ret) ~= "table" then
    errors[#errors + 1] = { file = path,
      message = "a script must return a table of definitions (tools, prompts, resources, templates)" }
    return
  end
  for key in pairs(ret) do
    if not KNOWN[key] then
      errors[#errors + 1] = { file = path,
        message = ("unknown section %q (expected tools, prompts, resources, templates)"):format(tostring(key)) }
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
  -- what the scripts start while they load (moonmcp.spawn, every, on_unload) is owned
  -- by this generation, and dropped with it — at once when the load fails
  local owner = tasks.new_owner()
  local prev = tasks.begin_load(owner)
  for _, path in ipairs(files) do
    load_file(path, defs, origin, errors)
  end
  tasks.end_load(prev)
  if #errors > 0 then
    tasks.drop(owner)
    return nil, errors
  end
  local gen = { files = files, origin = origin, owner = owner }
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

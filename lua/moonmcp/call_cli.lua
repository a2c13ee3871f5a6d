-- moonmcp.call_cli — `moonmcp call [options] [PATH ...] TOOL [key=value ...]`: run one tool
-- once, through the real protocol layer, without a server.
--
-- The scripts under PATH (default: the bundled examples) are loaded as `serve` loads
-- them; the tool is called in-process by moonmcp.testing.client (a real call: context
-- snapshot, coroutine, schema validation, result shaping). As the call runs, its
-- progress and log notifications (at --log-level, default info) are printed on stderr.
-- The result goes to stdout: the structured content as JSON when there is some, else
-- the text of the content blocks (other blocks as JSON); --raw prints the whole
-- CallToolResult as JSON. Exit status: 0; 1 for an error result or a protocol error (the
-- message on stderr); 2 for bad usage. The server log shows warnings and errors only.
--
-- Arguments: --json '{...}' gives them as one JSON object; key=value pairs are coerced by
-- the tool's input schema (integer, number, boolean, array and object properties are
-- parsed — arrays and objects as JSON — everything else stays a string); both may be
-- combined (pairs win).
--
-- Questions the tool asks the client (ctx:elicit, ctx:sample, ctx:roots): answered from
-- --answers FILE (a Lua file returning a table, or a JSON object, mapping question keys
-- or elicitation messages to answers, as moonmcp.testing.client takes them); else, on a
-- terminal, interactively (the question on stderr, answers read from stdin); else the
-- call fails naming the question. roots/list is answered with the current directory
-- unless the answers say otherwise.
local core = require "moonmcp.core"
local json = require "moonmcp.json"
local log = require "moonmcp.log"
local loader = require "moonmcp.loader"
local registry = require "moonmcp.registry"

local ipairs, pairs, next, type, tostring, tonumber, concat, sort = ipairs, pairs, next, type, tostring, tonumber,
  table.concat, table.sort

local flags = require "moonmcp.flags"

local _M = {}

--- Parses call's arguments. Returns opts or nil, message.
function _M.parse(args)
  local opts, err = flags.parse(args, {
    ["--json"] = { key = "json", value = "a JSON object" },
    ["--answers"] = { key = "answers", value = "a FILE" },
    ["--era"] = { key = "era", value = "legacy or modern" },
    ["--log-level"] = { key = "log_level", value = "a LEVEL (debug, info, notice, warning, error)" },
    ["--raw"] = { key = "raw" },
    ["--config"] = { key = "config", value = "a FILE" },
  })
  if not opts then
    return nil, err
  end
  if opts.era and opts.era ~= "legacy" and opts.era ~= "modern" then
    return nil, "--era must be legacy or modern"
  end
  if opts.log_level and not log.RANK[opts.log_level] then
    return nil, "--log-level needs a LEVEL (debug, info, notice, warning, error)"
  end
  local positional = opts.args
  opts.paths, opts.pairs = {}, {}
  if opts.help then
    return opts
  end
  -- PATH ... TOOL key=value ...: the paths are the leading arguments that exist on disk
  local n = 1
  while n < #positional and not positional[n]:find("=", 1, true) and core.file_stamp(positional[n]) do
    opts.paths[#opts.paths + 1] = positional[n]
    n = n + 1
  end
  opts.tool = positional[n]
  if not opts.tool or opts.tool:find("=", 1, true) then
    return nil, "call needs a TOOL name"
  end
  for j = n + 1, #positional do
    local k, v = positional[j]:match("^([^=]+)=(.*)$")
    if not k then
      return nil, ("%q is not key=value"):format(positional[j])
    end
    opts.pairs[#opts.pairs + 1] = { k, v }
  end
  return opts
end

local function types_of(prop)
  local t = type(prop) == "table" and prop.type
  local set = {}
  if type(t) == "string" then
    set[t] = true
  elseif type(t) == "table" then
    for _, x in ipairs(t) do
      set[x] = true
    end
  end
  return set
end

--- Coerces a key=value string by the property schema prop. Returns value or nil, message.
function _M.coerce(key, text, prop)
  local t = types_of(prop)
  if t.string or next(t) == nil then
    return text
  end
  if t.integer or t.number then
    local n = tonumber(text)
    if n then
      return n
    end
  end
  if t.boolean then
    local b = ({ ["true"] = true, yes = true, ["1"] = true, ["false"] = false, no = false, ["0"] = false })[text]
    if b ~= nil then
      return b
    end
  end
  if t.array or t.object then
    local v = json.decode(text)
    if v ~= nil and type(v) == "table" then
      return v
    end
  end
  if t.null and text == "null" then
    return json.null
  end
  local names = {}
  for name in pairs(t) do
    names[#names + 1] = name
  end
  sort(names)
  return nil, ("%s=%s: expected %s"):format(key, text, concat(names, " or "))
end

-- ---- answers ----

local function load_answers(path)
  local f, err = io.open(path, "rb")
  if not f then
    return nil, err
  end
  local text = f:read("*a")
  f:close()
  if text:match("^%s*{") and not text:match("^%s*{%s*%[") then
    local v, jerr = json.decode(text)
    if type(v) == "table" then
      return v
    end
    if not path:match("%.lua$") then
      return nil, path .. ": not a JSON object: " .. tostring(jerr)
    end
  end
  local chunk, lerr = loadstring(text, "@" .. path)
  if not chunk then
    return nil, lerr
  end
  setfenv(chunk, setmetatable({}, { __index = _G }))
  local ok, v = pcall(chunk)
  if not ok then
    return nil, tostring(v)
  end
  if type(v) ~= "table" then
    return nil, path .. ": must return a table of answers"
  end
  return v
end

local function is_tty(fd)
  local ok, ffi = pcall(require, "ffi")
  if not ok then
    return false
  end
  pcall(ffi.cdef, "int isatty(int fd);")
  local ok2, r = pcall(function()
    return ffi.C.isatty(fd)
  end)
  return ok2 and r == 1
end

local function ask_line(prompt)
  core.stderr(prompt)
  return io.stdin:read("*l")
end

-- Interactive answers, on a terminal.
local function interactive(method, params, key)
  if method == "elicitation/create" then
    core.stderr(("\n%s\n"):format(params.message or ("question " .. tostring(key))))
    if params.url then
      core.stderr("open: " .. params.url .. "\n")
      local a = ask_line("done? [y = accept, n = decline, empty = cancel] ")
      return a == "y" and { action = "accept" } or a == "n" and "decline" or "cancel"
    end
    local schema = params.requestedSchema or {}
    local props = schema.properties or {}
    local names = {}
    for name in pairs(props) do
      names[#names + 1] = name
    end
    sort(names)
    local required = {}
    for _, r in ipairs(schema.required or {}) do
      required[r] = true
    end
    local content = {}
    for _, name in ipairs(names) do
      local prop = props[name]
      local hint = prop.enum and concat(prop.enum, "|") or prop.type or "string"
      while true do
        local line = ask_line(("  %s%s (%s)%s: "):format(name, required[name] and "*" or "", hint,
          prop.default ~= nil and (" [" .. tostring(prop.default) .. "]") or ""))
        if line == nil then
          return "cancel"
        end
        if line == "" then
          if prop.default ~= nil then
            content[name] = prop.default
          end
          if content[name] ~= nil or not required[name] then
            break
          end
        else
          local v, err = _M.coerce(name, line, prop)
          if v ~= nil then
            content[name] = v
            break
          end
          core.stderr("  " .. err .. "\n")
        end
      end
    end
    local a = ask_line("send? [Y/n/c (decline, cancel)] ")
    if a == nil or a == "c" then
      return "cancel"
    elseif a == "n" then
      return "decline"
    end
    return { action = "accept", content = content }
  elseif method == "sampling/createMessage" then
    core.stderr("\nthe tool asks for a model completion:\n")
    for _, m in ipairs(params.messages or {}) do
      local c = m.content
      core.stderr(("  %s: %s\n"):format(tostring(m.role), type(c) == "table" and (c.text or json.encode(c))
        or tostring(c)))
    end
    local line = ask_line("your answer (as the assistant): ")
    if line == nil then
      error("sampling cancelled", 0)
    end
    return line
  end
end

local function roots_default()
  local cwd = os.getenv("PWD") or "."
  return { { uri = "file://" .. cwd, name = cwd:match("([^/]+)$") or cwd } }
end

-- ---- printing ----

local function print_progress(p)
  local total = p.total and ("/" .. tostring(p.total)) or ""
  core.stderr(("progress %s%s%s\n"):format(tostring(p.progress), total, p.message and ("  " .. p.message) or ""))
end

local function print_log(p)
  local data = p.data
  local text
  if type(data) == "table" then
    local fields = {}
    for k, v in pairs(data) do
      if k ~= "message" then
        fields[#fields + 1] = k .. "=" .. (type(v) == "table" and json.encode(v) or tostring(v))
      end
    end
    sort(fields)
    text = tostring(data.message or "") .. (#fields > 0 and (" " .. concat(fields, " ")) or "")
  else
    text = tostring(data)
  end
  core.stderr(("[%s] %s\n"):format(tostring(p.level), text))
end

local function result_text(result)
  if result.structuredContent ~= nil then
    return json.encode(result.structuredContent)
  end
  local parts = {}
  for _, block in ipairs(result.content or {}) do
    parts[#parts + 1] = block.type == "text" and block.text or json.encode(block)
  end
  return concat(parts, "\n")
end

--- Runs the call. Returns the exit status.
function _M.run(opts)
  local paths = opts.paths
  if #paths == 0 then
    paths = opts.default_paths
  end
  log.set_level("warning") -- the server log: errors and tracebacks only
  local gen, errors = loader.load(paths)
  if not gen then
    core.stderr("moonmcp call: cannot load the scripts:\n" .. loader.format_errors(errors) .. "\n")
    return 1
  end
  registry.set(gen)
  local entry = gen.tools[opts.tool]
  if not entry then
    local names = {}
    for name in pairs(gen.tools) do
      names[#names + 1] = name
    end
    sort(names)
    core.stderr(("moonmcp call: no tool %q (tools: %s)\n"):format(opts.tool, concat(names, ", ")))
    return 1
  end
  local args = {}
  if opts.json then
    local v, err = json.decode(opts.json)
    if type(v) ~= "table" or json.is_array(v) then
      core.stderr("moonmcp call: --json must be a JSON object" .. (err and (": " .. err) or "") .. "\n")
      return 2
    end
    args = v
  end
  local props = entry.input_schema and entry.input_schema.properties or {}
  for _, kv in ipairs(opts.pairs) do
    local v, err = _M.coerce(kv[1], kv[2], props[kv[1]])
    if v == nil then
      core.stderr("moonmcp call: " .. err .. "\n")
      return 2
    end
    args[kv[1]] = v
  end
  local answers = {}
  if opts.answers then
    local a, err = load_answers(opts.answers)
    if not a then
      core.stderr("moonmcp call: --answers: " .. tostring(err) .. "\n")
      return 2
    end
    answers = a
  end
  local tty = is_tty(0) and is_tty(2)
  local client = require("moonmcp.testing.client").new {
    era = opts.era or "legacy",
    answers = answers,
    log_level = opts.log_level or "info",
    on_progress = print_progress,
    on_log = print_log,
    on_ask = function(method, params, key)
      if method == "roots/list" then
        return roots_default()
      end
      if tty then
        return interactive(method, params, key)
      end
    end,
  }
  local result, err = client:call_tool(opts.tool, args)
  if not result then
    core.stderr(("moonmcp call: %s (%s)\n"):format(tostring(err and err.message), tostring(err and err.code)))
    return 1
  end
  if opts.raw then
    io.stdout:write(json.encode(result), "\n")
    return result.isError and 1 or 0
  end
  if result.isError then
    core.stderr("moonmcp call: the tool failed: " .. result_text(result) .. "\n")
    return 1
  end
  io.stdout:write(result_text(result), "\n")
  return 0
end

return _M

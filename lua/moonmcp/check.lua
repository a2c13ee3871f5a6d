-- moonmcp.check — `moonmcp check [--json] [PATH ...]`: load and validate scripts, for
-- editors and CI.
--
-- Loads every script under the paths exactly as `serve` would (a whole generation, every
-- definition validated). On success it prints every tool, prompt, resource and resource
-- template, grouped by file, as clients will see them (the descriptions come from the
-- real list methods, through the in-process client), and exits 0. On any error it prints
-- every error as "file:line: message" on stderr and exits 1. With --json the report is
-- one JSON document on stdout instead: { ok, files, tools, prompts, resources,
-- templates } (each definition with its "file"), or { ok = false, errors = [{ file,
-- line, message }] }.
local core = require "moonmcp.core"
local loader = require "moonmcp.loader"
local registry = require "moonmcp.registry"
local json = require "moonmcp.json"
local tasks = require "moonmcp.tasks"
local flags = require "moonmcp.flags"

local ipairs, concat, sort = ipairs, table.concat, table.sort

local _M = {}

--- Parses check's arguments. Returns opts or nil, message.
function _M.parse(args)
  local opts, err = flags.parse(args, { ["--json"] = { key = "json" },
    ["--config"] = { key = "config", value = "a FILE" } })
  if opts then
    opts.paths = opts.args
  end
  return opts, err
end

local function out(s)
  io.stdout:write(s, "\n")
end

-- What the list methods say, with the file each definition comes from.
local function describe(gen)
  local client = require("moonmcp.testing.client").new { era = "legacy", log_level = false }
  local report = {
    tools = client:list_tools(),
    prompts = client:list_prompts(),
    resources = client:list_resources(),
    templates = client:list_templates(),
  }
  for _, t in ipairs(report.tools) do
    t.file = gen.tools[t.name].file
  end
  for _, p in ipairs(report.prompts) do
    p.file = gen.prompts[p.name].file
  end
  for _, r in ipairs(report.resources) do
    r.file = gen.resources[r.uri] and gen.resources[r.uri].file
  end
  for _, r in ipairs(report.templates) do
    r.file = gen.templates[r.uriTemplate] and gen.templates[r.uriTemplate].file
  end
  return report
end

local function label(def)
  local parts = {}
  if def.title then
    parts[#parts + 1] = def.title
  end
  if def.description then
    parts[#parts + 1] = def.description
  end
  return #parts > 0 and (" — " .. concat(parts, ": ")) or ""
end

local function print_text(gen, report)
  local by_file = {}
  local function add(file, line)
    file = file or "?"
    by_file[file] = by_file[file] or {}
    local list = by_file[file]
    list[#list + 1] = line
  end
  for _, t in ipairs(report.tools) do
    local lines = { "  tool " .. t.name .. label(t), "    input:  " .. json.encode(t.inputSchema) }
    if t.outputSchema then
      lines[#lines + 1] = "    output: " .. json.encode(t.outputSchema)
    end
    add(t.file, concat(lines, "\n"))
  end
  for _, p in ipairs(report.prompts) do
    local args = {}
    for _, a in ipairs(p.arguments or {}) do
      args[#args + 1] = a.name .. (a.required and "*" or "")
    end
    add(p.file, ("  prompt %s(%s)%s"):format(p.name, concat(args, ", "), label(p)))
  end
  for _, r in ipairs(report.resources) do
    add(r.file, ("  resource %s (%s%s)%s"):format(r.uri, r.name or "", r.mimeType and (", " .. r.mimeType) or "",
      label(r)))
  end
  for _, r in ipairs(report.templates) do
    add(r.file, ("  template %s (%s%s)%s"):format(r.uriTemplate, r.name or "",
      r.mimeType and (", " .. r.mimeType) or "", label(r)))
  end
  local files = {}
  for _, f in ipairs(gen.files) do
    files[#files + 1] = f
  end
  sort(files)
  for _, f in ipairs(files) do
    out(f)
    for _, line in ipairs(by_file[f] or { "  (nothing defined)" }) do
      out(line)
    end
  end
  out(("ok: %d files, %d tools, %d prompts, %d resources, %d templates"):format(#gen.files, #report.tools,
    #report.prompts, #report.resources, #report.templates))
end

--- Runs the check. Returns the exit status.
function _M.run(opts)
  local paths = opts.paths
  if #paths == 0 then
    paths = opts.default_paths
  end
  local gen, errors = loader.load(paths)
  if not gen then
    if opts.json then
      local list = json.array()
      for i, e in ipairs(errors) do
        local file, line, message = require("moonmcp.reload").position(e)
        list[i] = { file = file, line = line, message = message }
      end
      out(json.encode { ok = false, errors = list })
    else
      core.stderr(loader.format_errors(errors) .. "\n")
      core.stderr(("moonmcp check: %d error%s\n"):format(#errors, #errors == 1 and "" or "s"))
    end
    return 1
  end
  local previous = registry.current()
  registry.set(gen)
  local report = describe(gen)
  registry.set(previous)
  tasks.drop(gen.owner)
  if opts.json then
    report.ok = true
    report.files = json.array(gen.files)
    for _, k in ipairs { "tools", "prompts", "resources", "templates" } do
      json.array(report[k])
    end
    out(json.encode(report))
  else
    print_text(gen, report)
  end
  return 0
end


return _M

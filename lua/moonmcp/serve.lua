-- moonmcp.serve — `moonmcp serve`: configure, load the scripts, start a transport.
--
-- Start-up order: config file -> log level -> context accessors (built-ins, then the
-- config's) -> request filters -> protocol methods -> scripts (any error: report file and
-- line, exit 1) -> hooks -> listen (HTTP) or read stdin (stdio) -> signals.
-- SIGINT/SIGTERM stop accepting, let the calls in flight finish (at most 10 s), then exit
-- 0. SIGHUP reloads the scripts (a failed reload keeps the current ones); unless
-- --no-watch, the script tree is watched and a saved change is reloaded (moonmcp.reload).
local core = require "moonmcp.core"
local config = require "moonmcp.config"
local context = require "moonmcp.context"
local accessors = require "moonmcp.accessors"
local filters = require "moonmcp.filters"
local loader = require "moonmcp.loader"
local registry = require "moonmcp.registry"
local protocol = require "moonmcp.protocol"
local log = require "moonmcp.log"
local watchdog = require "moonmcp.watchdog"
local reload = require "moonmcp.reload"

local _M = {}

local DRAIN_SECONDS = 10

--- Seconds a handler may compute without yielding before the watchdog stops it.
_M.DEFAULT_CPU_BUDGET = 10

--- Loads the protocol's method modules (each registers its methods with moonmcp.server).
function _M.load_methods()
  require "moonmcp.ctx"
  require "moonmcp.ctx_tasks"
  require "moonmcp.ask"
  require "moonmcp.methods.lifecycle"
  require "moonmcp.methods.tools"
  require "moonmcp.methods.prompts"
  require "moonmcp.methods.resources"
  require "moonmcp.methods.completion"
  require "moonmcp.methods.listen"
end

--- Applies a config table (nil: defaults) to the runtime: log level, accessors,
--- filters, instructions. Returns true, or nil, message.
function _M.configure(conf, log_level)
  conf = conf or {}
  local level = log_level or conf.log_level
  if level then
    if not log.RANK[level] then
      return nil, "unknown log level " .. level .. " (use debug, info, notice, warning, error)"
    end
    log.set_level(level)
  end
  accessors.install()
  for i, acc in ipairs(conf.accessors or {}) do
    local ok, err = pcall(context.register, acc)
    if not ok then
      return nil, ("accessors[%d]: %s"):format(i, tostring(err))
    end
  end
  local ok, err = pcall(filters.set, conf.filters or {})
  if not ok then
    return nil, tostring(err)
  end
  protocol.instructions = conf.instructions
  _M.load_methods()
  -- each setter checks its value and raises a clear message
  ok, err = pcall(function()
    require("moonmcp.sessions").configure(conf.sessions, conf.session_ttl)
    if conf.mrtr_key then
      require("moonmcp.mrtr").set_key(conf.mrtr_key)
    end
    if conf.mrtr_ttl then
      require("moonmcp.mrtr").set_ttl(conf.mrtr_ttl)
    end
    if conf.ask_timeout then
      require("moonmcp.pending").set_timeout(conf.ask_timeout)
    end
    if conf.page_size then
      require("moonmcp.paginate").set_page_size(conf.page_size)
    end
    require("moonmcp.deadline").set_default(conf.call_timeout)
    if conf.cpu_budget ~= nil and (type(conf.cpu_budget) ~= "number" or conf.cpu_budget <= 0) then
      error("cpu_budget must be a number of seconds > 0")
    end
  end)
  if not ok then
    return nil, "config: " .. tostring(err):gsub("^[^:]+:%d+: ", "")
  end
  if conf.watchdog ~= false and not watchdog.enabled() then
    watchdog.enable { budget = conf.cpu_budget or _M.DEFAULT_CPU_BUDGET }
  end
  return true
end

local function parse_listen(listen)
  local host, port = listen:match("^%[([^%]]+)%]:(%d+)$")
  if not host then
    host, port = listen:match("^([^:]+):(%d+)$")
  end
  if not host then
    port = listen:match("^:?(%d+)$")
    host = port and "127.0.0.1"
  end
  return host, tonumber(port)
end

local function drain_and_stop(in_flight)
  core.spawn(function()
    local deadline = core.clock() + DRAIN_SECONDS
    while in_flight() > 0 and core.clock() < deadline do
      core.sleep(0.02)
    end
    core.stop(0)
  end)
end

function _M.run(opts)
  local conf, err
  if opts.config then
    conf, err = config.load(opts.config)
    if not conf then
      core.stderr("moonmcp: config: " .. err .. "\n")
      return 1
    end
  end
  conf = conf or {}
  local ok
  ok, err = _M.configure(conf, opts.log_level)
  if not ok then
    core.stderr("moonmcp: " .. err .. "\n")
    return 1
  end
  local paths = opts.paths
  if #paths == 0 then
    paths = conf.scripts or { opts.home .. "/scripts/examples" }
  end
  reload.configure(paths) -- stamps the files before the first load
  local gen, errors = loader.load(paths)
  if not gen then
    core.stderr("moonmcp: cannot load the scripts:\n" .. loader.format_errors(errors) .. "\n")
    return 1
  end
  registry.set(gen)

  local limits = config.limits(conf)
  local http = require "moonmcp.transport.http"
  local stdio = require "moonmcp.transport.stdio"
  local transport = opts.stdio and stdio or http
  core.set_hooks {
    http_request = http.request,
    http_closed = http.closed,
    stdio_line = stdio.line,
    stdio_eof = stdio.eof,
    signal = function(name)
      if name == "SIGHUP" then
        reload.request("SIGHUP", true)
        return
      end
      log.info("shutting down", { signal = name })
      reload.stop()
      require("moonmcp.methods.listen").close_all()
      if not opts.stdio then
        http.close_streams()
        core.http_close()
      end
      drain_and_stop(transport.in_flight)
    end,
  }

  -- before listening: once the server says it listens, edits are seen
  if opts.watch ~= false then
    local n = reload.watch()
    log.info("watching the scripts for changes", { dirs = n })
  end
  if opts.stdio then
    core.stdio_start { max_line_bytes = limits.max_line_bytes }
    log.info("serving MCP on stdio", { files = #gen.files })
  else
    local host, port = parse_listen(opts.listen or conf.listen or "127.0.0.1:8080")
    if not host then
      core.stderr("moonmcp: --listen wants HOST:PORT, got " .. tostring(opts.listen) .. "\n")
      return 2
    end
    local bound
    bound, err = core.http_listen {
      host = host,
      port = port,
      endpoint = conf.endpoint or "/mcp",
      max_header_bytes = limits.max_header_bytes,
      max_headers = limits.max_headers,
      max_body_bytes = limits.max_body_bytes,
      header_timeout = limits.header_timeout,
      idle_timeout = limits.idle_timeout,
      allowed_hosts = conf.allowed_hosts or config.DEFAULT_ALLOWED_HOSTS,
    }
    if not bound then
      core.stderr("moonmcp: " .. err .. "\n")
      return 1
    end
    local shown = host:find(":", 1, true) and "[" .. host .. "]" or host
    log.info("listening on http://" .. shown .. ":" .. bound .. (conf.endpoint or "/mcp"), { port = bound })
  end
  core.watch_signals()
  return nil -- keep serving
end

return _M

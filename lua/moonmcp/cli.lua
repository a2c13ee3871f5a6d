-- moonmcp.cli — the command line. main.c calls start(home, args) in a coroutine.
--
-- Parses the command and its flags, prints usage (exit 2) on a bad flag, and hands over
-- to the command's module. Commands that finish (test, check, --help) stop the process
-- with their exit status; `serve` keeps it running until a signal or end of input.
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local flags = require "moonmcp.flags"

local tostring, xpcall, traceback = tostring, xpcall, debug.traceback

local _M = {}

_M.USAGE = [[
Usage: moonmcp <command> [options]

Commands:
  serve [options] [PATH ...]  Serve the tools, prompts and resources of the Lua scripts
                              in PATH (files or directories; default: the bundled
                              examples) over Streamable HTTP, or over stdio.
  test [busted options] [SPEC ...]
                              Run busted specs under LuaJIT inside the host, so specs
                              may call yielding APIs such as moonmcp.sleep (helpers:
                              require "moonmcp.testing"; see docs/tools.md#testing).
  check [--json] [--config FILE] [PATH ...]
                              Load and validate the scripts; print every tool, prompt
                              and resource with its schema; on any error print
                              file:line: message and exit 1.
  call [options] [PATH ...] TOOL [key=value ...]
                              Run one tool once, in-process, through the protocol
                              layer: progress and logs on stderr, the result on stdout;
                              exit 1 on an error result.

Options of serve:
  --listen HOST:PORT          Address to listen on (default 127.0.0.1:8080; port 0 picks
                              a free port). MCP is served at POST /mcp.
  --stdio                     Serve newline-delimited JSON-RPC on stdin/stdout instead.
  --config FILE               A Lua config file (limits, allowed hosts, request filters,
                              context accessors, log level; see docs/tools.md).
  --log-level LEVEL           debug, info, notice, warning, error (default info).
  --no-watch                  Do not reload the scripts when they change on disk
                              (SIGHUP still reloads them).

Options of call:
  --json '{...}'              The arguments as one JSON object (key=value pairs are
                              coerced by the tool's input schema and win).
  --answers FILE              Answers to the tool's questions (elicitation, sampling,
                              roots): a Lua or JSON file mapping question keys or
                              messages to answers. On a terminal, unanswered questions
                              are asked interactively.
  --era legacy|modern         The protocol era of the call (default legacy).
  --raw                       Print the whole CallToolResult as JSON.
  --config FILE               A config file, as for serve: its settings and context
                              accessors apply (not its request filters: there is no
                              HTTP request), its scripts are the default PATHs.
  --log-level LEVEL           The level of the tool's log lines shown (default info).

  -h, --help                  Show this help.
  --version                   Show the version.
]]

local function usage_error(message)
  core.stderr("moonmcp: " .. message .. "\n\n" .. _M.USAGE)
  return 2
end
_M.usage_error = usage_error

local SERVE_FLAGS = {
  ["--listen"] = { key = "listen", value = "HOST:PORT" },
  ["--stdio"] = { key = "stdio" },
  ["--no-watch"] = { key = "watch", set = false },
  ["--config"] = { key = "config", value = "a FILE" },
  ["--log-level"] = { key = "log_level", value = "a LEVEL" },
}

-- Parses serve's flags. Returns opts or nil, message.
local function parse_serve(args)
  local opts, err = flags.parse(args, SERVE_FLAGS)
  if opts then
    opts.paths = opts.args
  end
  return opts, err
end

local function run(home, args)
  local command = args[1]
  if command == nil or command == "-h" or command == "--help" or command == "help" then
    core.stderr(_M.USAGE)
    return command == nil and 2 or 0
  end
  if command == "--version" or command == "version" then
    io.stdout:write("moonmcp " .. core.version .. "\n")
    return 0
  end
  local rest = {}
  for i = 2, #args do
    rest[#rest + 1] = args[i]
  end
  if command == "serve" then
    local opts, err = parse_serve(rest)
    if not opts then
      return usage_error(err)
    end
    if opts.help then
      io.stdout:write(_M.USAGE)
      return 0
    end
    opts.home = home
    return require("moonmcp.serve").run(opts)
  elseif command == "test" then
    return require("moonmcp.testing.runner").run(home, rest)
  elseif command == "check" or command == "call" then
    local mod = require(command == "check" and "moonmcp.check" or "moonmcp.call_cli")
    local opts, err = mod.parse(rest)
    if not opts then
      return usage_error(err)
    end
    if opts.help then
      io.stdout:write(_M.USAGE)
      return 0
    end
    opts.home = home
    -- --config: the config's settings and accessors apply as for serve, and its scripts
    -- are the default PATHs (request filters do not run: there is no HTTP request)
    local conf = {}
    if opts.config then
      conf, err = require("moonmcp.config").load(opts.config)
      if not conf then
        core.stderr("moonmcp " .. command .. ": config: " .. err .. "\n")
        return 1
      end
    end
    opts.default_paths = conf.scripts or { home .. "/scripts/examples" }
    local ok
    ok, err = require("moonmcp.serve").configure(conf)
    if not ok then
      core.stderr("moonmcp " .. command .. ": " .. err .. "\n")
      return 1
    end
    return mod.run(opts)
  end
  return usage_error("unknown command " .. tostring(command))
end

--- Entry point from main.c.
function _M.start(home, args)
  host.patch_coroutine_library()
  math.randomseed(tonumber(core.random_hex(4), 16)) -- scripts' math.random differs per process
  local ok, code = xpcall(run, traceback, home, args)
  if not ok then
    core.stderr("moonmcp: " .. tostring(code) .. "\n")
    core.stop(1)
  elseif code ~= nil then
    io.stdout:flush()
    core.stop(code)
  end
end

return _M

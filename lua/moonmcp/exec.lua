-- moonmcp.exec — child processes for handlers and specs (core/lexec.c underneath).
--
--   exec.run{ "prog", "arg", ..., env = { K = "v" }, cwd = "dir", stdin = "data",
--             timeout = seconds, kill_grace = 2, max_output = bytes, shell = false }
--     -> { code = n, signal = "SIGTERM"|nil, stdout = "...", stderr = "...",
--          timed_out = true|nil }  |  nil, message
--   exec.spawn{ "prog", ..., env, cwd, shell, stdin = "pipe"|"null"|"inherit",
--               stdout = "pipe"|"inherit"|"null", stderr = same } -> proc | nil, message
--
-- The program is found through PATH and runs without a shell, unless shell = true: then
-- the first element is a command line run by `/bin/sh -c`, and the others become $1...
-- env adds to (or, with false, removes from) the host's environment. code is the exit
-- status, or 128 + signal number when a signal ended the child (signal then names it).
-- exec.run waits for the exit and the end of both outputs; on timeout the child gets
-- SIGTERM, then SIGKILL after kill_grace seconds, and the result says timed_out. A
-- cancelled call kills its child. Note: a grandchild that keeps stdout open keeps
-- exec.run waiting until the timeout.
--
-- A proc from exec.spawn:
--   proc:read_line([timeout])         a line of stdout, without "\n" (and "\r")
--   proc:read_stderr_line([timeout])  the same for stderr
--       -> line | nil, "closed", partial (at EOF) | nil, "timeout" | nil, message
--   proc:write(data) -> true | nil, message;  proc:close_stdin()
--   proc:wait([timeout]) -> code, signal|nil | nil, "timeout"
--   proc:status() -> code, signal once exited, else nil
--   proc:kill([signal]) -> true | nil, message  (a name like "TERM"/"SIGKILL" or a number)
--   proc:pid(), proc:close()  (close kills the child if it still runs; __gc does too)
-- One call at a time may wait on a proc.
local core = require "moonmcp.core"
local host = require "moonmcp.host"

local type, error, pairs, ipairs, setmetatable, tostring = type, error, pairs, ipairs, setmetatable, tostring
local await = host.await
local c_spawn, c_environ = core.exec_spawn, core.exec_environ

local _M = {}

_M.DEFAULT_KILL_GRACE = 2
_M.DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024

local function check_opts(opts, level)
  if type(opts) ~= "table" then
    error("exec: expected a table { prog, args... }", level)
  end
  if type(opts[1]) ~= "string" then
    error("exec: the first element must be the program (a string)", level)
  end
  local argv = {}
  for i, a in ipairs(opts) do
    if type(a) ~= "string" and type(a) ~= "number" then
      error("exec: argument " .. i .. " must be a string", level)
    end
    argv[i] = tostring(a)
  end
  if opts.shell then
    local sh = { "/bin/sh", "-c", argv[1], "sh" }
    for i = 2, #argv do
      sh[#sh + 1] = argv[i]
    end
    argv = sh
  end
  local env
  if opts.env ~= nil then
    if type(opts.env) ~= "table" then
      error("exec: env must be a table", level)
    end
    local merged, order = {}, {}
    for _, kv in ipairs(c_environ()) do
      local k, v = kv:match("^([^=]*)=(.*)$")
      if k and merged[k] == nil then
        order[#order + 1] = k
        merged[k] = v
      end
    end
    for k, v in pairs(opts.env) do
      if type(k) ~= "string" or k == "" or k:find("=", 1, true) then
        error("exec: env names must be non-empty strings without '='", level)
      end
      if v == false then
        merged[k] = nil
      elseif type(v) == "string" or type(v) == "number" then
        if merged[k] == nil then
          order[#order + 1] = k
        end
        merged[k] = tostring(v)
      else
        error("exec: env value of " .. k .. " must be a string, a number or false", level)
      end
    end
    env = {}
    for _, k in ipairs(order) do
      if merged[k] ~= nil then
        env[#env + 1] = k .. "=" .. merged[k]
      end
    end
  end
  if opts.cwd ~= nil and type(opts.cwd) ~= "string" then
    error("exec: cwd must be a string", level)
  end
  local t = opts.timeout
  if t ~= nil and (type(t) ~= "number" or t < 0 or t ~= t) then
    error("exec: timeout must be a number >= 0", level)
  end
  return argv, env
end

local function check_mode(v, name, allowed, level)
  if v == nil then
    return "pipe"
  end
  if not allowed[v] then
    error("exec: " .. name .. " must be one of pipe, inherit, null", level)
  end
  return v
end

local MODES = { pipe = true, inherit = true, null = true }

--- Runs a program to completion (see the top of the file).
function _M.run(opts)
  local argv, env = check_opts(opts, 3)
  local stdin = opts.stdin
  if stdin ~= nil and type(stdin) ~= "string" then
    error("exec: stdin must be a string", 2)
  end
  local grace = opts.kill_grace or _M.DEFAULT_KILL_GRACE
  local max = opts.max_output or _M.DEFAULT_MAX_OUTPUT
  if type(grace) ~= "number" or grace < 0 then
    error("exec: kill_grace must be a number >= 0", 2)
  end
  if type(max) ~= "number" or max < 0 then
    error("exec: max_output must be a number >= 0", 2)
  end
  local p, err = c_spawn(argv, env, opts.cwd, stdin and "pipe" or "null", "pipe", "pipe")
  if not p then
    return nil, err
  end
  -- If the call is cancelled, collect's cancellation has released p (killed the child).
  local res, msg = await(p:collect(stdin, opts.timeout, grace, max))
  p:close()
  return res, msg
end

local Proc = {}
Proc.__index = Proc

--- Starts a long-lived process (see the top of the file).
function _M.spawn(opts)
  local argv, env = check_opts(opts, 3)
  local p, pid = c_spawn(argv, env, opts.cwd, check_mode(opts.stdin, "stdin", MODES, 3),
    check_mode(opts.stdout, "stdout", MODES, 3), check_mode(opts.stderr, "stderr", MODES, 3))
  if not p then
    return nil, pid
  end
  return setmetatable({ _p = p, _pid = pid }, Proc)
end

function Proc:read_line(timeout)
  return await(self._p:read_line(1, timeout))
end

function Proc:read_stderr_line(timeout)
  return await(self._p:read_line(2, timeout))
end

function Proc:write(data)
  return await(self._p:write(data))
end

function Proc:close_stdin()
  return self._p:close_stdin()
end

function Proc:wait(timeout)
  return await(self._p:wait(timeout))
end

function Proc:status()
  return self._p:status()
end

function Proc:kill(sig)
  return self._p:kill(sig)
end

function Proc:pid()
  return self._pid
end

function Proc:close()
  return self._p:close()
end

return _M

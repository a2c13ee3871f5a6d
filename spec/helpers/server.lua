-- spec/helpers/server.lua — starts the real moonmcp binary for integration specs.
--
--   local server = require "helpers.server"
--   local s = server.http{ "spec/fixtures/scripts" }     -- serve on a free port
--   s.port, s.url, s:log_lines(), s:wait_log(pattern, seconds), s:stop()
--   local p = server.stdio{ "spec/fixtures/scripts" }    -- serve over stdio
--   p:send(table_or_line), p:recv(seconds) -> decoded message, p:close_stdin(), p:wait()
-- The binary is $MOONMCP_BIN (default build/moonmcp). Start-up is awaited by polling the
-- server's log for its "listening on" line with a deadline, never by sleeping.
local core = require "moonmcp.core"
local exec = require "moonmcp.exec"
local json = require "moonmcp.json"
local moonmcp = require "moonmcp"

local _M = {}

_M.bin = os.getenv("MOONMCP_BIN") or "build/moonmcp"

local Http = {}
Http.__index = Http

--- Starts `moonmcp serve --listen 127.0.0.1:0 ...args` and waits until it listens.
function _M.http(args, opts)
  opts = opts or {}
  local argv = { _M.bin, "serve", "--listen", "127.0.0.1:0" }
  for _, a in ipairs(args or {}) do
    argv[#argv + 1] = a
  end
  argv.env = opts.env
  argv.stdin = "null"
  argv.stdout = "null"
  argv.stderr = "pipe"
  local proc = assert(exec.spawn(argv))
  local self = setmetatable({ proc = proc, lines = {} }, Http)
  -- drain stderr in the background so a chatty server never blocks on a full pipe
  core.spawn(function()
    while true do
      local line = proc:read_stderr_line()
      if not line then
        self.exited = true
        return
      end
      self.lines[#self.lines + 1] = line
    end
  end)
  local line = self:wait_log("listening on http://127%.0%.0%.1:%d+", opts.timeout or 10)
  if not line then
    proc:kill("KILL")
    error("moonmcp did not start:\n" .. table.concat(self.lines, "\n"), 2)
  end
  self.port = tonumber(line:match("listening on http://127%.0%.0%.1:(%d+)"))
  self.url = "http://127.0.0.1:" .. self.port .. "/mcp"
  return self
end

--- Waits until a log line matches pattern; returns it, or nil after seconds.
function Http:wait_log(pattern, seconds)
  local deadline = core.clock() + (seconds or 5)
  local seen = 1
  repeat
    for i = seen, #self.lines do
      if self.lines[i]:find(pattern) then
        return self.lines[i]
      end
    end
    seen = #self.lines + 1
    if self.exited then
      return nil
    end
    moonmcp.sleep(0.01)
  until core.clock() > deadline
  return nil
end

function Http:log_lines()
  return self.lines
end

--- Stops the server with SIGTERM and waits; returns its exit code.
function Http:stop(signal)
  self.proc:kill(signal or "TERM")
  local deadline = core.clock() + 15
  while not self.exited and core.clock() < deadline do -- the stderr reader ends at EOF
    moonmcp.sleep(0.01)
  end
  local code, sig = self.proc:wait(15)
  self.proc:close()
  return code, sig
end

local Stdio = {}
Stdio.__index = Stdio

--- Starts `moonmcp serve --stdio ...args`.
function _M.stdio(args, opts)
  opts = opts or {}
  local argv = { _M.bin, "serve", "--stdio" }
  for _, a in ipairs(args or {}) do
    argv[#argv + 1] = a
  end
  argv.env = opts.env
  argv.stdin = "pipe"
  argv.stdout = "pipe"
  argv.stderr = opts.stderr or "null"
  return setmetatable({ proc = assert(exec.spawn(argv)) }, Stdio)
end

--- Writes a message (a table is encoded) as one line.
function Stdio:send(msg)
  local line = type(msg) == "table" and json.encode(msg) or msg
  return assert(self.proc:write(line .. "\n"))
end

--- Reads and decodes the next line of stdout (nil, err on timeout or end).
function Stdio:recv(seconds)
  local line, err = self.proc:read_line(seconds or 10)
  if not line then
    return nil, err
  end
  return assert(json.decode(line))
end

function Stdio:close_stdin()
  self.proc:close_stdin()
end

function Stdio:wait(seconds)
  return self.proc:wait(seconds or 15)
end

function Stdio:kill()
  self.proc:kill("KILL")
  self.proc:wait(5)
  self.proc:close()
end

return _M

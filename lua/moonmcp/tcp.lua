-- moonmcp.tcp — TCP clients and servers for handlers and specs (core/ltcp.c underneath).
--
--   tcp.connect(host, port, { timeout = s }) -> sock | nil, message
--   sock:settimeout(s)       default timeout of every later read and write (nil: none)
--   sock:write(data)         -> true | nil, message   (a write timeout closes the socket)
--   sock:read(n)             -> exactly n bytes
--   sock:read_line()         -> a line without "\n" (a trailing "\r" is dropped too)
--   sock:read_all()          -> everything until the peer closes
--   sock:read_some()         -> whatever arrived (at least one byte)
--       each read: | nil, "closed", partial (the peer closed first; read_some: no partial)
--                  | nil, "timeout" (buffered bytes stay for the next read) | nil, message
--       and an optional timeout argument overriding settimeout's
--   sock:peer() -> ip, port;  sock:close()  (also on garbage collection)
--
--   tcp.listen(host, port, handler) -> server | nil, message
--     host is an IP address (or "localhost"); port 0 picks a free port.
--     handler(sock) runs in a fresh call per connection; the socket is closed when it
--     returns. server:port(), server:address() -> ip, port; server:close() stops
--     listening and cancels the handlers still running.
-- One call at a time may read a socket, and one may write it.
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local log = require "moonmcp.log"

local type, error, setmetatable, xpcall, traceback, tostring, pairs =
  type, error, setmetatable, xpcall, debug.traceback, tostring, pairs
local await = host.await
local c_connect, c_listen, current, cancel = core.tcp_connect, core.tcp_listen, core.current, core.cancel

local _M = {}

local Sock = {}
Sock.__index = Sock

local function check_timeout(t, level)
  if t ~= nil and (type(t) ~= "number" or t < 0 or t ~= t or t == math.huge) then
    error("tcp: timeout must be a finite number >= 0", level + 1)
  end
  return t
end

local function wrap(ud)
  return setmetatable({ _s = ud }, Sock)
end

--- Connects to host:port (a name or an address; every address of a name is tried).
function _M.connect(host_name, port, opts)
  if type(host_name) ~= "string" then
    error("tcp.connect: host must be a string", 2)
  end
  if type(port) ~= "number" then
    error("tcp.connect: port must be a number", 2)
  end
  local timeout = check_timeout(opts and opts.timeout, 2)
  local ud, err = await(c_connect(host_name, port, timeout))
  if not ud then
    return nil, err
  end
  return wrap(ud)
end

function Sock:settimeout(s)
  self._timeout = check_timeout(s, 2)
end

function Sock:write(data, timeout)
  return await(self._s:write(data, check_timeout(timeout, 2) or self._timeout))
end

function Sock:read(n, timeout)
  return await(self._s:read(n, check_timeout(timeout, 2) or self._timeout))
end

function Sock:read_line(timeout)
  return await(self._s:read_line(check_timeout(timeout, 2) or self._timeout))
end

function Sock:read_all(timeout)
  return await(self._s:read_all(check_timeout(timeout, 2) or self._timeout))
end

function Sock:read_some(timeout)
  return await(self._s:read_some(check_timeout(timeout, 2) or self._timeout))
end

function Sock:peer()
  return self._s:peer()
end

function Sock:close()
  return self._s:close()
end

local Server = {}
Server.__index = Server

--- Listens on host:port; handler(sock) runs in a fresh call per connection.
function _M.listen(host_name, port, handler)
  if type(handler) ~= "function" then
    error("tcp.listen: handler must be a function", 2)
  end
  local self = setmetatable({ _live = {} }, Server)
  local live = self._live
  local ud, err = c_listen(host_name, port, function(sud)
    local id = current()
    live[id] = true
    local sock = wrap(sud)
    local ok, e = xpcall(handler, traceback, sock)
    sock:close()
    live[id] = nil
    if not ok and not (e == "cancelled" or tostring(e):match("^cancelled\n")) then
      log.error("tcp handler failed", { error = tostring(e) })
    end
  end)
  if not ud then
    return nil, err
  end
  self._ud = ud
  return self
end

function Server:address()
  return self._ud:address()
end

function Server:port()
  local _, port = self._ud:address()
  return port
end

function Server:close()
  self._ud:close()
  for id in pairs(self._live) do
    cancel(id)
  end
end

return _M

-- helpers.http_peer — a tiny HTTP/1.1 server made with moonmcp.tcp, for client specs.
--
--   local peer = require("helpers.http_peer").start(routes)  -- routes[path] = fn(req)
--   peer.url .. "/path";  peer:close()
-- fn(req) gets { method, path, headers (lowercase), body } and returns
-- status, headers (table), body. Every response closes its connection.
local tcp = require "moonmcp.tcp"

local _M = {}

local REASONS = { [200] = "OK", [201] = "Created", [302] = "Found", [404] = "Not Found", [500] = "Error" }

local function serve(routes, sock)
  sock:settimeout(5)
  local line = sock:read_line()
  if not line then
    return
  end
  local method, path = line:match("^(%u+) (%S+) HTTP/1%.%d$")
  local headers = {}
  while true do
    local h = sock:read_line()
    if not h or h == "" then
      break
    end
    local name, value = h:match("^([^:]+):%s*(.-)%s*$")
    if name then
      headers[name:lower()] = value
    end
  end
  local body = ""
  local len = tonumber(headers["content-length"] or "0")
  if len > 0 then
    body = sock:read(len)
  end
  local route = routes[path:match("^[^?]*")]
  local status, rh, rb
  if route then
    status, rh, rb = route { method = method, path = path, headers = headers, body = body }
  else
    status, rh, rb = 404, {}, "not found"
  end
  rb = rb or ""
  local out = { ("HTTP/1.1 %d %s\r\n"):format(status, REASONS[status] or "Status") }
  for k, v in pairs(rh or {}) do
    if type(v) == "table" then
      for _, x in ipairs(v) do
        out[#out + 1] = k .. ": " .. x .. "\r\n"
      end
    else
      out[#out + 1] = k .. ": " .. v .. "\r\n"
    end
  end
  out[#out + 1] = "Content-Length: " .. #rb .. "\r\nConnection: close\r\n\r\n"
  out[#out + 1] = rb
  sock:write(table.concat(out))
end

function _M.start(routes)
  local srv = assert(tcp.listen("127.0.0.1", 0, function(sock)
    serve(routes, sock)
  end))
  return {
    url = "http://127.0.0.1:" .. srv:port(),
    port = srv:port(),
    close = function()
      srv:close()
    end,
  }
end

return _M

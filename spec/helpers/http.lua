-- spec/helpers/http.lua — a small HTTP/1.1 client over moonmcp.tcp, for specs that must
-- see the wire: raw bytes, pipelining, chunked bodies, SSE streams.
--
--   local http = require "helpers.http"
--   local c = http.connect(port)
--   c:send_raw(bytes); local res = c:read_response()   -- { status, headers, body, events }
--   http.post(port, body, headers) -> res               -- one request on a new connection
--   http.mcp(port, message, extra_headers) -> res, decoded   -- POST /mcp with MCP headers
-- res.events: for text/event-stream answers, the decoded JSON of every SSE data event.
local tcp = require "moonmcp.tcp"
local json = require "moonmcp.json"

local _M = {}

local Conn = {}
Conn.__index = Conn

function _M.connect(port, timeout)
  local sock = assert(tcp.connect("127.0.0.1", port, { timeout = timeout or 5 }))
  sock:settimeout(timeout or 10)
  return setmetatable({ sock = sock }, Conn)
end

function Conn:send_raw(bytes)
  return assert(self.sock:write(bytes))
end

function Conn:close()
  self.sock:close()
end

local function parse_sse(body)
  local events = {}
  for block in (body .. "\n\n"):gmatch("(.-)\n\n") do
    local data = {}
    for line in (block .. "\n"):gmatch("(.-)\n") do
      local d = line:match("^data: ?(.*)$")
      if d then
        data[#data + 1] = d
      end
    end
    if #data > 0 then
      events[#events + 1] = json.decode(table.concat(data, "\n"))
    end
  end
  return events
end

--- Reads the status line and headers of a streamed response: { status, headers }.
function Conn:read_head()
  local line, err = self.sock:read_line()
  if not line then
    return nil, err
  end
  local head = { status = tonumber(line:match("^HTTP/1%.1 (%d%d%d)")), headers = {} }
  while true do
    local h = assert(self.sock:read_line())
    if h == "" then
      return head
    end
    local name, value = h:match("^([^:]+):%s*(.-)%s*$")
    head.headers[name:lower()] = value
  end
end

--- Reads the next SSE event of a chunked text/event-stream (one event per chunk, as
--- moonmcp sends them) and returns its decoded JSON data, or nil, err.
function Conn:read_event()
  local size_line, err = self.sock:read_line()
  if not size_line then
    return nil, err
  end
  local size = tonumber(size_line, 16)
  if not size or size == 0 then
    return nil, "end of stream"
  end
  local chunk = assert(self.sock:read(size))
  assert(self.sock:read_line())
  local events = parse_sse(chunk)
  return events[1]
end

--- Reads one response. Returns { status, headers (lower-case names), body, events } or
--- nil, err (e.g. "closed" when the server closed the connection first).
function Conn:read_response()
  local line, err = self.sock:read_line()
  if not line then
    return nil, err
  end
  local status = tonumber(line:match("^HTTP/1%.1 (%d%d%d)"))
  if not status then
    return nil, "bad status line: " .. line
  end
  local headers = {}
  while true do
    local h = assert(self.sock:read_line())
    if h == "" then
      break
    end
    local name, value = h:match("^([^:]+):%s*(.-)%s*$")
    headers[name:lower()] = value
  end
  local body
  if headers["content-length"] then
    local n = tonumber(headers["content-length"])
    body = n > 0 and assert(self.sock:read(n)) or ""
  elseif (headers["transfer-encoding"] or ""):lower() == "chunked" then
    local parts = {}
    while true do
      local size = tonumber(assert(self.sock:read_line()), 16)
      if size == 0 then
        assert(self.sock:read_line())
        break
      end
      parts[#parts + 1] = assert(self.sock:read(size))
      assert(self.sock:read_line())
    end
    body = table.concat(parts)
  else
    body = ""
  end
  local res = { status = status, headers = headers, body = body }
  if (headers["content-type"] or ""):find("text/event-stream", 1, true) then
    res.events = parse_sse(body)
  end
  return res
end

local BASE = {
  ["Host"] = "127.0.0.1",
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
}

--- Formats a request.
function _M.format(method, path, headers, body)
  local lines = { ("%s %s HTTP/1.1"):format(method, path) }
  local merged = {}
  for k, v in pairs(BASE) do
    merged[k:lower()] = { k, v }
  end
  for k, v in pairs(headers or {}) do
    merged[k:lower()] = v ~= false and { k, v } or nil
  end
  for _, kv in pairs(merged) do
    lines[#lines + 1] = kv[1] .. ": " .. kv[2]
  end
  body = body or ""
  if method ~= "GET" or #body > 0 then
    lines[#lines + 1] = "Content-Length: " .. #body
  end
  return table.concat(lines, "\r\n") .. "\r\n\r\n" .. body
end

function _M.request(port, method, headers, body, path)
  local c = _M.connect(port)
  c:send_raw(_M.format(method, path or "/mcp", headers, body))
  local res, err = c:read_response()
  c:close()
  return res, err
end

function _M.post(port, body, headers)
  return _M.request(port, "POST", headers, body)
end

--- POSTs one MCP message (a table) and returns the response and the decoded final message
--- (the JSON body, or the last SSE event).
function _M.mcp(port, message, headers)
  local res = assert(_M.post(port, json.encode(message), headers))
  local decoded
  if res.events then
    decoded = res.events[#res.events]
  elseif #res.body > 0 then
    decoded = json.decode(res.body)
  end
  return res, decoded
end

return _M

-- moonmcp.log — the logger tool scripts use (require("moonmcp").log).
--
-- moonmcp.log.info("message", { key = value, ... }) writes one logfmt line to stderr
-- (stdout belongs to the protocol). Inside a call, the line also carries the call's log
-- fields (request_id, tool, trace_id and whatever filters or accessors added: the MDC of
-- this host). Levels are the syslog levels MCP uses; lines below the server level are
-- dropped. Inside a call whose client asked for log messages, the line also goes to the
-- client as notifications/message (see moonmcp.ctx).
local core = require "moonmcp.core"
local calls = require "moonmcp.calls"

local type, tostring, pairs, ipairs, concat, sort, date, floor, select, error =
  type, tostring, pairs, ipairs, table.concat, table.sort, os.date, math.floor, select, error

local _M = {}

_M.LEVELS = { "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency" }
local RANK = {}
for i, name in ipairs(_M.LEVELS) do
  RANK[name] = i
end
_M.RANK = RANK

local threshold = RANK.info

-- fn(exchange, level, message, fields): forwards a call's log lines to its client
-- (set by moonmcp.ctx; the exchange decides whether the client asked for them).
local forward = nil

function _M.set_forwarder(fn)
  forward = fn
end

--- Sets the server log level (one of LEVELS).
function _M.set_level(level)
  if not RANK[level] then
    error("unknown log level: " .. tostring(level), 2)
  end
  threshold = RANK[level]
end

local function quote(v)
  local s = tostring(v)
  if s == "" or s:find('[%s"=]') then
    return '"' .. s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub("\n", "\\n") .. '"'
  end
  return s
end

local function add_fields(parts, fields, seen)
  if type(fields) ~= "table" then
    return
  end
  local keys = {}
  for k in pairs(fields) do
    if type(k) == "string" and not seen[k] then
      keys[#keys + 1] = k
    end
  end
  sort(keys)
  for _, k in ipairs(keys) do
    seen[k] = true
    local v = fields[k]
    if type(v) ~= "table" then
      parts[#parts + 1] = k .. "=" .. quote(v)
    end
  end
end

local function timestamp()
  local now = core.now()
  return date("!%Y-%m-%dT%H:%M:%S", floor(now)) .. ("%.3fZ"):format(now % 1):sub(2)
end

--- Writes one line at level. fields is an optional table of extra key/values.
function _M.write(level, message, fields)
  local rank = RANK[level]
  if not rank then
    error("unknown log level: " .. tostring(level), 2)
  end
  local ctx, exchange = calls.current()
  if forward and exchange and exchange.log_level then
    forward(exchange, level, message, fields)
  end
  if rank < threshold then
    return
  end
  local parts = { "time=" .. timestamp(), "level=" .. level, "msg=" .. quote(message) }
  local seen = { time = true, level = true, msg = true }
  add_fields(parts, fields, seen)
  if ctx then
    add_fields(parts, ctx.log, seen)
    local trace = ctx.trace
    if not seen.trace_id and type(trace) == "table" then
      parts[#parts + 1] = "trace_id=" .. trace.trace_id
    end
  end
  core.stderr(concat(parts, " ") .. "\n")
end

for _, level in ipairs(_M.LEVELS) do
  _M[level] = function(message, fields)
    return _M.write(level, message, fields)
  end
end
_M.warn = _M.warning

--- Formats any values as one message (for quick prints: log.print(a, b)).
function _M.print(...)
  local parts = {}
  for i = 1, select("#", ...) do
    parts[i] = tostring((select(i, ...)))
  end
  _M.write("info", concat(parts, " "))
end

return _M

-- moonmcp.transport.http — the request phase of Streamable HTTP (DESIGN §2, steps 1-2).
--
-- The C side has already bounded the request (header bytes, header count, body bytes,
-- timeouts), checked the path, the method, Host/Origin, and for a POST the Content-Type
-- and Accept. Here (in a coroutine of its own when request filters are configured):
-- MCP-Protocol-Version is checked, the request context is built (request id, remote,
-- headers, message, _meta), the user's request filters run (they may yield, add to the
-- context, or reject), the body is classified: notifications and client responses are
-- handled inline and answered 202; a request becomes a call.
--
-- The answer's shape is decided by the call's first output (DESIGN §4): the final result
-- first -> one application/json body; anything before it -> text/event-stream, ending
-- with the result. A connection that goes away cancels its call.
local core = require "moonmcp.core"
local json = require "moonmcp.json"
local jsonrpc = require "moonmcp.jsonrpc"
local server = require "moonmcp.server"
local call = require "moonmcp.call"
local filters = require "moonmcp.filters"
local protocol = require "moonmcp.protocol"

local log = require "moonmcp.log"

local type, setmetatable, xpcall, traceback, tostring = type, setmetatable, xpcall, debug.traceback, tostring
local encode, random_hex = json.encode_bytes, core.random_hex -- answers are written, never read: bytes
local respond, stream_open, sse, stream_close = core.http_respond, core.http_stream_open, core.http_sse,
  core.http_stream_close

local notify = require "moonmcp.notify"
local sessions = require "moonmcp.sessions"
local subscriptions = require "moonmcp.subscriptions"

local MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

local new_tab = require "table.new"

local _M = {}

local active = {}    -- rid -> call id, while the call runs
local by_id = {}     -- JSON-RPC id -> call id, for legacy notifications/cancelled
local get_streams = {} -- rid -> notification sink of a legacy GET stream

local SSE_HEADERS = { ["Cache-Control"] = "no-cache", ["X-Accel-Buffering"] = "no" }

local Out = {}
Out.__index = Out

local function with(base, extra)
  if not extra then
    return base
  end
  local h = {}
  for k, v in pairs(base or {}) do
    h[k] = v
  end
  for k, v in pairs(extra) do
    h[k] = v
  end
  return h
end

function Out:send(msg)
  local rid = self.rid
  if not self.streaming then
    self.streaming = true
    stream_open(rid, 200, "text/event-stream", with(SSE_HEADERS, self.headers))
  end
  sse(rid, encode(msg))
end

function Out:finish(msg, status)
  local rid = self.rid
  active[rid] = nil
  if self.streaming then
    sse(rid, encode(msg))
    stream_close(rid)
  else
    respond(rid, status or 200, encode(msg), "application/json", self.headers)
  end
end

-- The call was cancelled: nothing more is sent for it; end the HTTP answer cleanly.
function Out:cancel()
  local rid = self.rid
  active[rid] = nil
  if self.streaming then
    stream_close(rid)
  else
    respond(rid, 204)
  end
end

local function answer_error(rid, status, code, message, id)
  respond(rid, status, encode(jsonrpc.error(id, code, message)), "application/json")
end

local function accepts(accept, wanted)
  if not accept then
    return false
  end
  accept = accept:lower()
  return accept:find(wanted, 1, true) or accept:find("*/*", 1, true) ~= nil
end

local function forget(exchange)
  local id = exchange.msg.id
  if by_id[id] == exchange.call_id then
    by_id[id] = nil
  end
end

-- What the exchanges of all HTTP calls share (a call's own table holds only its own).
local EXCHANGE = { __index = { transport = "http", on_done = forget, subscriber = "http" } }

local function handle_post(rid, headers, body, remote)
  local msg, kind, message, id = jsonrpc.parse(body)
  if not msg then
    return answer_error(rid, 400, kind, message, id)
  end
  local meta = type(msg.params) == "table" and msg.params._meta or nil
  local version = headers["mcp-protocol-version"]
  if version and not protocol.is_supported(version) and not (type(meta) == "table" and meta[MODERN_VERSION_KEY]) then
    -- a legacy request naming a version we do not speak (modern ones get -32022 from their era)
    return answer_error(rid, 400, jsonrpc.INVALID_REQUEST, "unsupported MCP-Protocol-Version: " .. version, msg.id)
  end

  local request = {
    transport = "http",
    remote = remote,
    headers = headers,
    request_id = headers["x-request-id"] or random_hex(8),
    message = msg,
    meta = meta,
  }
  local ok, status, reason, extra = filters.run(request)
  if not ok then
    return respond(rid, status, encode(jsonrpc.error(msg.id, jsonrpc.INVALID_REQUEST, reason)), "application/json",
      extra)
  end

  -- legacy sessions (optional): requests that name one are served in it
  local session
  local session_id = headers["mcp-session-id"]
  local modern = type(meta) == "table" and meta[MODERN_VERSION_KEY] ~= nil
  if session_id and not modern and sessions.enabled() then
    session = sessions.get(session_id)
    if not session then
      return answer_error(rid, 404, jsonrpc.INVALID_REQUEST, "session not found (it ended): initialize again",
        msg.id)
    end
  end

  request.session = session
  if kind == "notification" then
    request.calls = by_id -- notifications/cancelled finds the call here
    server.notify(msg, request)
    return respond(rid, 202)
  elseif kind == "response" then
    server.respond(msg, request)
    return respond(rid, 202)
  end
  local out = setmetatable({ rid = rid }, Out)
  local exchange = setmetatable(new_tab(0, 8), EXCHANGE) -- room for what the call adds
  exchange.out = out
  exchange.request = request
  if session then
    exchange.session = session
    exchange.subscriber = session.id
  end
  if not modern and msg.method == "initialize" and sessions.enabled() then
    exchange.on_initialize = function(params, negotiated)
      local s = sessions.create(negotiated, { info = params.clientInfo, capabilities = params.capabilities or {} })
      out.headers = { ["Mcp-Session-Id"] = s.id }
    end
  end
  local call_id = call.start(request, msg, exchange)
  active[rid] = call_id
  by_id[msg.id] = call_id
end

-- GET (legacy era): a stream of server notifications (list changes, updates of
-- subscribed resources) that stays open until the client closes it; with a session, the
-- session's. The modern era has no GET stream (405).
local function handle_get(rid, headers)
  local version = headers["mcp-protocol-version"]
  if version and protocol.is_modern(version) then
    return respond(rid, 405, encode(jsonrpc.error(nil, jsonrpc.INVALID_REQUEST,
      "method not allowed: protocol " .. version .. " has no GET stream; use subscriptions/listen")),
      "application/json", { Allow = "POST" })
  end
  if not accepts(headers.accept, "text/event-stream") then
    return answer_error(rid, 406, jsonrpc.INVALID_REQUEST, "not acceptable: a GET stream is text/event-stream")
  end
  local key = "http"
  local session_id = headers["mcp-session-id"]
  if session_id and sessions.enabled() then
    if not sessions.get(session_id) then
      return answer_error(rid, 404, jsonrpc.INVALID_REQUEST, "session not found (it ended): initialize again")
    end
    key = session_id
  end
  stream_open(rid, 200, "text/event-stream", SSE_HEADERS)
  get_streams[rid] = notify.add {
    era = "legacy",
    key = key,
    send = function(msg)
      sse(rid, encode(msg))
    end,
  }
end

-- DELETE ends a legacy session; without sessions there is nothing to end (405).
local function handle_delete(rid, headers)
  local session_id = headers["mcp-session-id"]
  if not sessions.enabled() or not session_id then
    return respond(rid, 405, encode(jsonrpc.error(nil, jsonrpc.INVALID_REQUEST, "method not allowed: DELETE ends "
      .. (sessions.enabled() and "the session named by Mcp-Session-Id" or "a session, and sessions are off"))),
      "application/json", { Allow = "GET, POST" })
  end
  if not sessions.delete(session_id) then
    return answer_error(rid, 404, jsonrpc.INVALID_REQUEST, "session not found")
  end
  return respond(rid, 204)
end

local function phase(rid, method, headers, body, remote)
  if method == "POST" then
    return handle_post(rid, headers, body, remote)
  elseif method == "GET" then
    return handle_get(rid, headers)
  end
  return handle_delete(rid, headers)
end

local function guarded_phase(rid, method, headers, body, remote)
  local ok, err = xpcall(phase, traceback, rid, method, headers, body, remote)
  if not ok then
    log.error("request phase failed", { error = tostring(err) })
    answer_error(rid, 500, jsonrpc.INTERNAL_ERROR, "internal error")
  end
end

--- Hook: one HTTP request that passed the C checks (a plain call from the loop), as rid,
--- method, headers (lower-case names), body, remote address. The request phase runs right
--- here, or — when request filters are configured, since they may yield — in a coroutine
--- of its own.
function _M.request(rid, method, headers, body, remote)
  if filters.count() > 0 then
    core.spawn(guarded_phase, rid, method, headers, body, remote)
  else
    guarded_phase(rid, method, headers, body, remote)
  end
end

--- Hook: the connection of rid closed before its answer was complete.
function _M.closed(rid)
  local id = active[rid]
  if id then
    active[rid] = nil
    core.cancel(id)
  end
  local sink = get_streams[rid]
  if sink then
    get_streams[rid] = nil
    notify.remove(sink)
  end
end

-- A session that ends takes its subscriptions and its GET streams with it.
sessions.on_end(function(session)
  subscriptions.drop(session.id)
  for rid, sink in pairs(get_streams) do
    if sink.key == session.id then
      get_streams[rid] = nil
      notify.remove(sink)
      stream_close(rid)
    end
  end
end)

--- Ends every GET stream (shutdown).
function _M.close_streams()
  for rid, sink in pairs(get_streams) do
    notify.remove(sink)
    stream_close(rid)
  end
  get_streams = {}
end

--- Number of HTTP calls in flight.
function _M.in_flight()
  local n = 0
  for _ in pairs(active) do
    n = n + 1
  end
  return n
end

return _M

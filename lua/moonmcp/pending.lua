-- moonmcp.pending — server->client requests of the legacy era (elicitation/create,
-- sampling/createMessage, roots/list), each parked in the call that made it.
--
-- request(exchange, method, params, timeout) sends { jsonrpc, id, method, params } on the
-- call's own output (HTTP: the answer switches to SSE; stdio: one line), with an id made
-- here ("mm-<n>-<random>": unique in the process and not guessable, so one client cannot
-- answer another's question), and parks the calling coroutine (core.park). The client's
-- response arrives on its own (a separate POST answered 202, or a stdio line);
-- server.respond hands it to route(), which wakes exactly the parked coroutine with it.
--
-- Outcomes, all seen by the caller of request():
--   result       -> returned
--   error answer -> raises a ClientError { code, message, data, method } (tostring-able)
--   timeout      -> sends notifications/cancelled for the request, raises
--                   "<method>: the client did not answer within N s" (a catchable error)
--   cancellation or disconnect of the call -> raises "cancelled" (the call ends)
-- The entry in `waiting` and the timer are removed on every path before request()
-- returns or raises. An answer for an unknown, answered, timed-out or cancelled id — or
-- one that arrives on another transport or session than the request — is ignored and
-- logged at debug level by server.respond.
--
-- The timeout is an entry of moonmcp.timers beside the parked call (no coroutine),
-- cancelled as soon as the request is settled; a timer that already fired but had not
-- yet run checks its own cancellation flag before waking anyone.
local core = require "moonmcp.core"
local timers = require "moonmcp.timers"
local jsonrpc = require "moonmcp.jsonrpc"
local server = require "moonmcp.server"
local log = require "moonmcp.log"

local type, error, setmetatable, tostring, pcall, floor = type, error, setmetatable, tostring, pcall, math.floor
local park, wake, cancelled, current, random_hex = core.park, core.wake, core.cancelled, core.current,
  core.random_hex
local CANCELLED = core.CANCELLED

local _M = {}

local DEFAULT_TIMEOUT = 300
local timeout = DEFAULT_TIMEOUT

-- request id -> entry: an array (one allocation, no hash part: 10,000 parked calls hold
-- 10,000 of them) of the parked call, the exchange that asked (whose transport and
-- session may answer), the timeout, and an answer that came before the call parked.
local waiting = {}
local CALL, ASKER, TIMER, EARLY = 1, 2, 3, 4
local counter = 0
local TIMEOUT = setmetatable({}, { __tostring = function() return "TIMEOUT" end })

--- An error answer of the client, raised in the handler.
local ClientError = {}
ClientError.__index = ClientError
ClientError.__tostring = function(e)
  return ("%s failed on the client: %s (%s)"):format(e.method, tostring(e.message), tostring(e.code))
end
_M.ClientError = ClientError

--- Default seconds to wait for an answer (300).
function _M.set_timeout(seconds)
  if type(seconds) ~= "number" or seconds <= 0 then
    error("pending.set_timeout: seconds must be a number > 0", 2)
  end
  timeout = seconds
end

function _M.get_timeout()
  return timeout
end

--- Number of requests waiting for an answer (for specs and diagnostics).
function _M.count()
  local n = 0
  for _ in pairs(waiting) do
    n = n + 1
  end
  return n
end

local function session_of(request)
  local headers = request and request.headers
  return headers and headers["mcp-session-id"] or nil
end

local function time_out(entry)
  wake(entry[CALL], TIMEOUT, entry)
end

local function settle(id, entry)
  waiting[id] = nil
  timers.cancel(entry[TIMER])
end

--- Sends method(params) to the client of exchange and waits for its answer (see top).
--- seconds (optional) overrides the default timeout for this request.
function _M.request(exchange, method, params, seconds)
  local call_id = current()
  if not call_id then
    error(method .. ": must be called inside a moonmcp call", 3)
  end
  if cancelled(call_id) or (exchange.call_id and cancelled(exchange.call_id)) then
    error("cancelled", 0)
  end
  seconds = seconds or timeout
  counter = counter + 1
  local id = "mm-" .. counter .. "-" .. random_hex(4)
  local entry = { call_id, exchange, false }
  waiting[id] = entry
  entry[TIMER] = timers.after(seconds, time_out, entry)
  local ok, err = pcall(exchange.out.send, exchange.out, jsonrpc.request(id, method, params))
  params = nil -- luacheck: ignore 311 (sent: a parked call does not keep its question)
  if not ok then
    settle(id, entry)
    error(err, 0)
  end
  log.debug("request sent to the client", { id = id, method = method })
  while true do
    local r, tag
    if waiting[id] and entry[EARLY] then -- answered synchronously, from inside out:send
      r = entry[EARLY]
    else
      r, tag = park()
    end
    if r == CANCELLED then
      settle(id, entry)
      error("cancelled", 0)
    elseif r == TIMEOUT then
      if tag == entry then
        settle(id, entry)
        if not cancelled(call_id) then
          pcall(exchange.out.send, exchange.out, jsonrpc.notification("notifications/cancelled",
            { requestId = id, reason = "timed out" }))
        end
        error(("%s: the client did not answer within %s s"):format(method, tostring(floor(seconds * 1000) / 1000)), 0)
      end
    elseif type(r) == "table" and r.id == id then
      settle(id, entry)
      local e = r.error
      if e ~= nil then
        e = type(e) == "table" and e or {}
        error(setmetatable({ code = e.code, message = e.message, data = e.data, method = method }, ClientError), 0)
      end
      return r.result
    end
    -- anything else is a stale wake-up meant for an earlier park: wait on
  end
end

--- server.on_response hook: wakes the call waiting for msg.id. Returns true when handled.
function _M.route(msg, info)
  local id = msg.id
  local entry = type(id) == "string" and waiting[id]
  if not entry then
    return false
  end
  local asker = entry[ASKER]
  if info and info.transport and asker.transport and info.transport ~= asker.transport then
    return false
  end
  local session = session_of(asker.request)
  if session and session_of(info) ~= session then
    return false
  end
  if wake(entry[CALL], msg) then
    waiting[id] = nil
    return true
  end
  if entry[CALL] == current() and not entry[EARLY] then
    -- An in-process peer answered from inside out:send, before the call parked.
    entry[EARLY] = msg
    return true
  end
  return false
end

server.on_response(_M.route)

return _M

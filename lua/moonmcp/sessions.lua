-- moonmcp.sessions — optional legacy-era sessions on Streamable HTTP (config
-- `sessions = true`; off by default).
--
-- With sessions on, an initialize over HTTP mints a session: its id goes back in the
-- Mcp-Session-Id header, and requests that carry it are served with what the session
-- negotiated (protocol version, client info and capabilities), its log level
-- (logging/setLevel) and its resource subscriptions; a GET stream that carries it receives
-- that session's notifications. DELETE ends a session; an unknown or ended id is answered
-- 404, so the client starts over. Requests without the header are still served, statelessly.
-- Sessions idle for longer than the TTL (default 1 hour) are forgotten.
-- The modern era has no sessions: its requests ignore the header.
local core = require "moonmcp.core"

local pairs = pairs
local clock, random_hex = core.clock, core.random_hex

local _M = {}

local enabled = false
local ttl = 3600
local live = {} -- id -> session
local ended = {} -- fn(session) called when a session ends

function _M.configure(on, idle_seconds)
  enabled = on == true
  ttl = idle_seconds or ttl
end

function _M.enabled()
  return enabled
end

--- Registers fn(session), run when a session ends (DELETE or expiry).
function _M.on_end(fn)
  ended[#ended + 1] = fn
end

local function finish(id)
  local s = live[id]
  if s then
    live[id] = nil
    for i = 1, #ended do
      ended[i](s)
    end
  end
end

local function prune(now)
  for id, s in pairs(live) do
    if now - s.seen > ttl then
      finish(id)
    end
  end
end

--- Mints a session for a client that initialized with version and client info.
function _M.create(version, client)
  local now = clock()
  prune(now)
  local s = { id = random_hex(16), version = version, client = client, seen = now }
  live[s.id] = s
  return s
end

--- The live session with this id (touching it), or nil.
function _M.get(id)
  local s = live[id]
  if s then
    local now = clock()
    if now - s.seen > ttl then
      finish(id)
      return nil
    end
    s.seen = now
  end
  return s
end

--- Ends a session; returns whether it existed.
function _M.delete(id)
  local existed = live[id] ~= nil
  finish(id)
  return existed
end

return _M

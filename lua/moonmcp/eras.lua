-- moonmcp.eras — which protocol era a request belongs to, decided per request.
--
-- A request whose params._meta carries io.modelcontextprotocol/protocolVersion is
-- modern (2026-07-28, stateless). So is an HTTP request whose MCP-Protocol-Version
-- header names a modern version (its missing _meta is then an error). Everything else
-- is legacy (initialize handshake era). The era modules (moonmcp.era.*) hold everything
-- that differs between the eras, so one dispatch path and one set of handlers serve both.
local protocol = require "moonmcp.protocol"
local legacy = require "moonmcp.era.legacy"
local modern = require "moonmcp.era.modern"
local jsonrpc = require "moonmcp.jsonrpc"

local type = type

local _M = { legacy = legacy, modern = modern }

--- Returns the era module for msg (and raises when a modern request lacks its _meta).
function _M.select(msg, exchange)
  local meta = msg.params._meta
  if type(meta) == "table" and meta[modern.VERSION_KEY] ~= nil then
    return modern
  end
  local request = exchange.request
  local header = request and request.headers and request.headers["mcp-protocol-version"]
  if header and protocol.is_modern(header) then
    return modern, jsonrpc.error_value(jsonrpc.INVALID_PARAMS,
      "_meta." .. modern.VERSION_KEY .. " is required on every request of protocol " .. header)
  end
  return legacy
end

return _M

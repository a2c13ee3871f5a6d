-- moonmcp.era.legacy — what is particular to the handshake era (2025-03-26, 2025-06-18,
-- 2025-11-25): which methods exist, how the request's version is found (session,
-- MCP-Protocol-Version header, or the 2025-03-26 default), and how results and errors
-- are shaped (as they are: no resultType, JSON-RPC errors on HTTP 200).
local jsonrpc = require "moonmcp.jsonrpc"
local protocol = require "moonmcp.protocol"

local _M = { name = "legacy" }

-- The client of the last initialize seen on stdio ({ info, capabilities }): stdio has one
-- client, so without a session this is who asks (moonmcp.ask uses the capabilities).
local stdio_client = nil

_M.METHODS = {
  initialize = true, ping = true, ["tools/list"] = true, ["tools/call"] = true, ["prompts/list"] = true,
  ["prompts/get"] = true, ["resources/list"] = true, ["resources/read"] = true, ["resources/templates/list"] = true,
  ["resources/subscribe"] = true, ["resources/unsubscribe"] = true, ["completion/complete"] = true,
  ["logging/setLevel"] = true,
}

--- The "resource not found" error of this era.
_M.RESOURCE_NOT_FOUND = -32002

--- Fills the exchange from the request; raises a protocol error when it cannot be served.
function _M.prepare(msg, exchange)
  local request = exchange.request
  local session = exchange.session
  local version = session and session.version
  local header = request and request.headers and request.headers["mcp-protocol-version"]
  if header then
    if not protocol.is_legacy(header) then
      jsonrpc.raise(jsonrpc.INVALID_REQUEST, "unsupported MCP-Protocol-Version: " .. header)
    end
    version = header
  end
  exchange.version = version or (msg.method == "initialize" and protocol.negotiate(msg.params.protocolVersion))
    or "2025-03-26"
  if msg.method == "initialize" and exchange.transport == "stdio" and type(msg.params) == "table" then
    local caps = msg.params.capabilities
    stdio_client = { info = msg.params.clientInfo, capabilities = type(caps) == "table" and caps or {} }
  end
  exchange.client = session and session.client or (exchange.transport == "stdio" and stdio_client) or nil
  local meta = msg.params and msg.params._meta
  exchange.progress_token = type(meta) == "table" and meta.progressToken or nil
  exchange.log_level = session and session.log_level or protocol.legacy_log_level()
end

function _M.result(msg, result)
  return jsonrpc.result(msg.id, result)
end

function _M.http_status()
  return 200
end

return _M

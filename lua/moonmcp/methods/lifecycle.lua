-- moonmcp.methods.lifecycle — initialize, ping, logging/setLevel, notifications/
-- initialized and notifications/cancelled (legacy era), server/discover (modern era).
--
-- Sessions are optional and off by default (moonmcp.sessions): initialize answers with the
-- negotiated version and our capabilities; requests that never initialized are served
-- too, as the official SDK's stateless mode does.
local core = require "moonmcp.core"
local server = require "moonmcp.server"
local protocol = require "moonmcp.protocol"
local jsonrpc = require "moonmcp.jsonrpc"
local log = require "moonmcp.log"

local type = type

server.method("initialize", function(params, exchange)
  if type(params.protocolVersion) ~= "string" then
    jsonrpc.raise(jsonrpc.INVALID_PARAMS, "initialize: protocolVersion must be a string")
  end
  local version = protocol.negotiate(params.protocolVersion)
  if exchange.on_initialize then
    exchange.on_initialize(params, version)
  end
  return {
    protocolVersion = version,
    capabilities = protocol.capabilities("legacy"),
    serverInfo = protocol.server_info,
    instructions = protocol.instructions,
  }
end)

server.method("ping", function()
  return {}
end)

server.method("logging/setLevel", function(params, exchange)
  local level = params.level
  if type(level) ~= "string" or not log.RANK[level] then
    jsonrpc.raise(jsonrpc.INVALID_PARAMS, "logging/setLevel: level must be one of " .. table.concat(log.LEVELS, ", "))
  end
  if exchange.session then
    exchange.session.log_level = level
  else
    protocol.set_legacy_log_level(level)
  end
  return {}
end)

server.method("server/discover", function()
  return {
    supportedVersions = protocol.supported_versions(),
    capabilities = protocol.capabilities("modern"),
    instructions = protocol.instructions,
  }
end)

server.notification("notifications/initialized", function() end)

-- notifications/cancelled { requestId, reason }: cancels the running call with that id
-- on the same channel (stdio: this process; HTTP: the request context's call table).
server.notification("notifications/cancelled", function(params, request)
  local calls = request and request.calls
  local id = params.requestId
  local call_id = calls and id ~= nil and calls[id]
  if call_id then
    calls[id] = nil
    core.cancel(call_id)
    log.debug("call cancelled by the client", { id = tostring(id), reason = params.reason })
  end
end)

return true

-- moonmcp.methods.lifecycle — initialize, ping, notifications/initialized (legacy era).
--
-- Sessions are optional and off by default: initialize answers with the negotiated
-- version and our capabilities; requests that never initialized are served too, as the
-- official SDK's stateless mode does.
local server = require "moonmcp.server"
local protocol = require "moonmcp.protocol"
local jsonrpc = require "moonmcp.jsonrpc"

local type = type

server.method("initialize", function(params)
  if type(params.protocolVersion) ~= "string" then
    jsonrpc.raise(jsonrpc.INVALID_PARAMS, "initialize: protocolVersion must be a string")
  end
  return {
    protocolVersion = protocol.negotiate(params.protocolVersion),
    capabilities = protocol.capabilities(),
    serverInfo = protocol.server_info,
    instructions = protocol.instructions,
  }
end)

server.method("ping", function()
  return {}
end)

server.notification("notifications/initialized", function() end)

return true

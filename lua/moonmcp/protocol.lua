-- moonmcp.protocol — the protocol versions this server speaks and what it says about
-- itself (server info, capabilities).
local core = require "moonmcp.core"

local _M = {}

--- Legacy-era versions, newest first.
_M.LEGACY_VERSIONS = { "2025-11-25", "2025-06-18", "2025-03-26" }
_M.LATEST_LEGACY = "2025-11-25"

local supported = {}
for _, v in ipairs(_M.LEGACY_VERSIONS) do
  supported[v] = true
end

function _M.is_supported(version)
  return supported[version] == true
end

--- Picks the version to answer an initialize with: the client's if supported, else ours.
function _M.negotiate(requested)
  if supported[requested] then
    return requested
  end
  return _M.LATEST_LEGACY
end

_M.server_info = {
  name = "moonmcp",
  title = "moonmcp",
  version = core.version,
}

--- Instructions sent in initialize (settable by the config).
_M.instructions = nil

--- The capabilities advertised: only what works.
function _M.capabilities()
  return {
    tools = { listChanged = false },
  }
end

return _M

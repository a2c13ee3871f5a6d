-- moonmcp.protocol — the protocol versions this server speaks and what it says about
-- itself (server info, capabilities), in both eras.
local core = require "moonmcp.core"
local registry = require "moonmcp.registry"

local next = next

local _M = {}

--- Legacy-era versions, newest first; modern-era versions, newest first.
_M.LEGACY_VERSIONS = { "2025-11-25", "2025-06-18", "2025-03-26" }
_M.MODERN_VERSIONS = { "2026-07-28" }
_M.LATEST_LEGACY = "2025-11-25"

local legacy, modern = {}, {}
for _, v in ipairs(_M.LEGACY_VERSIONS) do
  legacy[v] = true
end
for _, v in ipairs(_M.MODERN_VERSIONS) do
  modern[v] = true
end

function _M.is_legacy(version)
  return legacy[version] == true
end

function _M.is_modern(version)
  return modern[version] == true
end

function _M.is_supported(version)
  return legacy[version] == true or modern[version] == true
end

--- Every supported version, newest first (for UnsupportedProtocolVersion and discover).
function _M.supported_versions()
  local list = require("moonmcp.json").array()
  for _, v in ipairs(_M.MODERN_VERSIONS) do
    list[#list + 1] = v
  end
  for _, v in ipairs(_M.LEGACY_VERSIONS) do
    list[#list + 1] = v
  end
  return list
end

--- Picks the version to answer an initialize with: the client's if supported, else ours.
function _M.negotiate(requested)
  if legacy[requested] then
    return requested
  end
  return _M.LATEST_LEGACY
end

_M.server_info = {
  name = "moonmcp",
  title = "moonmcp",
  version = core.version,
}

--- Instructions sent in initialize and server/discover (settable by the config).
_M.instructions = nil

-- The client log level of the legacy era when there is no session: logging/setLevel
-- sets it for the whole process (stdio: the one client; HTTP without sessions: every
-- client, which is documented).
local legacy_log_level = nil

function _M.legacy_log_level()
  return legacy_log_level
end

function _M.set_legacy_log_level(level)
  legacy_log_level = level
end

--- The capabilities advertised: only what works. era is "legacy" or "modern".
function _M.capabilities(era)
  local gen = registry.current()
  local caps = {
    tools = { listChanged = true },
    completions = {},
  }
  if era ~= "modern" then
    caps.logging = {}
  end
  if next(gen.prompts) then
    caps.prompts = { listChanged = true }
  end
  if next(gen.resources) or next(gen.templates) then
    caps.resources = { listChanged = true, subscribe = era ~= "modern" or nil }
  end
  if era == "modern" then
    caps.logging = {}
  end
  return caps
end

return _M

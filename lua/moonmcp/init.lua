-- moonmcp — the module tool scripts require: require("moonmcp").
--
--   moonmcp.sleep(seconds)        parks only the calling call for that long
--   moonmcp.log.info(msg, fields) logs (levels: debug .. emergency), with the call's fields
--   moonmcp.json                  encode/decode with [] kept apart from {}
--   moonmcp.context               register your own context accessors
--   moonmcp.version
local core = require "moonmcp.core"
local host = require "moonmcp.host"

local await, core_sleep = host.await, core.sleep

local _M = {
  version = core.version,
  log = require "moonmcp.log",
  json = require "moonmcp.json",
  context = require "moonmcp.context",
}

--- Parks the calling coroutine for seconds (a number >= 0); other calls keep running.
--- Raises "cancelled" if the call is cancelled meanwhile.
function _M.sleep(seconds)
  return await(core_sleep(seconds))
end

return _M

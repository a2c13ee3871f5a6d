-- moonmcp — the module tool scripts require: require("moonmcp").
--
--   moonmcp.sleep(seconds)        parks only the calling call for that long
--   moonmcp.log.info(msg, fields) logs (levels: debug .. emergency), with the call's fields
--   moonmcp.json                  encode/decode with [] kept apart from {}
--   moonmcp.context               register your own context accessors
--   moonmcp.content               content blocks: text, image, audio, resource, resource_link...
--   moonmcp.base64                encode / decode (binary data travels as base64)
--   moonmcp.uri_template          RFC 6570 expand / match
--   moonmcp.resources.notify_updated(uri)
--                                 tells the clients subscribed to uri that it changed
--                                 (also moonmcp.notify_resource_updated(uri))
--   moonmcp.notify_list_changed(kind)  tools | prompts | resources: the list changed
--   moonmcp.state(name, init)     a table kept across reloads (see moonmcp.state)
--   moonmcp.spawn(fn, ...)        a background task owned by this generation of scripts;
--   moonmcp.every(seconds, fn)    a timer, likewise; both cancelled when a reload drops
--   moonmcp.cancel(id)            the generation (see moonmcp.tasks)
--   moonmcp.on_unload(fn)         runs fn when this generation is dropped
--   moonmcp.version
local core = require "moonmcp.core"
local host = require "moonmcp.host"

local await, core_sleep = host.await, core.sleep

local _M = {
  version = core.version,
  log = require "moonmcp.log",
  json = require "moonmcp.json",
  context = require "moonmcp.context",
  content = require "moonmcp.content",
  base64 = require "moonmcp.base64",
  uri_template = require "moonmcp.uri_template",
}

local subscriptions = require "moonmcp.subscriptions"

--- Sends notifications/resources/updated for uri to its subscribers; returns how many.
local function notify_updated(uri)
  return subscriptions.notify_updated(uri)
end

_M.resources = { notify_updated = notify_updated }
_M.notify_resource_updated = notify_updated

local LIST_KINDS = { tools = true, prompts = true, resources = true }

--- Tells listening clients that a list changed: kind is "tools", "prompts" or
--- "resources" (reloads do this by themselves; use it when a script changes what it
--- serves at run time).
function _M.notify_list_changed(kind)
  if not LIST_KINDS[kind] then
    error('notify_list_changed: kind must be "tools", "prompts" or "resources"', 2)
  end
  require("moonmcp.notify").list_changed(kind)
end

_M.state = require("moonmcp.state").get
local tasks = require "moonmcp.tasks"
_M.spawn, _M.every, _M.cancel, _M.on_unload = tasks.spawn, tasks.every, tasks.cancel, tasks.on_unload

--- Parks the calling coroutine for seconds (a number >= 0); other calls keep running.
--- Raises "cancelled" if the call is cancelled meanwhile.
function _M.sleep(seconds)
  return await(core_sleep(seconds))
end

return _M

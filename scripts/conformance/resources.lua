-- scripts/conformance/resources.lua — resources and the resource template for the official
-- MCP conformance suite (docs/conformance.md). URIs/texts match the suite's reference server.
--   resources-list, resources-read-text, resources-read-binary, resources-templates-read,
--   resources-subscribe / -unsubscribe (2025-11-25: test://watched-resource),
--   caching (2026-07-28: reads the FIRST resource resources/list returns, so every listed
--   resource must be readable), completion for the template's {id}.
-- Host duties these scripts rely on (no script code): sep-2164-resource-not-found (unknown
-- URI -> JSON-RPC error -32602 with data.uri, never an empty contents), resources/subscribe
-- and /unsubscribe returning {} (2025-11-25), ttlMs/cacheScope on list/read results (2026).
local moonmcp = require "moonmcp"

local PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

local function json_str(s) -- a JSON string literal for a URI segment
  return '"' .. tostring(s):gsub('[%c"\\]', function(ch) return ("\\u%04x"):format(ch:byte()) end) .. '"'
end

local watched_text = "Watched resource content"

return {
  resources = {
    ["test://static-text"] = {
      name = "static-text", title = "Static Text Resource",
      description = "A static text resource for testing", mimeType = "text/plain",
      read = function() return "This is the content of the static text resource." end,
    },

    ["test://static-binary"] = {
      name = "static-binary", title = "Static Binary Resource",
      description = "A static binary resource (image) for testing", mimeType = "image/png",
      read = function() return { blob = PNG } end, -- contents[1] = {uri, mimeType="image/png", blob}
    },

    -- Target of resources/subscribe and /unsubscribe (2025-11-25). The suite only checks
    -- that both return {}; no resources/updated notification is awaited.
    ["test://watched-resource"] = {
      name = "watched-resource", title = "Watched Resource",
      description = "A subscribable resource; see test_trigger_resource_update", mimeType = "text/plain",
      read = function() return watched_text end,
    },
  },

  templates = {
    -- resources/read test://template/123/data -> text must contain "123".
    ["test://template/{id}/data"] = {
      name = "template", title = "Resource Template",
      description = "A resource template with parameter substitution", mimeType = "application/json",
      read = function(_, vars)
        local id = json_str(vars.id)
        return ('{"id":%s,"templateTest":true,"data":%s}'):format(id, json_str("Data for ID: " .. vars.id))
      end,
      complete = { id = { "123", "456", "789" } },
    },
  },

  tools = {
    -- Not used by the suite: lets our own interop tests see notifications/resources/updated
    -- after resources/subscribe (2025-11-25) or on a subscriptions/listen stream (2026-07-28).
    test_trigger_resource_update = {
      description = "Changes test://watched-resource and notifies subscribers",
      input = { type = "object", properties = {} },
      handler = function()
        watched_text = "Watched resource content (updated " .. os.time() .. ")"
        moonmcp.notify_resource_updated("test://watched-resource")
        return "updated"
      end,
    },
  },
}

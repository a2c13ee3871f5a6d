-- scripts/conformance/stateless.lua — diagnostic tools that the 2026-07-28 `server-stateless`
-- scenario (SEP-2575) calls by name (docs/conformance.md). It reports "Not testable" as a
-- FAILURE when one of them is missing from tools/list, so all of them are required.
-- Everything else server-stateless checks (_meta validation, server/discover, version and
-- header errors, 404 for removed methods, subscriptions/listen) is host behaviour.
local moonmcp = require "moonmcp"

local NO_ARGS = { type = "object", properties = {} }

return {
  tools = {
    -- Called with clientCapabilities {} (no sampling). The host must refuse with JSON-RPC
    -- -32021 MissingRequiredClientCapability, HTTP 400, error.data.requiredCapabilities =
    -- {sampling = {}} (an object, not a list), and the request id echoed.
    test_missing_capability = {
      description = "Test tool requiring sampling",
      input = NO_ARGS,
      handler = function(_, ctx)
        -- ctx:sample without the client's sampling capability ends the call: -32021 (HTTP 400)
        local r = ctx:sample { messages = { { role = "user", content = { type = "text", text = "ping" } } },
                               max_tokens = 10 }
        return "Success: " .. tostring(r.content and r.content.text)
      end,
    },

    -- Called with clientCapabilities {elicitation={}}; the response stream may hold
    -- notifications and the final response only — never a server->client request
    -- (an elicitation must come back as resultType "input_required").
    test_streaming_elicitation = {
      description = "Diagnostic tool validating response progress streams",
      input = NO_ARGS,
      handler = function(_, ctx)
        ctx:progress(50, 100, "halfway")
        ctx:elicit { key = "proceed", message = "Continue streaming?",
                     schema = { type = "object", properties = { ok = { type = "boolean" } } } }
        return "Streaming complete"
      end,
    },

    -- Called WITHOUT _meta io.modelcontextprotocol/logLevel: the host must then send no
    -- notifications/message at all, although this handler logs.
    test_logging_tool = {
      description = "Diagnostic logging validator tool",
      input = NO_ARGS,
      handler = function()
        moonmcp.log.info("Diagnostic trace logging activated")
        return "Logging evaluated"
      end,
    },

    -- Mutation hooks: called while a subscriptions/listen stream is open. The host must push
    -- notifications/tools/list_changed (resp. prompts/list_changed), tagged with
    -- _meta io.modelcontextprotocol/subscriptionId, only to streams that asked for
    -- toolsListChanged (resp. promptsListChanged). Only SHOULD-level (WARNING) checks, and
    -- SKIPPED if server/discover advertises no listChanged/subscribe capability at all.
    test_trigger_tool_change = {
      description = "Announces a tools/list change to subscribers",
      input = NO_ARGS,
      handler = function()
        moonmcp.notify_list_changed("tools")
        return "Mutation triggered"
      end,
    },

    test_trigger_prompt_change = {
      description = "Announces a prompts/list change to subscribers",
      input = NO_ARGS,
      handler = function()
        moonmcp.notify_list_changed("prompts")
        return "Mutation triggered"
      end,
    },
  },
}

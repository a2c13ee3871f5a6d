-- scripts/conformance/tools.lua — content/behaviour tools for the official MCP conformance
-- suite (@modelcontextprotocol/conformance, see docs/conformance.md). Names, texts and
-- base64 payloads match the suite's reference server (examples/servers/typescript/
-- everything-server.ts). Wire-agnostic: the same tools serve 2025-11-25 and 2026-07-28.
--   tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -error,
--   -with-logging, -with-progress; json-schema-2020-12 (not scored);
--   server-sse-polling (not scored); http-custom-header-server-validation (not scored).
local moonmcp = require "moonmcp"
local c = moonmcp.content

-- 1x1 red PNG and a minimal WAV, byte-identical to the reference server's.
local PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
local WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

local NO_ARGS = { type = "object", properties = {} } -- empty table encodes as {} (ljson)

return {
  tools = {
    test_simple_text = {
      description = "Tests simple text content response",
      input = NO_ARGS,
      handler = function() return "This is a simple text response for testing." end,
    },

    test_image_content = {
      description = "Tests image content response",
      input = NO_ARGS,
      handler = function() return { content = { c.image(PNG, "image/png") } } end,
    },

    test_audio_content = {
      description = "Tests audio content response",
      input = NO_ARGS,
      handler = function() return { content = { c.audio(WAV, "audio/wav") } } end, -- mimeType checked exactly
    },

    test_embedded_resource = {
      description = "Tests embedded resource content response",
      input = NO_ARGS,
      handler = function()
        return { content = { c.resource {
          uri = "test://embedded-resource", mimeType = "text/plain",
          text = "This is an embedded resource content.",
        } } }
      end,
    },

    test_multiple_content_types = {
      description = "Tests response with multiple content types (text, image, resource)",
      input = NO_ARGS,
      handler = function()
        return { content = {
          c.text("Multiple content types test:"),
          c.image(PNG, "image/png"),
          c.resource { uri = "test://mixed-content-resource", mimeType = "application/json",
                       text = '{"test":"data","value":123}' },
        } }
      end,
    },

    -- Suite sets logging/setLevel "debug" first, then wants >= 3 notifications/message
    -- during the call (2025-11-25 only; on 2026-07-28 logs go out only if the request's
    -- _meta carries io.modelcontextprotocol/logLevel).
    test_tool_with_logging = {
      description = "Tests tool that emits log messages during execution",
      input = NO_ARGS,
      handler = function()
        moonmcp.log.info("Tool execution started")
        moonmcp.sleep(0.05)
        moonmcp.log.info("Tool processing data")
        moonmcp.sleep(0.05)
        moonmcp.log.info("Tool execution completed")
        return "Tool with logging executed successfully"
      end,
    },

    -- Suite sends _meta.progressToken = "progress-test-1" and wants >= 3 non-decreasing
    -- notifications/progress echoing that token, delivered before the result (on
    -- 2026-07-28 they must ride the tools/call SSE response stream).
    test_tool_with_progress = {
      description = "Tests tool that reports progress notifications",
      input = NO_ARGS,
      handler = function(_, ctx)
        for i, p in ipairs { 0, 50, 100 } do
          if i > 1 then moonmcp.sleep(0.05) end
          ctx:progress(p, 100, ("Completed step %d of 100"):format(p))
        end
        return "Progress test completed"
      end,
    },

    -- Must come back as a *result* with isError = true and a text block (not a JSON-RPC error).
    test_error_handling = {
      description = "Tests error response handling",
      input = NO_ARGS,
      handler = function() return nil, "This tool intentionally returns an error for testing" end,
    },

    -- json-schema-2020-12 (pending, not scored): tools/list must echo this inputSchema
    -- verbatim ($schema, $defs + $anchor, allOf/anyOf, if/then/else, additionalProperties).
    json_schema_2020_12_tool = {
      description = "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
      input = {
        ["$schema"] = "https://json-schema.org/draft/2020-12/schema",
        type = "object",
        ["$defs"] = { address = { ["$anchor"] = "addressDef", type = "object",
          properties = { street = { type = "string" }, city = { type = "string" } } } },
        properties = {
          name = { type = "string" },
          address = { ["$ref"] = "#/$defs/address" },
          contactMethod = { type = "string", enum = { "phone", "email" } },
          phone = { type = "string" },
          email = { type = "string" },
        },
        allOf = { { anyOf = { { required = { "phone" } }, { required = { "email" } } } } },
        ["if"] = { properties = { contactMethod = { const = "phone" } }, required = { "contactMethod" } },
        ["then"] = { required = { "phone" } },
        ["else"] = { required = { "email" } },
        additionalProperties = false,
      },
      handler = function(args)
        return "JSON Schema 2020-12 tool called with: " .. moonmcp.json.encode(args)
      end,
    },

    -- http-custom-header-server-validation (pending, 2026-07-28, not scored): needs one tool
    -- with a string property annotated x-mcp-header; the host must then check the
    -- Mcp-Param-Region header against arguments.region (plain or =?base64?…?=), HTTP 400 / -32020.
    test_custom_header = {
      description = "Echoes a region that clients mirror into the Mcp-Param-Region header (SEP-2243)",
      input = { type = "object", required = { "region" }, properties = {
        region = { type = "string", description = "Region to echo", ["x-mcp-header"] = "Region" } } },
      handler = function(args) return "region=" .. tostring(args.region) end,
    },

    -- server-sse-polling (pending, 2025-11-25 only, not scored) wants the POST's SSE stream
    -- closed mid-call and the result delivered after a GET with Last-Event-ID. moonmcp does
    -- not make streams resumable (optional in 2025-11-25, removed in 2026-07-28): this tool
    -- answers on the stream it was called on.
    test_reconnection = {
      description = "Answers on its own stream (resumable SSE streams are not offered)",
      input = NO_ARGS,
      handler = function()
        moonmcp.sleep(0.1)
        return "Reconnection test completed successfully. If you received this, the client properly"
          .. " reconnected after stream closure."
      end,
    },
  },
}

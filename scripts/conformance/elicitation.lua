-- scripts/conformance/elicitation.lua — tools that ask the client for input (sampling and
-- elicitation), for the official MCP conformance suite (docs/conformance.md).
-- On 2025-11-25 the host sends these as server->client requests on the tools/call SSE
-- stream; on 2026-07-28 the same ctx:elicit / ctx:sample become an InputRequiredResult
-- (MRTR) — the scripts do not care which.
--   tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults,
--   elicitation-sep1330-enums (all 2025-11-25 only, all "interaction" scenarios).
local moonmcp = require "moonmcp"

local function outcome(prefix, r)
  -- content may be absent on decline/cancel
  return ("%s: action=%s, content=%s"):format(prefix, tostring(r.action),
    r.content and moonmcp.json.encode(r.content) or "{}")
end

return {
  tools = {
    -- Suite answers sampling/createMessage with an assistant text "This is a test response
    -- from the client"; passes if the request was made and the result has content.
    test_sampling = {
      description = "Tests server-initiated sampling (LLM completion request)",
      input = { type = "object", required = { "prompt" }, properties = {
        prompt = { type = "string", description = "The prompt to send to the LLM" } } },
      handler = function(args, ctx)
        local r = ctx:sample {
          messages = { { role = "user", content = { type = "text", text = args.prompt } } },
          max_tokens = 100,
        }
        local text = r and r.content and r.content.text or "No response"
        return "LLM response: " .. text
      end,
    },

    -- Suite answers accept {username="testuser", email="test@example.com"}: this schema is
    -- the one the scenario documents, so the client-side schema check accepts that answer.
    test_elicitation = {
      description = "Tests server-initiated elicitation (user input request)",
      input = { type = "object", required = { "message" }, properties = {
        message = { type = "string", description = "The message to show the user" } } },
      handler = function(args, ctx)
        local r = ctx:elicit {
          message = args.message,
          schema = { type = "object", required = { "username", "email" }, properties = {
            username = { type = "string", description = "User's response" },
            email = { type = "string", description = "User's email address" },
          } },
        }
        return outcome("User response", r)
      end,
    },

    -- SEP-1034: every primitive type carries a default; the suite checks each type+default.
    test_elicitation_sep1034_defaults = {
      description = "Tests elicitation with default values per SEP-1034",
      input = { type = "object", properties = {} },
      handler = function(_, ctx)
        local r = ctx:elicit {
          message = "Please review and update the form fields with defaults",
          schema = { type = "object", properties = { -- no `required`: an empty list would encode as {}
            name = { type = "string", description = "User name", default = "John Doe" },
            age = { type = "integer", description = "User age", default = 30 },
            score = { type = "number", description = "User score", default = 95.5 },
            status = { type = "string", description = "User status",
                       enum = { "active", "inactive", "pending" }, default = "active" },
            verified = { type = "boolean", description = "Verification status", default = true },
          } },
        }
        return outcome("Elicitation completed", r)
      end,
    },

    -- SEP-1330: the five enum shapes, each checked field by field.
    test_elicitation_sep1330_enums = {
      description = "Tests elicitation with enum schema improvements per SEP-1330",
      input = { type = "object", properties = {} },
      handler = function(_, ctx)
        local r = ctx:elicit {
          message = "Please select options from the enum fields",
          schema = { type = "object", properties = {
            untitledSingle = { type = "string", description = "Select one option",
                               enum = { "option1", "option2", "option3" } },
            titledSingle = { type = "string", description = "Select one option with titles", oneOf = {
              { const = "value1", title = "First Option" }, { const = "value2", title = "Second Option" },
              { const = "value3", title = "Third Option" } } },
            legacyEnum = { type = "string", description = "Select one option (legacy)",
                           enum = { "opt1", "opt2", "opt3" },
                           enumNames = { "Option One", "Option Two", "Option Three" } },
            untitledMulti = { type = "array", description = "Select multiple options", minItems = 1, maxItems = 3,
                              items = { type = "string", enum = { "option1", "option2", "option3" } } },
            titledMulti = { type = "array", description = "Select multiple options with titles",
                            minItems = 1, maxItems = 3, items = { anyOf = {
              { const = "value1", title = "First Choice" }, { const = "value2", title = "Second Choice" },
              { const = "value3", title = "Third Choice" } } } },
          } },
        }
        return outcome("Elicitation completed", r)
      end,
    },
  },
}

-- scripts/conformance/prompts.lua — prompts for the official MCP conformance suite
-- (docs/conformance.md). Names and texts match the suite's reference server.
--   prompts-list (every prompt needs a description), prompts-get-simple,
--   prompts-get-with-args, prompts-get-embedded-resource, prompts-get-with-image,
--   completion-complete (ref/prompt test_prompt_with_arguments, argument arg1, value "test";
--   any {completion = {values = [...]}} passes, an empty list too).
local moonmcp = require "moonmcp"
local c = moonmcp.content

local PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

local function user(content) return { role = "user", content = content } end

return {
  prompts = {
    test_simple_prompt = {
      title = "Simple Test Prompt", description = "A simple prompt without arguments",
      handler = function()
        return { messages = { user(c.text("This is a simple prompt for testing.")) } }
      end,
    },

    -- Suite sends arg1="testValue1", arg2="testValue2" and looks for both in the messages.
    test_prompt_with_arguments = {
      title = "Prompt With Arguments", description = "A prompt with required arguments",
      arguments = {
        { name = "arg1", description = "First test argument", required = true,
          complete = { "paris", "park", "party" } },
        { name = "arg2", description = "Second test argument", required = true },
      },
      handler = function(args)
        return { messages = { user(c.text(("Prompt with arguments: arg1='%s', arg2='%s'")
          :format(tostring(args.arg1), tostring(args.arg2)))) } }
      end,
    },

    -- Suite sends resourceUri="test://example-resource"; wants a message with type "resource".
    test_prompt_with_embedded_resource = {
      title = "Prompt With Embedded Resource", description = "A prompt that includes an embedded resource",
      arguments = { { name = "resourceUri", description = "URI of the resource to embed", required = true } },
      handler = function(args)
        return { messages = {
          user(c.resource { uri = args.resourceUri, mimeType = "text/plain",
                            text = "Embedded resource content for testing." }),
          user(c.text("Please process the embedded resource above.")),
        } }
      end,
    },

    -- Wants a message whose content is {type="image", data, mimeType}.
    test_prompt_with_image = {
      title = "Prompt With Image", description = "A prompt that includes image content",
      handler = function()
        return { messages = {
          user(c.image(PNG, "image/png")),
          user(c.text("Please analyze the image above.")),
        } }
      end,
    },
  },
}

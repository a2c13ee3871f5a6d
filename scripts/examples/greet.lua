-- greet — the smallest useful tool: says hello, and logs that it did.
local moonmcp = require "moonmcp"

return {
  tools = {
    greet = {
      title = "Greet",
      description = "Say hello to someone by name.",
      input = {
        type = "object",
        properties = { name = { type = "string", description = "Who to greet" } },
        required = { "name" },
      },
      annotations = { readOnlyHint = true, idempotentHint = true, openWorldHint = false },
      handler = function(args)
        moonmcp.log.info("greeting", { name = args.name })
        return "Hello, " .. args.name .. "!"
      end,
    },
  },
}

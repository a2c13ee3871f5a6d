-- Bench fixture: one `echo` tool that returns its arguments (as structured content).
return {
  tools = {
    echo = {
      description = "Returns its arguments as structured content.",
      input = { type = "object" },
      handler = function(args)
        return args
      end,
    },
  },
}

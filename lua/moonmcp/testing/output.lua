-- moonmcp.testing.output — busted output: the plain terminal handler, plus one closing
-- line "tests: N passed, N failed, N skipped" (errors count as failed) that CI reads.
local busted = require "busted"

return function(options)
  local handler = require("busted.outputHandlers.plainTerminal")(options)
  local subscribe = handler.subscribe
  handler.subscribe = function(self, opts)
    subscribe(self, opts)
    busted.subscribe({ "suite", "end" }, function()
      io.stdout:write(("tests: %d passed, %d failed, %d skipped\n"):format(handler.successesCount,
        handler.failuresCount + handler.errorsCount, handler.pendingsCount))
      io.stdout:flush()
      return nil, true
    end)
  end
  return handler
end

-- Bench fixture for bench/park.sh: a `sleep` tool that parks its call for `seconds`,
-- and a `heap` tool that reports the Lua heap (KB) before and after a full collection,
-- so the resident memory of parked calls can be split into Lua heap and the rest.
local moonmcp = require "moonmcp"

return {
  tools = {
    sleep = {
      description = "Sleeps, then says how long.",
      input = { type = "object", properties = { seconds = { type = "number" } }, required = { "seconds" } },
      handler = function(args)
        moonmcp.sleep(args.seconds)
        return "slept " .. args.seconds
      end,
    },
    heap = {
      description = "Lua heap in KB before and after collectgarbage('collect').",
      input = { type = "object" },
      handler = function()
        local before = collectgarbage("count")
        collectgarbage("collect")
        return { before_kb = math.floor(before), after_kb = math.floor(collectgarbage("count")) }
      end,
    },
  },
}

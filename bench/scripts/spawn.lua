-- Bench fixture for bench/spawn.lua: a `loop` tool that runs `n` iterations of one kind
-- of work inside a call and reports the time it took (wall, monotonic clock, and process
-- CPU time), in microseconds:
--   mode "call"   local f = function() return 1 end; f()         (a plain function call,
--                 with the same closure allocation as the spawn case)
--   mode "spawn"  local t = ctx:spawn(function() return 1 end); ctx:wait(t)
--   mode "fanout" spawn `n` children first, then wait for each (n live children at once)
local core = require "moonmcp.core"

local clock, cpu = core.clock, os.clock

return {
  tools = {
    loop = {
      description = "Runs n iterations of a mode; returns the elapsed microseconds.",
      input = {
        type = "object",
        properties = { n = { type = "integer", minimum = 1 }, mode = { enum = { "call", "spawn", "fanout" } } },
        required = { "n", "mode" },
      },
      handler = function(args, ctx)
        local n, mode, sink = args.n, args.mode, 0
        local t0, c0 = clock(), cpu()
        if mode == "call" then
          for _ = 1, n do
            local f = function()
              return 1
            end
            sink = sink + f()
          end
        elseif mode == "spawn" then
          for _ = 1, n do
            local t = ctx:spawn(function()
              return 1
            end)
            sink = sink + ctx:wait(t)
          end
        else
          local tasks = {}
          for i = 1, n do
            tasks[i] = ctx:spawn(function()
              return 1
            end)
          end
          for i = 1, n do
            sink = sink + ctx:wait(tasks[i])
          end
        end
        local wall, used = (clock() - t0) * 1e6, (cpu() - c0) * 1e6
        assert(sink == n)
        return { wall_us = wall, cpu_us = used, n = n }
      end,
    },
  },
}

-- Bench helper fixture (serve it next to echo.lua): drives LuaJIT's own profiler and trace
-- log inside the server, so a run can say where the Lua side of a call spends its time.
--   tools/call profile {"action":"start","mode":"vfl","out":"/tmp/p.txt","verbose":"/tmp/v.txt"}
--   ... load ...
--   tools/call profile {"action":"stop"}
-- mode is jit.p's (v: VM state, f: function, F: function with file:line, l: line, z: zone;
-- a digit sets stack depth). verbose, when given, starts jit.v (trace starts/aborts).
local started = false

return {
  tools = {
    profile = {
      description = "Starts or stops jit.p (and optionally jit.v).",
      input = { type = "object", properties = { action = { type = "string" } }, required = { "action" } },
      handler = function(args)
        if args.action == "start" and not started then
          if args.verbose then
            require("jit.v").on(args.verbose)
          end
          require("jit.p").start(args.mode or "vfl", args.out or "/tmp/moonmcp-jitp.txt")
          started = true
          return "started"
        elseif args.action == "stop" and started then
          require("jit.p").stop()
          pcall(function() require("jit.v").off() end)
          started = false
          return "stopped"
        end
        return nil, "bad action or state"
      end,
    },
  },
}

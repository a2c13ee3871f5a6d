-- moonmcp.testing.runner — `moonmcp test`: busted under LuaJIT, inside the host.
--
-- Specs run in a scheduled coroutine with the event loop running, so they may call
-- yielding APIs (moonmcp.sleep, I/O) and start real servers. The runtime is configured
-- as `serve` configures it (accessors, protocol methods), without listening anywhere.
-- Unless the caller picks an output (-o), results print in busted's plain format and end
-- with one summary line "tests: N passed, N failed, N skipped".
local core = require "moonmcp.core"

local _M = {}

function _M.run(home, args)
  local has_output = false
  for _, a in ipairs(args) do
    if a == "-o" or a:match("^%-%-output") then
      has_output = true
    end
  end
  local argv = { [0] = "busted" }
  if not has_output then
    argv[1] = "--output=moonmcp.testing.output"
  end
  for _, a in ipairs(args) do
    argv[#argv + 1] = a
  end
  _G.arg = argv -- busted's cli reads the global arg
  local ok, err = require("moonmcp.serve").configure({ watchdog = false }) -- handlers stay JIT-compiled in specs
  if not ok then
    core.stderr("moonmcp test: " .. err .. "\n")
    return 1
  end
  package.loaded["moonmcp.testing.home"] = home
  local passed = pcall(require("busted.runner"), { standalone = false })
  -- busted.runner returns normally when every test passed, and raises when some failed
  return passed and 0 or 1
end

return _M

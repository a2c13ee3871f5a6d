-- helpers.leak — descriptor and handle counts for leak specs.
--
-- baseline() records the open descriptors (/proc/self/fd) and the live libuv handles;
-- settle(base, deadline) lets close callbacks run (sleeping briefly) until both counts are
-- back to the baseline or the deadline passes, and returns the final counts.
local core = require "moonmcp.core"
local moonmcp = require "moonmcp"

local _M = {}

--- How many operations a leak spec runs: $MOONMCP_LEAK_OPS (the README's test command
--- sets 10,000 for the plain build), else the spec's own smaller default.
function _M.ops(default)
  return tonumber(os.getenv("MOONMCP_LEAK_OPS")) or default
end

function _M.fds()
  local list = core.scandir("/proc/self/fd")
  return #list
end

function _M.handles()
  return (core.handles())
end

function _M.baseline()
  moonmcp.sleep(0.01)
  return { fds = _M.fds(), handles = _M.handles() }
end

--- Waits until fds and handles are back to base (or `seconds` passed); returns the counts.
function _M.settle(base, seconds)
  local deadline = core.clock() + (seconds or 2)
  local now
  repeat
    collectgarbage()
    moonmcp.sleep(0.01)
    now = { fds = _M.fds(), handles = _M.handles() }
  until (now.fds <= base.fds and now.handles <= base.handles) or core.clock() > deadline
  return now
end

--- Asserts that fds and handles come back to (at most) base within seconds.
function _M.check(base, seconds)
  local now = _M.settle(base, seconds)
  if now.fds > base.fds or now.handles > base.handles then
    error(("leak: %d fds and %d handles, baseline %d and %d"):format(now.fds, now.handles, base.fds,
      base.handles), 2)
  end
end

return _M

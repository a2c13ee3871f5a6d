-- moonmcp.registry — the generation of scripts being served.
--
-- A generation (see moonmcp.loader) is swapped in whole with set(); a call looks it up
-- once when it starts (exchange.generation) and keeps it, so calls in flight finish on
-- the code they started with while new calls see the new one.
local _M = {}

local current = { tools = {}, prompts = {}, resources = {}, templates = {}, files = {} }
local listeners = {}

function _M.current()
  return current
end

--- Swaps in a new generation and tells every listener (old, new).
function _M.set(gen)
  local old = current
  current = gen
  for _, fn in ipairs(listeners) do
    fn(old, gen)
  end
end

--- Registers fn(old, new), called after every swap.
function _M.on_change(fn)
  listeners[#listeners + 1] = fn
end

return _M

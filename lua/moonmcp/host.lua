-- moonmcp.host — the Lua side of the scheduler contract (core/sched.h).
--
-- Owns: turning the CANCELLED sentinel into the error "cancelled" (await), and the
-- coroutine library handlers see, patched so that a host yield made inside a coroutine
-- the handler created itself (coroutine.wrap/create) travels up to the scheduler and its
-- answer travels back down, instead of landing in the handler's own resume. This is the
-- same replacement OpenResty makes; user yields behave exactly as before.
local core = require "moonmcp.core"

local co_create, co_resume, co_yield, co_status = coroutine.create, coroutine.resume, coroutine.yield,
  coroutine.status
local select, error, unpack = select, error, unpack

local HOST_YIELD, CANCELLED = core.HOST_YIELD, core.CANCELLED

local _M = { CANCELLED = CANCELLED, HOST_YIELD = HOST_YIELD }

--- The error value a cancelled call sees at its yield.
_M.CANCELLED_ERROR = "cancelled"

--- Passes through the results of a yielding primitive, raising "cancelled" when the call
--- was cancelled while it waited.
function _M.await(...)
  if ... == CANCELLED then
    error(_M.CANCELLED_ERROR, 0)
  end
  return ...
end

local function pack(...)
  return { n = select("#", ...), ... }
end

-- Resumes co; while co parks on a host yield, parks the current coroutine too (so the
-- yield reaches the scheduler) and hands the scheduler's answer back down to co.
local function resume(co, ...)
  local r = pack(co_resume(co, ...))
  while r[1] and r[2] == HOST_YIELD and r.n == 2 and co_status(co) == "suspended" do
    r = pack(co_resume(co, co_yield(HOST_YIELD)))
  end
  return unpack(r, 1, r.n)
end
_M.resume = resume

local function wrap(fn)
  local co = co_create(fn)
  return function(...)
    local r = pack(resume(co, ...))
    if not r[1] then
      error(r[2], 0)
    end
    return unpack(r, 2, r.n)
  end
end

--- Installs the patched resume and wrap in the global coroutine table (once, at start).
function _M.patch_coroutine_library()
  coroutine.resume = resume -- luacheck: ignore 122
  coroutine.wrap = wrap -- luacheck: ignore 122
end

return _M

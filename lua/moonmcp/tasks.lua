-- moonmcp.tasks — background tasks, timers and unload hooks owned by a script generation.
--
-- A script that starts work of its own — a refresher that runs every minute, a task
-- that warms a cache — starts it with moonmcp.spawn(fn, ...) or moonmcp.every(seconds,
-- fn), and may register cleanup with moonmcp.on_unload(fn). Each of them is owned by a
-- generation of scripts (moonmcp.loader):
--   * while the loader runs the scripts of a generation: that generation;
--   * inside a call: the generation the call started on (exchange.generation);
--   * inside an owned task: the owner of that task (children inherit).
-- Anything else (specs, the host's own tasks) is owned by nobody and lives until it ends.
--
-- When a generation is dropped — replaced by a reload (registry.set), or a load that
-- failed half-way — its unload hooks run (newest first), then its tasks are cancelled:
-- their next (or current) yield raises "cancelled", which ends them; the I/O they were
-- waiting on is cancelled with them. A task spawned by a call that is still running is
-- cancelled when that call ends, so calls in flight keep the helpers they started.
-- Handles a script keeps outside any task (say, a socket in a local of the script) are
-- not tracked: close them in an on_unload hook.
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local calls = require "moonmcp.calls"
local registry = require "moonmcp.registry"
local log = require "moonmcp.log"

local type, error, xpcall, traceback, tostring, pairs, ipairs, select, unpack =
  type, error, xpcall, debug.traceback, tostring, pairs, ipairs, select, unpack
local spawn, current, cancel = core.spawn, core.current, core.cancel

local _M = {}

-- How often a deferred cancellation looks whether its call ended.
_M.REAP_INTERVAL = 0.05

local loading = nil -- the owner of the generation being loaded
local owner_of = {} -- task id -> owner
local parent_of = {} -- task id -> id of the call that spawned it (directly or through tasks)

--- A new owner: { tasks = { [id] = true }, unload = { fn ... }, dropped = false }.
function _M.new_owner()
  return { tasks = {}, unload = {}, dropped = false }
end

--- Marks owner as the generation being loaded; returns the previous one (for end_load).
function _M.begin_load(owner)
  local prev = loading
  loading = owner
  return prev
end

function _M.end_load(prev)
  loading = prev
end

-- The owner of code running now, and the call it runs for (if any).
local function owner_now()
  if loading then
    return loading, nil
  end
  local id = current()
  if not id then
    return nil, nil
  end
  local ctx, exchange = calls.get(id)
  if ctx then
    local gen = exchange and exchange.generation
    return gen and gen.owner, id
  end
  return owner_of[id], parent_of[id]
end
_M.owner_now = owner_now

local function is_cancel(err)
  return err == "cancelled" or (type(err) == "string" and err:match("^cancelled\n") ~= nil)
end

local function on_error(err)
  if err == "cancelled" then
    return err
  end
  return traceback(tostring(err), 2)
end

--- Spawns fn(...) as a background task owned by the current generation; returns its id.
--- An error in fn is logged; the task ends.
function _M.spawn(fn, ...)
  if type(fn) ~= "function" then
    error("moonmcp.spawn: fn must be a function", 2)
  end
  local owner, parent = owner_now()
  local id
  local n, args = select("#", ...), { ... }
  id = spawn(function()
    local ok, err = xpcall(fn, on_error, unpack(args, 1, n))
    if not ok and not is_cancel(err) then
      log.error("background task failed", { error = tostring(err) })
    end
    if owner_of[id] then
      owner_of[id].tasks[id] = nil
    end
    owner_of[id], parent_of[id] = nil, nil
  end)
  if owner then
    owner_of[id], parent_of[id] = owner, parent
    owner.tasks[id] = true
    if owner.dropped then
      cancel(id)
    end
  end
  return id
end

--- Runs fn() every `seconds` (first after `seconds`) in an owned task; returns its id.
--- An error in one run is logged and the timer keeps going. Stop it with moonmcp.cancel(id).
function _M.every(seconds, fn)
  if type(seconds) ~= "number" or seconds <= 0 or seconds ~= seconds or seconds == math.huge then
    error("moonmcp.every: seconds must be a finite number > 0", 2)
  end
  if type(fn) ~= "function" then
    error("moonmcp.every: fn must be a function", 2)
  end
  local sleep = require("moonmcp").sleep
  return _M.spawn(function()
    while true do
      sleep(seconds)
      local ok, err = xpcall(fn, on_error)
      if not ok then
        if is_cancel(err) then
          error("cancelled", 0)
        end
        log.error("timer failed", { error = tostring(err) })
      end
    end
  end)
end

--- Cancels a task (its next yield raises "cancelled"). Returns true if it was alive.
function _M.cancel(id)
  if type(id) ~= "number" then
    error("moonmcp.cancel: id must be a task id (a number)", 2)
  end
  return cancel(id)
end

--- Registers fn() to run when the current generation is dropped. Returns true, or false
--- when no generation owns the code running now (fn will then never run).
function _M.on_unload(fn)
  if type(fn) ~= "function" then
    error("moonmcp.on_unload: fn must be a function", 2)
  end
  local owner = owner_now()
  if not owner then
    return false
  end
  owner.unload[#owner.unload + 1] = fn
  return true
end

-- Cancels task id once call `parent` has ended: at its leave (moonmcp.calls.on_leave),
-- or, without that hook, by looking every REAP_INTERVAL seconds.
local deferred = {} -- call id -> { task id, ... }

local function cancel_after(id, parent)
  if calls.on_leave then
    local list = deferred[parent]
    if not list then
      list = {}
      deferred[parent] = list
    end
    list[#list + 1] = id
    return
  end
  spawn(function()
    while calls.get(parent) and owner_of[id] do
      host.await(core.sleep(_M.REAP_INTERVAL))
    end
    cancel(id)
  end)
end

if calls.on_leave then
  calls.on_leave(function(call_id)
    local list = deferred[call_id]
    if list then
      deferred[call_id] = nil
      for _, id in ipairs(list) do
        cancel(id)
      end
    end
  end)
end

--- Drops an owner: runs its unload hooks (newest first), cancels its tasks.
function _M.drop(owner)
  if not owner or owner.dropped then
    return
  end
  owner.dropped = true
  for i = #owner.unload, 1, -1 do
    local ok, err = xpcall(owner.unload[i], traceback)
    if not ok then
      log.error("an on_unload hook failed", { error = tostring(err) })
    end
  end
  owner.unload = {}
  for id in pairs(owner.tasks) do
    local parent = parent_of[id]
    if parent and calls.get(parent) then
      cancel_after(id, parent)
    else
      cancel(id)
    end
  end
end

--- Number of live tasks owned by owner (for specs).
function _M.count(owner)
  local n = 0
  for _ in pairs(owner and owner.tasks or {}) do
    n = n + 1
  end
  return n
end

-- A generation replaced by another is dropped.
registry.on_change(function(old, new)
  if old ~= new and old.owner and old.owner ~= new.owner then
    _M.drop(old.owner)
  end
end)


return _M

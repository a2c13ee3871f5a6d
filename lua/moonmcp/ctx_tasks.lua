-- moonmcp.ctx_tasks — child tasks of a call: ctx:spawn, ctx:wait, ctx:all, ctx:after.
--
--   local t = ctx:spawn(fn, ...)   runs fn(child_ctx, ...) in a child coroutine
--   ctx:wait(t) / t:wait()         -> fn's results; fn's error is raised again here
--                                     (a child that was cancelled raises "task cancelled")
--   ctx:all{ t1, t2, fn3 }         -> { first result of each }, in order (functions are
--                                     spawned first); the first error cancels the others
--                                     and is raised
--   ctx:after(seconds, fn, ...)    -> a task running fn(child_ctx, ...) after seconds
--   t:cancel(), t:done() -> bool, t.id
--
-- The child's context is a fresh copy made the way a call's is (DESIGN §2): the request's
-- context is snapshotted again and every accessor restores into a new table (so the child
-- gets, for instance, its own span id); keys the parent holds that no accessor restored
-- are deep-copied, and the parent's log fields (tool name ...) carry over. Nothing the
-- child writes reaches the parent. Children share the parent's exchange (progress, logs).
--
-- Children never outlive their call: when a call (or a child with children of its own)
-- leaves — result, error or cancellation — its live children are cancelled
-- (moonmcp.calls.on_leave). Cancelling a call therefore cancels its children.
-- Not to be confused with moonmcp.tasks: background tasks owned by a script generation.
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local call = require "moonmcp.call"
local calls = require "moonmcp.calls"
local context = require "moonmcp.context"
local log = require "moonmcp.log"

local type, error, select, unpack, setmetatable, getmetatable, pairs, ipairs, next, xpcall, traceback, tostring =
  type, error, select, unpack, setmetatable, getmetatable, pairs, ipairs, next, xpcall, debug.traceback, tostring
local spawn, current, cancel, park, wake = core.spawn, core.current, core.cancel, core.park, core.wake
local await = host.await

local _M = {}

local methods = call.ctx_methods
local CTX_MT = { __index = methods }

_M.TASK_CANCELLED = "task cancelled"

local children = {} -- call or task id -> { [task] = true } of its live children

local Task = {}
Task.__index = Task

local function is_cancel(err)
  return err == "cancelled" or (type(err) == "string" and err:match("^cancelled\n") ~= nil)
end

-- Keeps the error value itself (it is raised again in the joiner) and its traceback.
local function capture(err)
  return { err = err, trace = traceback(tostring(err), 2) }
end

local function pack(...)
  return { n = select("#", ...), ... }
end

-- Builds the child's context from the parent's (see the top of the file).
local function child_context(parent_ctx, exchange)
  local ctx = setmetatable({}, CTX_MT)
  local accessors
  if exchange and exchange.request then
    accessors = context.restore(context.snapshot(exchange.request), ctx)
  end
  if parent_ctx then
    for k, v in pairs(parent_ctx) do
      if ctx[k] == nil then
        ctx[k] = context.copy(v)
      end
    end
    if type(parent_ctx.log) == "table" and type(ctx.log) == "table" then
      for k, v in pairs(parent_ctx.log) do
        if ctx.log[k] == nil and type(v) ~= "table" then
          ctx.log[k] = v
        end
      end
    end
  end
  return ctx, accessors
end

local function finish(task, r)
  task.finished = true
  if r[1] then
    task.results = r
  else
    task.failure = r[2]
  end
  local siblings = children[task.parent]
  if siblings then
    siblings[task] = nil
    if next(siblings) == nil then
      children[task.parent] = nil
    end
  end
  local waiters = task.waiters
  task.waiters = {}
  for i = 1, #waiters do
    wake(waiters[i], true)
  end
end

local function child_body(task, parent_ctx, exchange, fn, n, args)
  local id = current()
  local ctx, accessors = child_context(parent_ctx, exchange)
  calls.enter(id, ctx, exchange) -- binds ctx to the call's exchange (the ctx methods work)
  local r = pack(xpcall(fn, capture, ctx, unpack(args, 1, n)))
  calls.leave(id) -- cancels this task's own children
  if accessors then
    local err = context.clear(accessors, ctx)
    if err then
      log.error("a context accessor failed to clear", { error = tostring(err) })
    end
  end
  if not r[1] and not is_cancel(r[2].err) and #task.waiters == 0 then
    log.debug("child task failed", { error = r[2].trace })
  end
  finish(task, r)
end

--- ctx:spawn(fn, ...) -> task: runs fn(child_ctx, ...) in a child coroutine of the call.
function methods.spawn(ctx, fn, ...)
  if type(fn) ~= "function" then
    error("ctx:spawn: fn must be a function", 2)
  end
  local parent = current()
  if not parent then
    error("ctx:spawn: must be called inside a call", 2)
  end
  local task = setmetatable({ parent = parent, finished = false, waiters = {} }, Task)
  task.id = spawn(child_body, task, ctx, call.exchange_of(ctx), fn, select("#", ...), { ... })
  local list = children[parent]
  if not list then
    list = {}
    children[parent] = list
  end
  list[task] = true
  return task
end

local function join(task)
  if getmetatable(task) ~= Task then
    error("ctx:wait: expects a task made by ctx:spawn", 3)
  end
  while not task.finished do
    task.waiters[#task.waiters + 1] = current()
    await(park())
  end
  if task.results then
    return unpack(task.results, 2, task.results.n)
  end
  local err = task.failure.err
  if is_cancel(err) then
    error(_M.TASK_CANCELLED, 0)
  end
  error(err, 0)
end

--- ctx:wait(task) -> the task's results (its error is raised again).
function methods.wait(_, task)
  return join(task)
end

--- ctx:all{ task_or_fn, ... } -> { first result of each }.
function methods.all(ctx, list)
  if type(list) ~= "table" then
    error("ctx:all: expects a list of tasks or functions", 2)
  end
  local tasks = {}
  for i, t in ipairs(list) do
    if type(t) == "function" then
      t = methods.spawn(ctx, t)
    elseif getmetatable(t) ~= Task then
      error("ctx:all: element " .. i .. " is not a task or a function", 2)
    end
    tasks[i] = t
  end
  local results = {}
  for i, t in ipairs(tasks) do
    local ok, r = xpcall(join, function(e)
      return e
    end, t)
    if not ok then
      for j = i + 1, #tasks do
        tasks[j]:cancel()
      end
      error(r, 0)
    end
    results[i] = r
  end
  return results
end

--- ctx:after(seconds, fn, ...) -> task: fn(child_ctx, ...) runs after seconds.
function methods.after(ctx, seconds, fn, ...)
  if type(seconds) ~= "number" or seconds < 0 or seconds ~= seconds or seconds == math.huge then
    error("ctx:after: seconds must be a finite number >= 0", 2)
  end
  if type(fn) ~= "function" then
    error("ctx:after: fn must be a function", 2)
  end
  return methods.spawn(ctx, function(c, ...)
    await(core.sleep(seconds))
    return fn(c, ...)
  end, ...)
end

function Task:wait()
  return join(self)
end

function Task:cancel()
  if not self.finished then
    return cancel(self.id)
  end
  return false
end

function Task:done()
  return self.finished
end

--- Number of live children of a call or task (for specs).
function _M.count(id)
  local n = 0
  for _ in pairs(children[id] or {}) do
    n = n + 1
  end
  return n
end

-- A call or task that leaves cancels its live children.
calls.on_leave(function(id)
  local list = children[id]
  if list then
    for task in pairs(list) do
      cancel(task.id)
    end
  end
end)

return _M

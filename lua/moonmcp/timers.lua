-- moonmcp.timers — one-shot timers that cost no coroutine: an indexed binary heap of
-- deadlines on the host's single alarm clock (core.alarm).
--
--   local t = timers.after(seconds, fn, arg)   fn(arg) runs once, from the loop, unless
--                                        cancelled; it must not yield (wake or cancel
--                                        calls instead). Passing arg to a shared fn spares
--                                        a closure per timer.
--   timers.cancel(t)                      idempotent; removes it at once (O(log n))
--
-- For waits that need a timeout beside a parked call (a question to the client, a call's
-- deadline): a sleeping coroutine per wait would cost ~1 KB each, an entry here ~100 bytes.
local core = require "moonmcp.core"
local log = require "moonmcp.log"

local floor, xpcall, traceback, tostring = math.floor, xpcall, debug.traceback, tostring
local clock, alarm = core.clock, core.alarm

local _M = {}

local heap, n = {}, 0 -- heap[i] = { at, fn, i, arg }
local armed_at = nil

local function swap(i, j)
  heap[i], heap[j] = heap[j], heap[i]
  heap[i][3], heap[j][3] = i, j
end

local function up(i)
  while i > 1 do
    local p = floor(i / 2)
    if heap[p][1] <= heap[i][1] then
      return
    end
    swap(i, p)
    i = p
  end
end

local function down(i)
  while true do
    local l, r, m = 2 * i, 2 * i + 1, i
    if l <= n and heap[l][1] < heap[m][1] then
      m = l
    end
    if r <= n and heap[r][1] < heap[m][1] then
      m = r
    end
    if m == i then
      return
    end
    swap(i, m)
    i = m
  end
end

local function remove(i)
  local e = heap[i]
  heap[i] = heap[n]
  heap[i][3] = i
  heap[n] = nil
  n = n - 1
  if i <= n then
    down(i)
    up(i)
  end
  e[3] = nil
end

local ring

local function rearm()
  if n == 0 then
    if armed_at then
      alarm(nil)
      armed_at = nil
    end
    return
  end
  local at = heap[1][1]
  if armed_at ~= at then
    armed_at = at
    alarm(at - clock(), ring)
  end
end

function ring()
  armed_at = nil
  local now = clock()
  while n > 0 and heap[1][1] <= now + 0.0005 do
    local e = heap[1]
    remove(1)
    local ok, err = xpcall(e[2], traceback, e[4])
    if not ok then
      log.error("a timer callback failed", { error = tostring(err) })
    end
  end
  rearm()
end

function _M.after(seconds, fn, arg)
  local e = { clock() + seconds, fn, n + 1, arg }
  n = n + 1
  heap[n] = e
  up(n)
  if heap[1] == e then
    rearm()
  end
  return e
end

function _M.cancel(e)
  local i = e[3]
  if i then
    local top = i == 1
    remove(i)
    if top then
      rearm()
    end
  end
end

--- Timers pending (for specs).
function _M.count()
  return n
end

return _M

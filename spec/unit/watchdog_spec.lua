-- Specs for moonmcp.watchdog (core/lwatchdog.c) and moonmcp.deadline.
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local moonmcp = require "moonmcp"
local watchdog = require "moonmcp.watchdog"
local deadline = require "moonmcp.deadline"

-- Runs fn in a fresh call; returns its pcall results once it ended.
local function in_call(fn, before)
  local result
  local id = core.spawn(function()
    result = { pcall(fn) }
  end)
  if before then
    before(id)
  end
  local t0 = core.clock()
  while not result and core.clock() - t0 < 5 do
    moonmcp.sleep(0.005)
  end
  return result
end

describe("watchdog", function()
  setup(function()
    watchdog.enable()
  end)

  teardown(function()
    watchdog.disable()
  end)

  it("stops a handler looping without yielding", function()
    local spin = watchdog.prepare(function()
      local n = 0
      while true do
        n = n + 1
      end
    end)
    local t0 = core.clock()
    local r = in_call(spin, function(id)
      watchdog.watch(id, 0.05)
    end)
    assert.is_false(r[1])
    assert.matches("cpu budget exceeded", r[2])
    assert.is_true(core.clock() - t0 < 1)
  end)

  it("raises again when the handler catches the error", function()
    local stubborn = watchdog.prepare(function()
      for _ = 1, 3 do
        pcall(function()
          while true do
          end
        end)
      end
      while true do
      end
    end)
    local r = in_call(stubborn, function(id)
      watchdog.watch(id, 0.02)
    end)
    assert.is_false(r[1])
    assert.matches("cpu budget exceeded", r[2])
  end)

  it("counts each resume separately", function()
    local polite = watchdog.prepare(function()
      for _ = 1, 10 do
        local t = core.clock()
        while core.clock() - t < 0.01 do
        end
        moonmcp.sleep(0)
      end
      return "done"
    end)
    local r = in_call(polite, function(id)
      watchdog.watch(id, 0.05)
    end)
    assert.same({ true, "done" }, r)
  end)

  it("leaves unwatched calls alone", function()
    local r = in_call(watchdog.prepare(function()
      local t = core.clock()
      while core.clock() - t < 0.1 do
      end
      return "ok"
    end))
    assert.same({ true, "ok" }, r)
  end)
end)

describe("deadline", function()
  it("cancels a call whose deadline passes", function()
    local id_of
    local r = in_call(function()
      moonmcp.sleep(5)
    end, function(id)
      id_of = id
      deadline.arm(id, 0.05)
    end)
    assert.same({ false, host.CANCELLED_ERROR }, r)
    -- expired() is meant to be read before the call leaves; the raw flag went with it
    assert.is_number(id_of)
  end)

  it("reports expired() while the call unwinds", function()
    local seen
    in_call(function()
      local id = core.current()
      deadline.arm(id, 0.02)
      local ok = pcall(moonmcp.sleep, 5)
      seen = { ok, deadline.expired(id) }
    end)
    assert.same({ false, 0.02 }, seen)
  end)

  it("does nothing once disarmed", function()
    local r = in_call(function()
      local disarm = deadline.arm(core.current(), 0.02)
      disarm()
      moonmcp.sleep(0.05)
      return "fine"
    end)
    assert.same({ true, "fine" }, r)
  end)

  it("keeps the default until it is changed", function()
    deadline.set_default(30)
    assert.equal(30, deadline.default())
    deadline.set_default(nil)
    assert.is_nil(deadline.default())
  end)
end)

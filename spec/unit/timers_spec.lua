-- moonmcp.timers: one-shot timers on the host's single alarm, without a coroutine each.
local timers = require "moonmcp.timers"
local moonmcp = require "moonmcp"

describe("timers", function()
  it("run in deadline order, not in the order they were set", function()
    local order = {}
    timers.after(0.06, function() order[#order + 1] = "c" end)
    timers.after(0.02, function() order[#order + 1] = "a" end)
    timers.after(0.04, function() order[#order + 1] = "b" end)
    moonmcp.sleep(0.1)
    assert.same({ "a", "b", "c" }, order)
  end)

  it("never run once cancelled, and leave nothing behind", function()
    local ran = false
    local base = timers.count()
    local t = timers.after(0.02, function() ran = true end)
    timers.cancel(t)
    timers.cancel(t)
    moonmcp.sleep(0.05)
    assert.is_false(ran)
    assert.same(base, timers.count())
  end)

  it("keep the earliest deadline when the first one is cancelled", function()
    local ran = {}
    local first = timers.after(0.01, function() ran[#ran + 1] = 1 end)
    timers.after(0.03, function() ran[#ran + 1] = 2 end)
    timers.cancel(first)
    moonmcp.sleep(0.06)
    assert.same({ 2 }, ran)
  end)

  it("hold thousands at little cost", function()
    local fired = 0
    local list = {}
    for i = 1, 5000 do
      list[i] = timers.after(0.01 + (i % 7) * 0.001, function() fired = fired + 1 end)
    end
    for i = 1, 5000, 2 do
      timers.cancel(list[i])
    end
    moonmcp.sleep(0.05)
    assert.same(2500, fired)
    assert.same(0, timers.count())
  end)
end)

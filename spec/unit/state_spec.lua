-- moonmcp.state (tables kept across reloads) and moonmcp.tasks (background work owned by
-- a generation).
local core = require "moonmcp.core"
local moonmcp = require "moonmcp"
local state = require "moonmcp.state"
local tasks = require "moonmcp.tasks"

describe("moonmcp.state", function()
  after_each(function()
    state.reset("spec.state")
  end)

  it("creates the table with init the first time", function()
    assert.same({ n = 1 }, moonmcp.state("spec.state", function()
      return { n = 1 }
    end))
  end)

  it("returns the same table later without running init again", function()
    local first = moonmcp.state("spec.state", function()
      return { n = 1 }
    end)
    local again = moonmcp.state("spec.state", function()
      error("init ran twice")
    end)
    assert.equal(first, again)
  end)

  it("defaults to an empty table", function()
    assert.same({}, moonmcp.state("spec.state"))
  end)

  it("refuses a name that is not a string", function()
    assert.has_error(function()
      moonmcp.state(42)
    end, "moonmcp.state: name must be a non-empty string")
  end)

  it("refuses an init that returns something else than a table", function()
    assert.has_error(function()
      moonmcp.state("spec.state", function()
        return 1
      end)
    end, 'moonmcp.state("spec.state"): init must return a table, got number')
  end)
end)

describe("moonmcp.tasks", function()
  it("owns nothing outside a generation", function()
    assert.is_nil((tasks.owner_now()))
    assert.is_false(moonmcp.on_unload(function() end))
  end)

  it("cancels the tasks of a dropped owner", function()
    local owner = tasks.new_owner()
    local prev = tasks.begin_load(owner)
    local id = moonmcp.spawn(function()
      moonmcp.sleep(10)
    end)
    tasks.end_load(prev)
    moonmcp.sleep(0.01)
    assert.equal(1, tasks.count(owner))
    tasks.drop(owner)
    moonmcp.sleep(0.01)
    assert.equal(0, tasks.count(owner))
    assert.is_false(core.cancel(id))
  end)

  it("gives the owner to the tasks a task spawns", function()
    local owner = tasks.new_owner()
    local prev = tasks.begin_load(owner)
    moonmcp.spawn(function()
      moonmcp.spawn(function()
        moonmcp.sleep(10)
      end)
    end)
    tasks.end_load(prev)
    moonmcp.sleep(0.01)
    assert.equal(1, tasks.count(owner)) -- the parent ended, the child is owned
    tasks.drop(owner)
  end)

  it("runs unload hooks newest first", function()
    local owner = tasks.new_owner()
    local order = {}
    local prev = tasks.begin_load(owner)
    moonmcp.on_unload(function()
      order[#order + 1] = 1
    end)
    moonmcp.on_unload(function()
      order[#order + 1] = 2
    end)
    tasks.end_load(prev)
    tasks.drop(owner)
    assert.same({ 2, 1 }, order)
  end)

  it("keeps a timer going after an error in one run", function()
    local owner = tasks.new_owner()
    local runs = 0
    local prev = tasks.begin_load(owner)
    moonmcp.every(0.005, function()
      runs = runs + 1
      error("one bad run")
    end)
    tasks.end_load(prev)
    local deadline = core.clock() + 2
    while runs < 3 and core.clock() < deadline do
      moonmcp.sleep(0.005)
    end
    tasks.drop(owner)
    assert.is_true(runs >= 3)
  end)

  it("refuses a timer period that is not a positive number", function()
    assert.has_error(function()
      moonmcp.every(0, function() end)
    end, "moonmcp.every: seconds must be a finite number > 0")
  end)
end)

-- Specs for moonmcp.ctx_tasks: child tasks of a call, driven through the real protocol
-- layer in-process (helpers.inproc) with the tools of spec/fixtures/ctx_tasks.
local probe = {}
package.loaded.ctx_tasks_probe = probe

local core = require "moonmcp.core"
local moonmcp = require "moonmcp"
local inproc = require "helpers.inproc"
require "moonmcp.ctx_tasks"

local function structured(res)
  assert(res and res.result, "no result")
  assert(not res.result.isError, res.result.content and res.result.content[1].text)
  return res.result.structuredContent
end

local function until_set(t, k, seconds)
  local deadline = core.clock() + (seconds or 2)
  while t[k] == nil and core.clock() < deadline do
    moonmcp.sleep(0.005)
  end
  return t[k]
end

describe("ctx tasks", function()
  setup(function()
    inproc.load { "spec/fixtures/ctx_tasks" }
  end)

  before_each(function()
    probe.orphans = {}
    probe.grandchild = nil
    probe.long_child = nil
  end)

  it("runs children concurrently and gathers their results in order", function()
    local out = structured(inproc.call(inproc.tool("fanout", {})))
    assert.same({ "a", "b", "c" }, out.results)
    assert.is_true(out.elapsed < 0.25)
  end)

  it("gives a child a copy of the context", function()
    local out = structured(inproc.call(inproc.tool("context_copy", {})))
    assert.equal(out.parent_request_id, out.request_id)
    assert.equal(1, out.custom)
    assert.equal("context_copy", out.tool)
    assert.is_false(out.same_table)
    assert.is_true(out.span_differs)
    assert.equal(1, out.parent_custom)
  end)

  it("raises a child's error in the joiner", function()
    local res = inproc.call(inproc.tool("child_error", {}))
    assert.is_true(res.result.isError)
    assert.equal("boom", res.result.content[1].text)
  end)

  it("raises 'task cancelled' when waiting on a cancelled child", function()
    local out = structured(inproc.call(inproc.tool("child_cancelled", {})))
    assert.same({ ok = false, err = "task cancelled" }, out)
  end)

  it("cancels children (and theirs) when the call ends", function()
    local res = inproc.call(inproc.tool("orphans", {}))
    assert.equal("left", res.result.content[1].text)
    for i = 1, 3 do
      assert.equal("cancelled", until_set(probe.orphans, i))
    end
    assert.equal("cancelled", until_set(probe, "grandchild"))
  end)

  it("cancels children when the call is cancelled", function()
    local pending = inproc.start(inproc.tool("long_parent", {}))
    moonmcp.sleep(0.02)
    core.cancel(pending.call_id)
    local response = pending:wait()
    assert.is_nil(response)
    assert.equal("cancelled", until_set(probe, "long_child"))
  end)

  it("leaves no coroutine behind", function()
    local base = core.live()
    for i = 1, 40 do
      inproc.call(inproc.tool("orphans", {}))
      if i % 10 == 0 then
        inproc.call(inproc.tool("fanout", {}))
      end
    end
    local deadline = core.clock() + 2
    while core.live() > base and core.clock() < deadline do
      moonmcp.sleep(0.01)
    end
    assert.equal(base, core.live())
  end)
end)

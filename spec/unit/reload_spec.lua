-- Hot reload (DESIGN §6): generations built whole and swapped atomically, errors keep the
-- current generation, calls in flight keep their code, list_changed per changed kind,
-- tasks of a dropped generation cancelled, watching with debounce and stat confirmation.
local core = require "moonmcp.core"
local moonmcp = require "moonmcp"
local reload = require "moonmcp.reload"
local registry = require "moonmcp.registry"
local notify = require "moonmcp.notify"
local loader = require "moonmcp.loader"
local tasks = require "moonmcp.tasks"
local inproc = require "helpers.inproc"
local scratch = require "helpers.scratch"
local leak = require "helpers.leak"

-- Polls fn until it returns a true value or seconds pass; returns that value.
local function eventually(fn, seconds)
  local deadline = core.clock() + (seconds or 3)
  repeat
    local v = fn()
    if v then
      return v
    end
    moonmcp.sleep(0.01)
  until core.clock() > deadline
  return fn()
end

local function answer(name)
  local res = inproc.call(inproc.tool(name, {}))
  local r = res.result
  return r and r.content[1] and r.content[1].text
end

describe("reload", function()
  local dir, saved

  before_each(function()
    saved = registry.current()
    dir = scratch.new()
  end)

  after_each(function()
    reload.stop()
    registry.set(saved)
    dir:destroy()
  end)

  local function start(files)
    for name, text in pairs(files) do
      dir:write(name, text)
    end
    reload.configure { dir.root }
    local gen = assert(loader.load { dir.root })
    registry.set(gen)
    return gen
  end

  describe("now()", function()
    it("does nothing when no file changed", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      local gen = registry.current()
      assert.same({ false, "unchanged" }, { reload.now("spec") })
      assert.equal(gen, registry.current())
    end)

    it("swaps in a new generation when a file changed", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      dir:write("a.lua", scratch.tool("a", "v2 longer"))
      assert.is_true((reload.now("spec")))
      assert.equal("v2 longer", answer("a"))
    end)

    it("reloads when forced even if nothing changed", function()
      local gen = start { ["a.lua"] = scratch.tool("a", "v1") }
      assert.is_true((reload.now("SIGHUP", true)))
      assert.not_equal(gen, registry.current())
    end)

    it("sees a file added to the tree", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      dir:write("b.lua", scratch.tool("b", "bee"))
      assert.is_true((reload.now("spec")))
      assert.equal("bee", answer("b"))
    end)

    it("sees a file removed from the tree", function()
      start { ["a.lua"] = scratch.tool("a", "v1"), ["b.lua"] = scratch.tool("b", "bee") }
      dir:remove("b.lua")
      assert.is_true((reload.now("spec")))
      assert.is_nil(registry.current().tools.b)
    end)

    it("keeps the current generation when a script has an error, and names file and line", function()
      local gen = start { ["a.lua"] = scratch.tool("a", "v1") }
      dir:write("a.lua", "return {\n tools = {\n  x = \n} }\n")
      local ok, errors = reload.now("spec")
      assert.is_nil(ok)
      assert.equal(gen, registry.current())
      assert.matches(dir:path("a.lua") .. ":4:", loader.format_errors(errors), 1, true)
      assert.equal("v1", answer("a"))
    end)

    it("keeps the current generation when one definition is invalid", function()
      local gen = start { ["a.lua"] = scratch.tool("a", "v1"), ["b.lua"] = scratch.tool("b", "bee") }
      dir:write("b.lua", "return { tools = { b = { handler = function() end, input = { type = 'string' } } } }")
      local ok, errors = reload.now("spec")
      assert.is_nil(ok)
      assert.equal(gen, registry.current())
      assert.equal(dir:path("b.lua"), errors[1].file)
      assert.equal(1, errors[1].line)
    end)

    it("lets a call in flight finish on the code it started with", function()
      start { ["slow.lua"] = scratch.tool("slow", "old code", { delay = 0.2 }) }
      local pending = inproc.start(inproc.tool("slow", {}))
      moonmcp.sleep(0.02) -- the call has started and sleeps
      dir:write("slow.lua", scratch.tool("slow", "new code"))
      assert.is_true((reload.now("spec")))
      assert.equal("new code", answer("slow"))
      local res = pending:wait()
      assert.equal("old code", res.result.content[1].text)
    end)

    it("counts reloads and failures", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      local before = reload.stats()
      dir:write("a.lua", "syntax error here")
      reload.now("spec")
      dir:write("a.lua", scratch.tool("a", "v3"))
      reload.now("spec")
      local after = reload.stats()
      assert.equal(before.failures + 1, after.failures)
      assert.equal(before.reloads + 1, after.reloads)
    end)
  end)

  describe("diff()", function()
    local function gen_of(source)
      dir:write("x.lua", source)
      return assert(loader.load { dir:path("x.lua") })
    end

    it("finds no change when only a handler's code changed", function()
      local a = gen_of(scratch.tool("t", "one"))
      local b = gen_of(scratch.tool("t", "two"))
      assert.same({}, reload.diff(a, b))
    end)

    it("finds tools changed when a description changed", function()
      local a = gen_of(scratch.tool("t", "one", { description = "first" }))
      local b = gen_of(scratch.tool("t", "one", { description = "second" }))
      assert.same({ "tools" }, reload.diff(a, b))
    end)

    it("finds tools changed when a tool was added", function()
      local a = gen_of(scratch.tool("t", "one"))
      local b = gen_of([[return { tools = { t = { description = "tool t", handler = function() end },
        u = { handler = function() end } } }]])
      assert.same({ "tools" }, reload.diff(a, b))
    end)

    it("finds tools changed when an input schema changed", function()
      local a = gen_of([[return { tools = { t = { input = { type = "object" }, handler = function() end } } }]])
      local b = gen_of([[return { tools = { t = { input = { type = "object", required = { "x" } },
        handler = function() end } } }]])
      assert.same({ "tools" }, reload.diff(a, b))
    end)

    it("reports prompts and resources (templates included) separately", function()
      local a = gen_of([[return { prompts = { p = { handler = function() end } } }]])
      local b = gen_of([[return { prompts = { p = { description = "new", handler = function() end } },
        templates = { ["file:///{name}"] = { read = function() end } } }]])
      assert.same({ "prompts", "resources" }, reload.diff(a, b))
    end)
  end)

  describe("list_changed", function()
    local sent, sink

    before_each(function()
      sent = {}
      sink = notify.add { era = "legacy", key = "spec", send = function(m)
        sent[#sent + 1] = m.method
      end }
    end)

    after_each(function()
      notify.remove(sink)
    end)

    it("is sent for the kinds that changed", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      dir:write("a.lua", scratch.tool("a", "v1", { description = "changed" }))
      reload.now("spec")
      assert.same({ "notifications/tools/list_changed" }, sent)
    end)

    it("reaches a modern listen stream that asked for it, and only for what it asked", function()
      local got = {}
      local modern = notify.add { era = "modern", subscription_id = "sub-1",
        filter = { promptsListChanged = true }, send = function(m)
          got[#got + 1] = m
        end }
      start { ["a.lua"] = scratch.tool("a", "v1") }
      dir:write("p.lua", "return { prompts = { p = { handler = function() return 'hi' end } } }")
      dir:write("a.lua", scratch.tool("a", "v1", { description = "changed" }))
      reload.now("spec")
      notify.remove(modern)
      assert.equal(1, #got)
      assert.equal("notifications/prompts/list_changed", got[1].method)
      assert.equal("sub-1", got[1].params._meta[notify.SUBSCRIPTION_KEY])
    end)

    it("is not sent when only code changed", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      dir:write("a.lua", scratch.tool("a", "v2 other code"))
      reload.now("spec")
      assert.same({}, sent)
    end)

    it("is not sent when the reload failed", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      dir:write("a.lua", "return 42")
      reload.now("spec")
      assert.same({}, sent)
    end)
  end)

  describe("tasks of a generation", function()
    local TICKER = [[
local moonmcp = require "moonmcp"
local s = moonmcp.state("spec.ticker", function() return { ticks = {}, unloaded = 0 } end)
local me = %q
moonmcp.every(0.01, function() s.ticks[me] = (s.ticks[me] or 0) + 1 end)
moonmcp.on_unload(function() s.unloaded = s.unloaded + 1 end)
return { tools = { t = { handler = function() return me end } } }
]]

    after_each(function()
      require("moonmcp.state").reset("spec.ticker")
    end)

    it("runs a timer a script started while it loaded", function()
      start { ["t.lua"] = TICKER:format("one") }
      local s = moonmcp.state("spec.ticker")
      assert.truthy(eventually(function()
        return (s.ticks.one or 0) >= 2
      end))
    end)

    it("cancels the timers of a replaced generation and runs its unload hooks", function()
      local gen = start { ["t.lua"] = TICKER:format("one") }
      local s = moonmcp.state("spec.ticker")
      dir:write("t.lua", TICKER:format("two"))
      assert.is_true((reload.now("spec")))
      assert.equal(1, s.unloaded)
      assert.truthy(eventually(function()
        return tasks.count(gen.owner) == 0
      end))
      local frozen = s.ticks.one
      moonmcp.sleep(0.05)
      assert.equal(frozen, s.ticks.one)
      assert.truthy(eventually(function()
        return (s.ticks.two or 0) >= 2
      end))
    end)

    it("cancels what a load that failed had started", function()
      start { ["t.lua"] = TICKER:format("one") }
      local s = moonmcp.state("spec.ticker")
      dir:write("t.lua", (TICKER:format("bad"):gsub("handler = function%(%) return me end", "handler = 42")))
      assert.is_nil((reload.now("spec")))
      assert.equal(1, s.unloaded)
      moonmcp.sleep(0.05)
      assert.is_nil(s.ticks.bad)
    end)

    it("keeps a task a running call spawned until that call ends", function()
      start { ["c.lua"] = [[
local moonmcp = require "moonmcp"
local s = moonmcp.state("spec.ticker", function() return { ticks = {}, unloaded = 0 } end)
return { tools = { c = { handler = function()
  local id = moonmcp.spawn(function()
    while true do moonmcp.sleep(0.01); s.ticks.child = (s.ticks.child or 0) + 1 end
  end)
  s.child = id
  moonmcp.sleep(0.15)
  return "done"
end } } }
]] }
      local s = moonmcp.state("spec.ticker")
      local pending = inproc.start(inproc.tool("c", {}))
      moonmcp.sleep(0.03)
      reload.now("spec", true)
      local at_swap = s.ticks.child or 0
      moonmcp.sleep(0.05)
      assert.is_true((s.ticks.child or 0) > at_swap) -- still running: its call is
      pending:wait()
      assert.truthy(eventually(function()
        return core.cancel(s.child) == false
      end))
    end)
  end)

  describe("state", function()
    it("keeps a moonmcp.state table across reloads", function()
      local source = [[
local moonmcp = require "moonmcp"
local s = moonmcp.state("spec.counter", function() return { n = 0 } end)
s.n = s.n + 1
return { tools = { n = { handler = function() return tostring(s.n) end } } }
]]
      start { ["n.lua"] = source }
      dir:write("n.lua", source .. "\n-- edited\n")
      reload.now("spec")
      assert.equal("2", answer("n"))
      require("moonmcp.state").reset("spec.counter")
    end)

    it("gives a script's own locals a fresh start on each reload", function()
      local source = [[
local n = 0
n = n + 1
return { tools = { n = { handler = function() return tostring(n) end } } }
]]
      start { ["n.lua"] = source }
      dir:write("n.lua", source .. "\n-- edited\n")
      reload.now("spec")
      assert.equal("1", answer("n"))
    end)
  end)

  describe("watching", function()
    it("reloads a file saved in place", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      reload.watch()
      dir:write("a.lua", scratch.tool("a", "v2 in place"))
      assert.truthy(eventually(function()
        return registry.current().tools.a and answer("a") == "v2 in place"
      end))
    end)

    it("reloads a file saved by rename", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      reload.watch()
      dir:save("a.lua", scratch.tool("a", "v2 renamed"))
      assert.truthy(eventually(function()
        return answer("a") == "v2 renamed"
      end))
    end)

    it("watches a single file through its directory", function()
      dir:write("a.lua", scratch.tool("a", "v1"))
      dir:write("other.lua", scratch.tool("other", "not served"))
      reload.configure { dir:path("a.lua") }
      registry.set(assert(loader.load { dir:path("a.lua") }))
      reload.watch()
      assert.same({ dir.root }, reload.watched())
      dir:save("a.lua", scratch.tool("a", "v2"))
      assert.truthy(eventually(function()
        return answer("a") == "v2"
      end))
      assert.is_nil(registry.current().tools.other)
    end)

    it("watches new subdirectories and loads their scripts", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      reload.watch()
      dir:mkdir("sub")
      assert.truthy(eventually(function()
        return #reload.watched() == 2
      end))
      dir:write("sub/b.lua", scratch.tool("b", "from sub"))
      assert.truthy(eventually(function()
        return registry.current().tools.b ~= nil
      end))
      assert.equal("from sub", answer("b"))
    end)

    it("debounces a burst of writes into one reload", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      reload.watch()
      local before = reload.stats().reloads
      for i = 1, 5 do
        dir:write("a.lua", scratch.tool("a", "burst " .. i))
      end
      assert.truthy(eventually(function()
        return answer("a") == "burst 5" and not reload.busy()
      end))
      assert.equal(before + 1, reload.stats().reloads)
    end)

    it("ignores hidden files", function()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      reload.watch()
      local before = reload.stats().checks
      dir:write(".a.lua.swp", "junk")
      moonmcp.sleep(reload.DEBOUNCE * 3)
      assert.equal(before, reload.stats().checks)
    end)

    it("closes every watch handle when stopped", function()
      local base = leak.baseline()
      start { ["a.lua"] = scratch.tool("a", "v1") }
      dir:mkdir("s1")
      dir:mkdir("s2")
      assert.equal(3, reload.watch())
      reload.stop()
      leak.check(base)
    end)
  end)
end)

describe("core.watch", function()
  it("refuses a directory that does not exist", function()
    local w = core.watch(function() end)
    local ok, err = w:add("/nonexistent/moonmcp-spec")
    assert.is_nil(ok)
    assert.matches("no such file", err)
    w:close()
  end)

  it("reports the name of a changed file", function()
    local dir = scratch.new()
    local seen = {}
    local w = core.watch(function(d, name)
      seen[#seen + 1] = { d, name }
    end)
    assert.is_true(w:add(dir.root))
    dir:write("x.lua", "-- x")
    assert.truthy(eventually(function()
      return #seen > 0
    end))
    assert.same({ dir.root, "x.lua" }, seen[1])
    w:close()
    dir:destroy()
  end)

  it("may be closed twice", function()
    local w = core.watch(function() end)
    w:close()
    assert.has_no.errors(function()
      w:close()
    end)
  end)

  it("stamps a file: size, mtime and inode", function()
    local kind, size, sec, nsec, ino = core.file_stamp("spec/fixtures/scripts/basics.lua")
    assert.equal("file", kind)
    assert.is_true(size > 0 and sec > 0 and nsec >= 0 and ino > 0)
    assert.is_nil((core.file_stamp("/nonexistent/x")))
  end)
end)

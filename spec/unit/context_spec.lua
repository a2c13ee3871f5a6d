-- The context snapshot (DESIGN §2): every call gets its own copy of the request context,
-- accessors restore and clear it on every exit path, and nothing leaks between calls.
local inproc = require "helpers.inproc"
local context = require "moonmcp.context"
local core = require "moonmcp.core"

describe("the call context", function()
  setup(function()
    inproc.load { "spec/fixtures/scripts" }
  end)

  it("is a copy: a handler's writes never reach the request context", function()
    local request = { request_id = "r1", principal = { name = "alice" }, log = {} }
    local res = inproc.call(inproc.tool("ctx_write", { mark = "x" }), request)
    assert.same("none", res.result.structuredContent.before)
    assert.same({ name = "alice" }, request.principal) -- the handler set "mallory" on its copy
    assert.is_nil(request.mark)
  end)

  it("keeps concurrent calls apart", function()
    local a = inproc.start(inproc.tool("ctx_write", { mark = "a" }, 1))
    local b = inproc.start(inproc.tool("ctx_write", { mark = "b" }, 2))
    local ra, rb = a:wait(), b:wait()
    assert.same({ "none", "a" }, { ra.result.structuredContent.before, ra.result.structuredContent.after })
    assert.same({ "none", "b" }, { rb.result.structuredContent.before, rb.result.structuredContent.after })
  end)

  it("starts fresh for a later call", function()
    inproc.call(inproc.tool("ctx_write", { mark = "first" }))
    local res = inproc.call(inproc.tool("ctx_write", { mark = "second" }))
    assert.same("none", res.result.structuredContent.before)
  end)

  it("gives each call its own span, child of the incoming traceparent", function()
    local request = { request_id = "r", log = {},
      headers = { traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } }
    local sc = inproc.call(inproc.tool("ctx_write", {}), request).result.structuredContent
    assert.same("b7ad6b7169203331", sc.parent)
    local trace_id, span = sc.trace:match("^00%-(%x+)%-(%x+)%-01$")
    assert.same("0af7651916cd43dd8448eb211c80319c", trace_id)
    assert.are_not.equal("b7ad6b7169203331", span)
  end)

  it("reads the traceparent from _meta when there is no header", function()
    local msg = inproc.tool("ctx_write", {})
    msg.params._meta = { traceparent = "00-11111111111111111111111111111111-2222222222222222-01" }
    local sc = inproc.call(msg, { request_id = "r", log = {}, meta = msg.params._meta }).result.structuredContent
    assert.same("2222222222222222", sc.parent)
  end)

  describe("a user accessor", function()
    local cleared
    before_each(function()
      cleared = {}
      context.register {
        key = "tenant",
        capture = function(req)
          return req.tenant
        end,
        restore = function(value, ctx)
          ctx.tenant = value
        end,
        clear = function(ctx)
          cleared[#cleared + 1] = ctx.tenant or "?"
          ctx.tenant = nil
        end,
      }
    end)
    after_each(function()
      context.unregister("tenant")
    end)

    it("propagates into the handler", function()
      local res = inproc.call(inproc.tool("whoami", {}), { request_id = "r", log = {}, tenant = "acme" })
      assert.same("acme", res.result.structuredContent.tenant)
    end)

    it("clears after a result", function()
      inproc.call(inproc.tool("whoami", {}), { request_id = "r", log = {}, tenant = "t1" })
      assert.same({ "t1" }, cleared)
    end)

    it("clears after an error", function()
      local res = inproc.call(inproc.tool("raise", {}), { request_id = "r", log = {}, tenant = "t2" })
      assert.is_true(res.result.isError)
      assert.same({ "t2" }, cleared)
    end)

    it("clears after a cancellation, and nothing is sent", function()
      local p = inproc.start(inproc.tool("sleep", { seconds = 5 }), { request_id = "r", log = {}, tenant = "t3" })
      require("moonmcp").sleep(0.01)
      core.cancel(p.call_id)
      local res = p:wait()
      assert.is_nil(res)
      assert.is_true(p.out.cancelled)
      assert.same({ "t3" }, cleared)
    end)

    it("clears in reverse order of registration", function()
      local order = {}
      context.register { key = "first", clear = function() order[#order + 1] = "first" end }
      context.register { key = "second", clear = function() order[#order + 1] = "second" end }
      inproc.call(inproc.tool("echo", {}))
      context.unregister("first")
      context.unregister("second")
      assert.same({ "second", "first" }, order)
    end)
  end)

  it("is emptied after the call", function()
    local res = inproc.call(inproc.tool("keep_ctx", {}))
    assert.is_true(res.result.structuredContent.ok)
    local kept = _G.__kept_ctx
    _G.__kept_ctx = nil
    assert.is_nil(next(kept))
  end)
end)

describe("host yields", function()
  setup(function()
    inproc.load { "spec/fixtures/scripts" }
  end)

  it("pass through a coroutine.wrap generator the handler made itself", function()
    local res = inproc.call(inproc.tool("sleep_in_generator", {}))
    assert.same({ 1, 2, 3 }, res.result.structuredContent.values)
  end)

  it("park only their own call", function()
    local slow = inproc.start(inproc.tool("sleep", { seconds = 0.3 }, 1))
    local t0 = core.clock()
    local fast = inproc.call { jsonrpc = "2.0", id = 2, method = "ping" }
    assert.same(2, fast.id)
    assert.is_true(core.clock() - t0 < 0.1)
    assert.same("slept 0.3", slow:wait().result.content[1].text)
  end)
end)

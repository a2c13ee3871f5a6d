-- Specs for moonmcp.ask in the legacy era and moonmcp.pending: server->client requests
-- sent on the call's own output, the call parked until server.respond routes the
-- client's answer back to it; timeouts, cancellation, unknown ids, capabilities.
local core = require("moonmcp.core")
local server = require("moonmcp.server")
local pending = require("moonmcp.pending")
local log = require("moonmcp.log")
local calls = require("helpers.calls")
require("moonmcp.ask")

local HEADERS = { ["mcp-protocol-version"] = "2025-11-25" }

local function tool_call(name, args)
  return calls.request("tools/call", { name = name, arguments = args or {} })
end

-- Starts tools/call name over "http" and waits until it has sent n messages.
local function start(gen, name, opts)
  opts = opts or {}
  local run = calls.start(tool_call(name, opts.arguments), { generation = gen, transport = opts.transport or "http",
    headers = opts.headers or HEADERS, session = opts.session })
  calls.wait(function()
    return #run.out.sent >= (opts.sent or 1) or run.out.done ~= nil
  end)
  return run
end

local function finish(run)
  calls.wait(function()
    return run.out.done ~= nil or run.out.cancelled
  end)
  return run.out.done
end

local function answer(run, i, result, info)
  local req = run.out.sent[i or #run.out.sent]
  return server.respond({ jsonrpc = "2.0", id = req.id, result = result }, info or { transport = "http" })
end

describe("legacy era: ctx:elicit / ctx:sample / ctx:roots / ctx:ask", function()
  local gen, baseline

  before_each(function()
    baseline = core.live()
    pending.set_timeout(300)
    log.set_level("critical") -- handler errors are logged with their traceback: keep them out of the output
    gen = calls.generation { tools = {
      elicit = function(_, ctx)
        local r = ctx:elicit { message = "Name?", schema = { type = "object", properties = {
          name = { type = "string", default = "J" } }, required = { "name" } } }
        return r.action .. ":" .. tostring(r.content and r.content.name)
      end,
      elicit_quick = function(_, ctx)
        return ctx:elicit { message = "Quick?", timeout = 0.05 }.action
      end,
      sample = function(_, ctx)
        local r = ctx:sample { messages = "hi", max_tokens = 7, system_prompt = "be brief", temperature = 0.5 }
        return r.content.text
      end,
      roots = function(_, ctx)
        local roots = ctx:roots()
        return ("%d:%s"):format(#roots, roots[1].uri)
      end,
      several = function(_, ctx)
        local r = ctx:ask { b = { roots = true }, a = { elicit = { message = "a?" } } }
        return r.a.action .. "+" .. #r.b
      end,
      catches = function(_, ctx)
        local ok, err = pcall(ctx.sample, ctx, { messages = "x", max_tokens = 1 })
        assert(not ok)
        return "caught: " .. tostring(err)
      end,
      url = function(_, ctx)
        return ctx:elicit_url { url = "https://example.com/connect", message = "Connect", id = "e-1" }.action
      end,
      bad_schema = function(_, ctx)
        ctx:elicit { message = "x", schema = { type = "object", properties = { o = { type = "object" } } } }
      end,
    } }
  end)

  after_each(function()
    log.set_level("info")
    pending.set_timeout(300)
    calls.wait(function() return core.live() == baseline and pending.count() == 0 end)
  end)

  it("sends elicitation/create on the call's output and resumes the call with the answer", function()
    local run = start(gen, "elicit")
    local req = run.out.sent[1]
    assert.equal("2.0", req.jsonrpc)
    assert.equal("elicitation/create", req.method)
    assert.matches("^mm%-%d+%-%x+$", req.id)
    assert.equal("Name?", req.params.message)
    assert.same({ type = "object", properties = { name = { type = "string", default = "J" } }, required = { "name" } },
      req.params.requestedSchema)
    assert.equal(1, pending.count())
    assert.is_true(answer(run, 1, { action = "accept", content = { name = "Ann" } }))
    assert.equal("accept:Ann", calls.text(finish(run)))
    assert.equal(0, pending.count())
  end)

  it("maps sample options to sampling/createMessage and returns the client's result", function()
    local run = start(gen, "sample")
    local p = run.out.sent[1].params
    assert.equal("sampling/createMessage", run.out.sent[1].method)
    assert.same({ { role = "user", content = { type = "text", text = "hi" } } }, p.messages)
    assert.equal(7, p.maxTokens)
    assert.equal("be brief", p.systemPrompt)
    assert.equal(0.5, p.temperature)
    answer(run, 1, { role = "assistant", content = { type = "text", text = "hello" }, model = "m" })
    assert.equal("hello", calls.text(finish(run)))
  end)

  it("returns the roots array of roots/list", function()
    local run = start(gen, "roots")
    assert.equal("roots/list", run.out.sent[1].method)
    answer(run, 1, { roots = { { uri = "file:///w", name = "w" } } })
    assert.equal("1:file:///w", calls.text(finish(run)))
  end)

  it("sends the questions of ctx:ask one after the other, in key order", function()
    local run = start(gen, "several")
    assert.equal("elicitation/create", run.out.sent[1].method) -- "a" before "b"
    answer(run, 1, { action = "decline" })
    calls.wait(function() return #run.out.sent >= 2 end)
    assert.equal("roots/list", run.out.sent[2].method)
    answer(run, 2, { roots = { { uri = "file:///1" }, { uri = "file:///2" } } })
    assert.equal("decline+2", calls.text(finish(run)))
  end)

  it("raises a JSON-RPC error answer in the handler", function()
    local run = start(gen, "catches")
    local req = run.out.sent[1]
    server.respond({ jsonrpc = "2.0", id = req.id, error = { code = -1, message = "User rejected sampling" } },
      { transport = "http" })
    local text = calls.text(finish(run))
    assert.matches("caught: sampling/createMessage failed on the client: User rejected sampling", text, 1, true)
  end)

  it("times out: the handler gets an error, the client a notifications/cancelled", function()
    pending.set_timeout(0.05)
    local run = start(gen, "elicit")
    local response = finish(run)
    assert.is_true(response.result.isError)
    assert.matches("did not answer within 0.05 s", calls.text(response))
    local note = run.out.sent[2]
    assert.equal("notifications/cancelled", note.method)
    assert.equal(run.out.sent[1].id, note.params.requestId)
    -- a late answer is ignored
    assert.is_false(answer(run, 1, { action = "accept" }))
  end)

  it("times out after a question's own timeout, before the default", function()
    local run = start(gen, "elicit_quick") -- the default is 300 s here
    local response = finish(run)
    assert.is_true(response.result.isError)
    assert.matches("did not answer within 0.05 s", calls.text(response))
  end)

  it("ends the call when it is cancelled while waiting", function()
    local run = start(gen, "elicit")
    assert.equal(1, pending.count())
    core.cancel(run.id)
    finish(run)
    assert.is_true(run.out.cancelled)
    assert.is_nil(run.out.done)
    assert.equal(0, pending.count())
    assert.is_false(answer(run, 1, { action = "accept" }))
  end)

  it("ignores answers for unknown ids, and from another transport or session", function()
    local run = start(gen, "elicit", { session = {}, headers = { ["mcp-session-id"] = "s1" } })
    assert.is_false(server.respond({ jsonrpc = "2.0", id = "mm-999999-00", result = {} }, { transport = "http" }))
    assert.is_false(server.respond({ jsonrpc = "2.0", id = 5, result = {} }, { transport = "http" }))
    assert.is_false(answer(run, 1, { action = "accept" }, { transport = "stdio" }))
    local other = { transport = "http", headers = { ["mcp-session-id"] = "s2" } }
    assert.is_false(answer(run, 1, { action = "accept" }, other))
    assert.equal(1, pending.count())
    assert.is_nil(run.out.done)
    local same = { transport = "http", headers = { ["mcp-session-id"] = "s1" } }
    assert.is_true(answer(run, 1, { action = "cancel" }, same))
    assert.equal("cancel:nil", calls.text(finish(run)))
  end)

  it("refuses, with an error the handler can catch, a capability the client did not declare", function()
    local session = { client = { capabilities = { elicitation = {} } } }
    local run = start(gen, "catches", { session = session })
    local text = calls.text(finish(run))
    assert.matches("did not declare the sampling capability", text)
    assert.equal(0, #run.out.sent)
  end)

  it("sends URL mode with an elicitationId, and only to 2025-11-25 clients", function()
    local run = start(gen, "url")
    local p = run.out.sent[1].params
    assert.same({ mode = "url", url = "https://example.com/connect", message = "Connect", elicitationId = "e-1" }, p)
    answer(run, 1, { action = "accept" })
    assert.equal("accept", calls.text(finish(run)))
    run = start(gen, "url", { headers = { ["mcp-protocol-version"] = "2025-06-18" } })
    local response = finish(run)
    assert.is_true(response.result.isError)
    assert.matches("2025%-11%-25 or later", calls.text(response))
  end)

  it("rejects a schema that is not flat", function()
    local response = finish(start(gen, "bad_schema"))
    assert.is_true(response.result.isError)
    assert.matches("property \"o\"", calls.text(response))
  end)

  it("uses the capabilities of the last initialize over stdio", function()
    local init = calls.request("initialize", { protocolVersion = "2025-11-25", capabilities = { roots = {} },
      clientInfo = { name = "c", version = "1" } })
    calls.rpc(init, { generation = gen, transport = "stdio" })
    local run = start(gen, "catches", { transport = "stdio" })
    assert.matches("did not declare the sampling capability", calls.text(finish(run)))
    -- restore a capable stdio client for whoever runs next
    init = calls.request("initialize", { protocolVersion = "2025-11-25",
      capabilities = { roots = {}, sampling = {}, elicitation = {} } })
    calls.rpc(init, { generation = gen, transport = "stdio" })
  end)
end)

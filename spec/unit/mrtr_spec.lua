-- Specs for moonmcp.mrtr and the modern era of moonmcp.ask: multi round-trip requests
-- (2026-07-28). Calls run through the real call path (helpers.calls); rounds are driven
-- by feeding each input_required result's requestState back with inputResponses.
local core = require("moonmcp.core")
local json = require("moonmcp.json")
local mrtr = require("moonmcp.mrtr")
local calls = require("helpers.calls")
require("moonmcp.ask")

local KEY = ("s"):rep(32)

local function elicit_answer(content)
  return { action = "accept", content = content }
end

-- Runs one round of tools/call name; returns the response message and the run.
local function round_run(gen, name, opts)
  opts = opts or {}
  local params = { name = name, arguments = opts.arguments or {} }
  params.inputResponses = opts.responses
  params.requestState = opts.state
  local msg = calls.modern("tools/call", params, opts.caps)
  return calls.rpc(msg, { generation = gen, principal = opts.principal })
end

-- The response message of one round.
local function round(gen, name, opts)
  return (round_run(gen, name, opts))
end

local function irr(response)
  local r = assert(response and response.result, "expected a result")
  assert.equal("input_required", r.resultType)
  assert.is_string(r.requestState)
  return r
end

local function rpc_error(response, code)
  assert.is_table(response.error, "expected an error")
  assert.equal(code or -32602, response.error.code)
  return response.error
end

describe("moonmcp.mrtr canonical JSON and digests", function()
  it("sorts object keys at every level and keeps arrays in order", function()
    assert.equal('{"a":1,"b":{"c":[3,1,2],"d":"x"}}', mrtr.canonical({ b = { d = "x", c = { 3, 1, 2 } }, a = 1 }))
    assert.equal(mrtr.digest({ x = 1, y = { 1, 2 } }), mrtr.digest({ y = { 1, 2 }, x = 1 }))
    assert.are_not.equal(mrtr.digest({ 1, 2 }), mrtr.digest({ 2, 1 }))
  end)

  it("keeps [] and {} apart", function()
    assert.equal("[]", mrtr.canonical(json.array()))
    assert.equal("{}", mrtr.canonical({}))
  end)
end)

describe("moonmcp.mrtr keys", function()
  it("accepts 32 bytes or 64 hex digits and refuses anything else", function()
    mrtr.set_key(("ab"):rep(32))
    local sealed = mrtr.seal({ v = 1 })
    mrtr.set_key(("\171"):rep(32)) -- the same key, as raw bytes
    assert.same({ v = 1 }, mrtr.open(sealed))
    assert.has_error(function() mrtr.set_key("short") end)
    assert.has_error(function() mrtr.set_key(42) end)
  end)

  it("makes an ephemeral key when none is set", function()
    mrtr.set_key(nil)
    local sealed = mrtr.seal({ v = 1 })
    assert.is_true(mrtr.is_ephemeral())
    assert.same({ v = 1 }, mrtr.open(sealed))
    mrtr.set_key(KEY)
    assert.is_false(mrtr.is_ephemeral())
  end)
end)

describe("modern era rounds", function()
  local now
  local runs, effects, question_text
  local gen

  before_each(function()
    mrtr.set_key(KEY)
    now = 1000000
    mrtr.set_clock(function() return now end)
    runs, effects, question_text = 0, 0, "What is your name?"
    gen = calls.generation { tools = {
      three = function(_, ctx)
        runs = runs + 1
        local a = ctx:elicit { key = "a", message = "first", schema = { type = "object",
          properties = { v = { type = "string" } } } }
        local b = ctx:sample { key = "b", messages = "second?", max_tokens = 10 }
        local c = ctx:roots { key = "c" }
        effects = effects + 1 -- after the last question: runs once
        return ("%s/%s/%d"):format(a.content.v, b.content.text, #c)
      end,
      both = function(_, ctx)
        runs = runs + 1
        local r = ctx:ask {
          name = { elicit = { message = "name?", schema = { type = "object", properties = {
            name = { type = "string" } }, required = { "name" } } } },
          story = { sample = { messages = { { role = "user", content = "tell" } }, max_tokens = 5 } },
        }
        return r.name.content.name .. ":" .. r.story.content.text
      end,
      ask_name = function(_, ctx)
        local r = ctx:elicit { key = "user_name", message = question_text, schema = { type = "object",
          properties = { name = { type = "string" } } } }
        return "Hello, " .. tostring(r.content and r.content.name)
      end,
      other_name = function(_, ctx)
        local r = ctx:elicit { key = "user_name", message = question_text }
        return "Other " .. tostring(r.action)
      end,
      swallow = function(_, ctx)
        pcall(ctx.elicit, ctx, { key = "k", message = "m" })
        return "swallowed"
      end,
      sample_only = function(_, ctx)
        ctx:sample { messages = "hi", max_tokens = 1 }
        return "done"
      end,
    } }
  end)

  after_each(function()
    mrtr.set_clock(nil)
  end)

  it("asks three questions in sequence, one round each, replaying earlier answers", function()
    local r1 = irr(round(gen, "three"))
    local keys = {}
    for key in pairs(r1.inputRequests) do
      keys[#keys + 1] = key
    end
    assert.same({ "a" }, keys)
    assert.equal("elicitation/create", r1.inputRequests.a.method)
    assert.equal("first", r1.inputRequests.a.params.message)

    local r2 = irr(round(gen, "three", { state = r1.requestState,
      responses = { a = elicit_answer({ v = "A" }) } }))
    assert.equal("sampling/createMessage", r2.inputRequests.b.method)
    assert.same({ { role = "user", content = { type = "text", text = "second?" } } },
      r2.inputRequests.b.params.messages)
    assert.equal(10, r2.inputRequests.b.params.maxTokens)
    assert.is_nil(r2.inputRequests.a)
    assert.are_not.equal(r1.requestState, r2.requestState)

    -- only the newest answer is sent: "a" comes from the ledger
    local r3 = irr(round(gen, "three", { state = r2.requestState,
      responses = { b = { role = "assistant", content = { type = "text", text = "B" }, model = "m" } } }))
    assert.same({ method = "roots/list" }, r3.inputRequests.c)

    local done = round(gen, "three", { state = r3.requestState,
      responses = { c = { roots = { { uri = "file:///x", name = "x" }, { uri = "file:///y" } } } } })
    assert.equal("complete", done.result.resultType)
    assert.equal("A/B/2", calls.text(done))
    assert.equal(4, runs)
    assert.equal(1, effects)
  end)

  it("asks two questions at once with ctx:ask, in one input_required result", function()
    local r1 = irr(round(gen, "both"))
    assert.equal("elicitation/create", r1.inputRequests.name.method)
    assert.same({ "name" }, r1.inputRequests.name.params.requestedSchema.required)
    assert.equal("sampling/createMessage", r1.inputRequests.story.method)
    local done = round(gen, "both", { state = r1.requestState, responses = {
      name = elicit_answer({ name = "Ann" }),
      story = { role = "assistant", content = { type = "text", text = "once" }, model = "m" } } })
    assert.equal("Ann:once", calls.text(done))
  end)

  it("asks again for an answer that is missing, and ignores unknown keys", function()
    local r1 = irr(round(gen, "ask_name", { responses = { wrong_key = elicit_answer({ name = "x" }) } }))
    assert.is_table(r1.inputRequests.user_name)
    local r2 = irr(round(gen, "ask_name", { state = r1.requestState, responses = {} }))
    assert.is_table(r2.inputRequests.user_name)
  end)

  it("accepts inputResponses without requestState and ignores extra keys", function()
    local done = round(gen, "ask_name", { responses = { user_name = elicit_answer({ name = "Alice" }),
      unknown_extra_key = elicit_answer({ foo = "bar" }), another = 12 } })
    assert.equal("Hello, Alice", calls.text(done))
  end)

  it("refuses a non-object answer and a null inputResponses with -32602", function()
    local e = rpc_error(round(gen, "ask_name", { responses = { user_name = 12345 } }))
    assert.matches("inputResponses.user_name", e.message)
    e = rpc_error(round(gen, "ask_name", { responses = json.null }))
    assert.equal("invalid_input_responses", e.data.reason)
    e = rpc_error(round(gen, "ask_name", { responses = { user_name = { action = "maybe" } } }))
    assert.equal("invalid_input_response", e.data.reason)
  end)

  it("refuses a requestState with one byte changed", function()
    local r1 = irr(round(gen, "ask_name"))
    local s = r1.requestState
    local i = #s - 10
    local c = s:sub(i, i) == "A" and "B" or "A"
    local tampered = s:sub(1, i - 1) .. c .. s:sub(i + 1)
    local e = rpc_error(round(gen, "ask_name", { state = tampered,
      responses = { user_name = elicit_answer({ name = "x" }) } }))
    assert.equal("tampered", e.data.reason)
    e = rpc_error(round(gen, "ask_name", { state = s .. "-TAMPERED",
      responses = { user_name = elicit_answer({ name = "x" }) } }))
    assert.equal("tampered", e.data.reason)
    e = rpc_error(round(gen, "ask_name", { state = 42 }))
    assert.equal("malformed", e.data.reason)
  end)

  it("refuses a requestState sealed with another key", function()
    local r1 = irr(round(gen, "ask_name"))
    mrtr.set_key(("t"):rep(32))
    local e = rpc_error(round(gen, "ask_name", { state = r1.requestState,
      responses = { user_name = elicit_answer({ name = "x" }) } }))
    assert.equal("tampered", e.data.reason)
  end)

  it("refuses an expired requestState, and accepts it until then", function()
    mrtr.set_ttl(60)
    local r1 = irr(round(gen, "ask_name"))
    now = now + 59
    local ok = round(gen, "ask_name", { state = r1.requestState,
      responses = { user_name = elicit_answer({ name = "x" }) } })
    assert.equal("Hello, x", calls.text(ok))
    now = now + 2
    local e = rpc_error(round(gen, "ask_name", { state = r1.requestState,
      responses = { user_name = elicit_answer({ name = "x" }) } }))
    assert.equal("expired", e.data.reason)
    mrtr.set_ttl(600)
  end)

  it("refuses a requestState issued for another tool", function()
    local r1 = irr(round(gen, "ask_name"))
    local e = rpc_error(round(gen, "other_name", { state = r1.requestState,
      responses = { user_name = elicit_answer({ name = "x" }) } }))
    assert.equal("other_request", e.data.reason)
    assert.matches("ask_name", e.message)
  end)

  it("refuses a requestState issued for other arguments", function()
    local r1 = irr(round(gen, "ask_name", { arguments = { n = 1 } }))
    local e = rpc_error(round(gen, "ask_name", { arguments = { n = 2 }, state = r1.requestState }))
    assert.equal("other_arguments", e.data.reason)
  end)

  it("refuses a requestState issued to another principal", function()
    local r1 = irr(round(gen, "ask_name", { principal = { sub = "alice", roles = { "a", "b" } } }))
    local same = round(gen, "ask_name", { principal = { roles = { "a", "b" }, sub = "alice" }, state = r1.requestState,
      responses = { user_name = elicit_answer({ name = "x" }) } })
    assert.equal("Hello, x", calls.text(same))
    local e = rpc_error(round(gen, "ask_name", { principal = { sub = "mallory" }, state = r1.requestState }))
    assert.equal("other_principal", e.data.reason)
    e = rpc_error(round(gen, "ask_name", { state = r1.requestState }))
    assert.equal("other_principal", e.data.reason)
  end)

  it("refuses an answer to a question that changed between rounds", function()
    local r1 = irr(round(gen, "ask_name"))
    question_text = "What is your quest?"
    local e = rpc_error(round(gen, "ask_name", { state = r1.requestState,
      responses = { user_name = elicit_answer({ name = "x" }) } }))
    assert.equal("question_changed", e.data.reason)
  end)

  it("refuses to replay a ledger answer to a question that changed", function()
    local r1 = irr(round(gen, "three"))
    local r2 = irr(round(gen, "three", { state = r1.requestState, responses = { a = elicit_answer({ v = "A" }) } }))
    local changed = calls.generation { tools = { three = function(_, ctx)
      ctx:elicit { key = "a", message = "FIRST, CHANGED" }
      return "no"
    end } }
    local e = rpc_error(round(changed, "three", { state = r2.requestState }))
    assert.equal("question_changed", e.data.reason)
  end)

  it("ends with -32021 and requiredCapabilities when the client lacks the capability", function()
    local response, run = round_run(gen, "ask_name", { caps = {} })
    local e = rpc_error(response, -32021)
    assert.same({ elicitation = {} }, e.data.requiredCapabilities)
    assert.equal(400, run.exchange.http_status)
    e = rpc_error(round(gen, "both", { caps = { roots = {} } }), -32021)
    assert.same({ elicitation = {}, sampling = {} }, e.data.requiredCapabilities)
    e = rpc_error(round(gen, "ask_name", { caps = { elicitation = { url = {} } } }), -32021)
    assert.same({ elicitation = {} }, e.data.requiredCapabilities)
    assert.equal("input_required", round(gen, "sample_only", { caps = { sampling = {} } }).result.resultType)
  end)

  it("still answers input_required when the handler swallows the stop", function()
    local r = irr(round(gen, "swallow"))
    assert.equal("m", r.inputRequests.k.params.message)
  end)

  it("sends progress of a round before its input_required result", function()
    local g = calls.generation { tools = { p = function(_, ctx)
      ctx:progress(1, 2)
      ctx:elicit { key = "k", message = "m" }
      return "ok"
    end } }
    local msg = calls.modern("tools/call", { name = "p", arguments = {} })
    msg.params._meta.progressToken = "t1"
    local response, run = calls.rpc(msg, { generation = g })
    irr(response)
    assert.equal(1, #run.out.sent)
    assert.equal("notifications/progress", run.out.sent[1].method)
  end)

  it("leaves no call behind", function()
    local before = core.live()
    irr(round(gen, "ask_name"))
    calls.wait(function() return core.live() == before end)
  end)
end)

describe("modern era rounds of prompts/get and resources/read", function()
  local loader = require("moonmcp.loader")
  local scratch = require("helpers.scratch")
  local dir, gen

  setup(function()
    mrtr.set_key(KEY)
    dir = scratch.new()
    dir:write("asks.lua", [[
      return {
        prompts = {
          topic = { description = "asks for a topic", handler = function(_, ctx)
            local r = ctx:elicit { key = "topic", message = "Topic?", schema = { type = "object",
              properties = { topic = { type = "string" } } } }
            return { messages = { { role = "user", content = { type = "text", text = "About " .. r.content.topic } } } }
          end },
        },
        resources = {
          ["test://asks"] = { name = "asks", mimeType = "text/plain", read = function(uri, ctx)
            local roots = ctx:roots { key = "roots" }
            return uri .. " with " .. #roots .. " root(s)"
          end },
        },
      }
    ]])
    gen = assert(loader.load({ dir:path() }))
  end)

  teardown(function()
    dir:destroy()
  end)

  it("asks in prompts/get and completes on retry", function()
    local r1 = irr(calls.rpc(calls.modern("prompts/get", { name = "topic", arguments = {} }), { generation = gen }))
    assert.equal("Topic?", r1.inputRequests.topic.params.message)
    local done = calls.rpc(calls.modern("prompts/get", { name = "topic", arguments = {}, requestState = r1.requestState,
      inputResponses = { topic = elicit_answer({ topic = "Lua" }) } }), { generation = gen })
    assert.equal("complete", done.result.resultType)
    assert.equal("About Lua", done.result.messages[1].content.text)
  end)

  it("asks in resources/read, binds the state to the uri, and completes on retry", function()
    local r1 = irr(calls.rpc(calls.modern("resources/read", { uri = "test://asks" }), { generation = gen }))
    assert.same({ method = "roots/list" }, r1.inputRequests.roots)
    local done = calls.rpc(calls.modern("resources/read", { uri = "test://asks", requestState = r1.requestState,
      inputResponses = { roots = { roots = { { uri = "file:///r" } } } } }), { generation = gen })
    assert.equal("test://asks with 1 root(s)", done.result.contents[1].text)
    local e = calls.rpc(calls.modern("prompts/get", { name = "topic", arguments = {}, requestState = r1.requestState }),
      { generation = gen }).error
    assert.equal(-32602, e.code)
    assert.equal("other_request", e.data.reason)
  end)

  it("never answers input_required to methods that cannot ask", function()
    local r = calls.rpc(calls.modern("prompts/list", {}), { generation = gen })
    assert.equal("complete", r.result.resultType)
  end)
end)

-- Real clients answering a handler's questions (ctx:elicit / ctx:sample / ctx:roots /
-- ctx:ask, lua/moonmcp/ask.lua) against the real binary, over Streamable HTTP and stdio:
--  * legacy era: the official 1.x TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2,
--    2025-11-25) with elicitation, sampling and roots handlers. The server sends each
--    question as a JSON-RPC request (server-generated id) on the call's own stream (HTTP:
--    the call's SSE response; stdio: a line); the client's handler answers it (HTTP: a
--    separate POST; stdio: a line); the call's result reflects the answer.
--  * modern era: @modelcontextprotocol/client 2.4.0 pinned to 2026-07-28, whose MRTR driver
--    fulfils input_required results with the same registered handlers and retries the call
--    (new id, inputResponses + byte-exact requestState) until a complete result.
-- Every message moonmcp sent validates against its era's JSON Schema.
--
-- One driver run per client and transport (spec/peers/drive.mjs, in setup); each `it`
-- checks one behaviour from its report. Tools: scripts/conformance (elicitation.lua,
-- mrtr.lua) and spec/fixtures/sdk/ask.lua (ask_roots).
local server = require "helpers.server"
local peers = require "helpers.peers"
local wire = require "helpers.wire_schema"
local json = require "moonmcp.json"

local PATHS = { "scripts/conformance", "spec/fixtures/sdk" }
local LEGACY, MODERN = "2025-11-25", "2026-07-28"

local DEFAULT_CONTENT = { username = "ada", email = "ada@example.com" }
local SAMPLED = { role = "assistant", content = { type = "text", text = "Paris, of course." },
  model = "interop-model", stopReason = "endTurn" }
local ROOTS = { { uri = "file:///work/alpha", name = "alpha" }, { uri = "file:///work/beta", name = "beta" } }

-- The client-side handlers (drive.mjs plan.handlers): elicitation answers by message.
local HANDLERS = {
  elicitation = { action = "accept", content = DEFAULT_CONTENT, answers = {
    { match = "favorite color", content = { color = "teal" } },
    { match = "What is your name?", content = { name = "Ada" } },
    { match = "context should the prompt use", content = { context = "the moon" } },
  } },
  sampling = SAMPLED,
  roots = ROOTS,
}

local function ok(step)
  assert(step.ok, ("step %q failed: %s"):format(step.label, json.encode(step.error)))
  return step.result
end

local function text_of(result)
  return result.content[1].text
end

local function keys_of(t)
  local list = {}
  for k in pairs(t) do
    list[#list + 1] = k
  end
  table.sort(list)
  return list
end

local function driver_ok(report)
  assert(report.ok, "driver failed: " .. tostring(report.fatal) .. " " .. json.encode(report.connectError or {})
    .. " " .. tostring(report.driver_stderr))
end

-- ---------------------------------------------------------------------------------------
-- Legacy era: sdk1

local LEGACY_STEPS = {
  { label = "elicit", op = "callTool", name = "test_elicitation", args = { message = "Who are you?" } },
  { label = "sample", op = "callTool", name = "test_sampling", args = { prompt = "Capital of France?" } },
  { label = "roots", op = "callTool", name = "ask_roots" },
  { label = "several", op = "callTool", name = "test_input_required_result_multiple_inputs" },
  { label = "prompt", op = "getPrompt", name = "test_input_required_result_prompt" },
}

-- The server->client requests of a step, each with the client's answer and the handler
-- call that produced it: { request, request_rec, answer, answer_rec, handled }.
local function legacy_asks(report, step)
  local handled = {}
  for _, h in ipairs(peers.handled_during(report, step)) do
    handled[h.key] = h
  end
  local list = {}
  for _, r in ipairs(peers.requests_during(report, step)) do
    local answer, answer_rec = peers.answer_to(report, r.msg.id)
    list[#list + 1] = { request = r.msg, request_rec = r, answer = answer, answer_rec = answer_rec,
      handled = handled[r.msg.id] }
  end
  return list
end

-- Checks the legacy wire shape of one asking step: the server sent `methods` (in order) as
-- requests with server-generated ids on the call's stream, before the call's result; each
-- was answered by the client's handler, with that id.
local function assert_legacy_asks(report, step, http, methods)
  local asks = legacy_asks(report, step)
  local seen = {}
  for i, a in ipairs(asks) do
    seen[i] = a.request.method
  end
  assert.same(methods, seen)
  local response, response_rec = peers.response_to(report, step.ids[1])
  assert.is_table(response, "no response to the call")
  local ids = {}
  for i, a in ipairs(asks) do
    local id = a.request.id
    assert.same("2.0", a.request.jsonrpc)
    assert.is_not_nil(id)
    assert.not_equal(step.ids[1], id) -- the server's own id, not the client's
    assert.is_nil(ids[json.encode(id)], "server request ids repeat")
    ids[json.encode(id)] = true
    -- the client answered it (its handler ran for this very request), with a result
    assert.is_table(a.answer, "the client never answered " .. json.encode(a.request))
    assert.is_table(a.answer.result)
    assert.is_nil(a.answer.error)
    assert.is_table(a.handled, "no handler call for " .. json.encode(id))
    assert.same(a.handled.answer, a.answer.result)
    -- on the call's stream, before its result; the next question only after this answer
    assert.is_true(a.request_rec.t <= response_rec.t)
    if asks[i + 1] then
      assert.is_true(a.answer_rec.t <= asks[i + 1].request_rec.t)
    end
    if http then
      assert.same("sse", a.request_rec.via)
      assert.same(response_rec.exchange, a.request_rec.exchange)
      assert.not_equal(response_rec.exchange, a.answer_rec.exchange) -- a separate POST ...
      for _, h in ipairs(report.http) do
        if h.exchange == a.answer_rec.exchange then
          assert.same("POST", h.method)
          assert.same(202, h.status) -- ... accepted with no body
        end
      end
    else
      assert.same("stdio", a.request_rec.via)
      assert.same("stdio", a.answer_rec.via)
    end
  end
  return asks
end

local function legacy(name, http, start)
  describe("1.x SDK client with elicitation, sampling and roots handlers over " .. name, function()
    local report

    setup(function()
      report = start()
    end)

    it("connects with initialize, declaring elicitation, sampling and roots", function()
      driver_ok(report)
      assert.same(LEGACY, report.connect.protocolVersion)
      local init = report.sent[1].msg
      assert.same("initialize", init.method)
      assert.same({ elicitation = { form = {} }, sampling = {}, roots = {} }, init.params.capabilities)
    end)

    it("elicits: the tool's result carries the handler's accepted content", function()
      local text = text_of(ok(peers.step(report, "elicit")))
      local content = text:match("^User response: action=accept, content=(.*)$")
      assert(content, text)
      assert.same(DEFAULT_CONTENT, json.decode(content))
    end)

    it("elicits with an elicitation/create request on the call's stream, answered by the client", function()
      local a = assert_legacy_asks(report, peers.step(report, "elicit"), http, { "elicitation/create" })[1]
      assert.same("Who are you?", a.request.params.message)
      assert.same({ "username", "email" }, a.request.params.requestedSchema.required)
      assert.same({ action = "accept", content = DEFAULT_CONTENT }, a.answer.result)
    end)

    it("samples: the tool's result carries the handler's CreateMessageResult", function()
      assert.same("LLM response: Paris, of course.", text_of(ok(peers.step(report, "sample"))))
    end)

    it("samples with a sampling/createMessage request on the call's stream, answered by the client", function()
      local a = assert_legacy_asks(report, peers.step(report, "sample"), http, { "sampling/createMessage" })[1]
      assert.same(100, a.request.params.maxTokens)
      assert.same({ { role = "user", content = { type = "text", text = "Capital of France?" } } },
        a.request.params.messages)
      assert.same(SAMPLED, a.answer.result)
    end)

    it("lists roots: the tool's result carries the handler's roots", function()
      assert.same({ count = 2, uris = "file:///work/alpha file:///work/beta" },
        ok(peers.step(report, "roots")).structuredContent)
    end)

    it("lists roots with a roots/list request on the call's stream, answered by the client", function()
      local a = assert_legacy_asks(report, peers.step(report, "roots"), http, { "roots/list" })[1]
      assert.same({ roots = ROOTS }, a.answer.result)
    end)

    it("asks several questions (ctx:ask) one after the other, in key order", function()
      local step = peers.step(report, "several")
      assert.same("Name: Ada; Greeting: Paris, of course.; Roots: 2", text_of(ok(step)))
      -- keys client_roots < greeting < user_name
      assert_legacy_asks(report, step, http, { "roots/list", "sampling/createMessage", "elicitation/create" })
    end)

    it("asks from a prompt handler (prompts/get) too", function()
      local step = peers.step(report, "prompt")
      assert.same("Prompt with context: the moon", ok(step).messages[1].content.text)
      local a = assert_legacy_asks(report, step, http, { "elicitation/create" })[1]
      assert.same("What context should the prompt use?", a.request.params.message)
    end)

    it("sends only messages valid against the 2025-11-25 schema, its requests included", function()
      local problems, checked = wire.check(report, LEGACY)
      assert.same({}, problems)
      local requests = 0
      for _, r in ipairs(report.received) do
        if r.msg and r.msg.method and r.msg.id ~= nil then
          requests = requests + 1
        end
      end
      assert.same(7, requests)
      assert.is_true(checked >= #LEGACY_STEPS + requests + 1)
    end)
  end)
end

legacy("Streamable HTTP", true, function()
  local s = server.http(PATHS)
  local report = peers.drive { client = "sdk1", transport = { type = "http", url = s.url },
    handlers = HANDLERS, steps = LEGACY_STEPS }
  s:stop()
  return report
end)

legacy("stdio", false, function()
  return peers.drive { client = "sdk1", transport = peers.stdio_transport(PATHS), handlers = HANDLERS,
    steps = LEGACY_STEPS }
end)

-- ---------------------------------------------------------------------------------------
-- Modern era: client2 pinned to 2026-07-28 (MRTR)

local MODERN_STEPS = {
  { label = "one round", op = "callTool", name = "test_input_required_result_elicitation" },
  { label = "multi round", op = "callTool", name = "test_input_required_result_multi_round" },
  { label = "several", op = "callTool", name = "test_input_required_result_multiple_inputs" },
  { label = "prompt", op = "getPrompt", name = "test_input_required_result_prompt" },
  { label = "sample", op = "callTool", name = "test_input_required_result_sampling" },
  { label = "roots", op = "callTool", name = "ask_roots" },
}

local function raw_result(round)
  local r = round.response
  assert.is_table(r, "no response to request " .. json.encode(round.id))
  assert.is_table(r.result, "not a result: " .. json.encode(r))
  return r.result
end

-- Checks the MRTR wire shape of a step: one round per entry of `asked` (the sorted
-- inputRequests keys of each input_required result), then a complete result. Each
-- input_required result has a string requestState; the next round is a new request of
-- the same method and name whose params echo that requestState byte for byte and answer
-- exactly the keys asked, with what the client's handler returned. Returns the rounds.
local function assert_rounds(report, step, http, method, asked)
  local rounds = step.rounds
  assert.same(#asked + 1, #rounds)
  local handled = {}
  for _, h in ipairs(peers.handled_during(report, step)) do
    handled[h.key] = h
  end
  local ids, states = {}, {}
  for i, round in ipairs(rounds) do
    assert.is_nil(ids[json.encode(round.id)], "a retry reused a request id")
    ids[json.encode(round.id)] = true
    local sent
    for _, s in ipairs(report.sent) do
      if s.msg.id == round.id and s.msg.method then
        sent = s.msg
      end
    end
    assert.same(method, sent and sent.method)
    assert.same(rounds[1].params.name, round.params.name)
    local res = raw_result(round)
    if i <= #asked then
      assert.same("input_required", res.resultType)
      assert.same(asked[i], keys_of(res.inputRequests))
      assert.is_string(res.requestState)
      assert.is_nil(states[res.requestState], "requestState repeats across rounds")
      states[res.requestState] = true
      local retry = rounds[i + 1].params
      assert.same(res.requestState, retry.requestState)
      assert.same(asked[i], keys_of(retry.inputResponses))
      for key, req in pairs(res.inputRequests) do
        local h = handled[key]
        assert.is_table(h, "the client's handler never answered " .. key)
        assert.same(req.method, h.method)
        assert.same(h.answer, retry.inputResponses[key])
      end
    else
      assert.same("complete", res.resultType)
      assert.is_nil(res.inputRequests)
      assert.is_nil(res.requestState)
    end
    if i == 1 then
      assert.is_nil(round.params.inputResponses)
      assert.is_nil(round.params.requestState)
    end
  end
  if http then -- every round its own POST, answered with JSON
    local exchanges = {}
    for _, round in ipairs(rounds) do
      local _, rec = peers.response_to(report, round.id)
      assert.is_nil(exchanges[rec.exchange])
      exchanges[rec.exchange] = true
      assert.same("json", rec.via)
    end
  end
  return rounds
end

local function modern(name, http, start)
  describe("2.x client pinned to 2026-07-28 completing MRTR rounds over " .. name, function()
    local report

    setup(function()
      report = start()
    end)

    it("connects with server/discover and declares its capabilities on every request", function()
      driver_ok(report)
      assert.same(MODERN, report.connect.protocolVersion)
      assert.same("modern", report.connect.era)
      for _, step in ipairs(report.steps) do
        for _, round in ipairs(step.rounds) do
          assert.same({ elicitation = { form = {} }, sampling = {}, roots = {} },
            round.params._meta["io.modelcontextprotocol/clientCapabilities"])
        end
      end
    end)

    it("completes a one-round elicitation with the handler's answer", function()
      assert.same("Hello, Ada!", text_of(ok(peers.step(report, "one round"))))
    end)

    it("shows one input_required round on the wire, then the complete result", function()
      local rounds = assert_rounds(report, peers.step(report, "one round"), http, "tools/call", { { "user_name" } })
      local req = raw_result(rounds[1]).inputRequests.user_name
      assert.same("elicitation/create", req.method)
      assert.same("What is your name?", req.params.message)
      assert.same({ action = "accept", content = { name = "Ada" } }, rounds[2].params.inputResponses.user_name)
    end)

    it("completes a multi-round tool with the handler's answers", function()
      assert.same("Multi-round complete for Ada who likes teal", text_of(ok(peers.step(report, "multi round"))))
    end)

    it("shows two input_required rounds with different requestStates, then the complete result", function()
      local rounds = assert_rounds(report, peers.step(report, "multi round"), http, "tools/call",
        { { "step1" }, { "step2" } })
      assert.not_equal(raw_result(rounds[1]).requestState, raw_result(rounds[2]).requestState)
      -- the client sends only the newest answer: step1's lives on inside requestState
      assert.same({ "step2" }, keys_of(rounds[3].params.inputResponses))
    end)

    it("completes a tool asking several questions at once", function()
      assert.same("Name: Ada; Greeting: Paris, of course.; Roots: 2", text_of(ok(peers.step(report, "several"))))
    end)

    it("shows the several questions in one input_required result, answered in one retry", function()
      local rounds = assert_rounds(report, peers.step(report, "several"), http, "tools/call",
        { { "client_roots", "greeting", "user_name" } })
      local asked = raw_result(rounds[1]).inputRequests
      assert.same("roots/list", asked.client_roots.method)
      assert.same("sampling/createMessage", asked.greeting.method)
      assert.same("elicitation/create", asked.user_name.method)
      assert.same({ roots = ROOTS }, rounds[2].params.inputResponses.client_roots)
      assert.same(SAMPLED, rounds[2].params.inputResponses.greeting)
    end)

    it("completes a prompt (prompts/get) that asks", function()
      local res = ok(peers.step(report, "prompt"))
      assert.same("Prompt with context: the moon", res.messages[1].content.text)
    end)

    it("shows the prompt's input_required round on the wire", function()
      assert_rounds(report, peers.step(report, "prompt"), http, "prompts/get", { { "user_context" } })
    end)

    it("completes a sampling round with the handler's CreateMessageResult", function()
      local step = peers.step(report, "sample")
      assert.same("Sampling result: Paris, of course.", text_of(ok(step)))
      assert_rounds(report, step, http, "tools/call", { { "capital_question" } })
    end)

    it("completes a roots round with the handler's roots", function()
      local step = peers.step(report, "roots")
      assert.same({ count = 2, uris = "file:///work/alpha file:///work/beta" }, ok(step).structuredContent)
      assert_rounds(report, step, http, "tools/call", { { "roots" } })
    end)

    it("sends only messages valid against the 2026-07-28 schema, and no requests", function()
      local problems, checked = wire.check(report, MODERN)
      assert.same({}, problems)
      local input_required = 0
      for _, r in ipairs(report.received) do
        assert.is_nil(r.msg.method and r.msg.id, "a server->client request")
        if r.msg.result and r.msg.result.resultType == "input_required" then
          input_required = input_required + 1
        end
      end
      assert.same(7, input_required)
      assert.is_true(checked >= #MODERN_STEPS + input_required + 1)
    end)
  end)
end

modern("Streamable HTTP", true, function()
  local s = server.http(PATHS)
  local report = peers.drive { client = "client2", pin = MODERN, transport = { type = "http", url = s.url },
    handlers = HANDLERS, steps = MODERN_STEPS }
  s:stop()
  return report
end)

modern("stdio", false, function()
  return peers.drive { client = "client2", pin = MODERN, transport = peers.stdio_transport(PATHS),
    handlers = HANDLERS, steps = MODERN_STEPS }
end)

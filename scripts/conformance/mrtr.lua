-- scripts/conformance/mrtr.lua — multi round-trip request (MRTR, SEP-2322) fixtures for the
-- official MCP conformance suite, 2026-07-28 input-required-result-* scenarios
-- (docs/conformance.md). All of these are "interaction" scenarios.
--
-- Plain sequential handlers on the ask API (lua/moonmcp/ask.lua):
--  * ctx:elicit / ctx:sample / ctx:roots take an optional `key` that names the entry in
--    InputRequiredResult.inputRequests (and in the client's inputResponses on retry).
--  * ctx:ask{ key = {elicit=…} | {sample=…} | {roots=true}, … } asks several questions in
--    ONE round and returns { key = answer, … }.
--  * A question not answered yet ends the run: the call answers {resultType=
--    "input_required", inputRequests={…}, requestState=…}; the retry re-runs the handler,
--    answering earlier questions from the ledger sealed in requestState (AES-256-GCM) and
--    new ones from inputResponses. requestState is always present and differs every
--    round; a tampered one is -32602. Unknown inputResponses keys are ignored; a missing
--    answer is asked again; a non-object answer or inputResponses = null is -32602.
--  * ctx:client().capabilities is the request's _meta clientCapabilities (2026) or the
--    initialize capabilities (2025-11-25, when known).
-- On 2025-11-25 the same handlers send ordinary server->client requests.
-- (No moonmcp functions are needed here: everything goes through ctx.)

local NO_ARGS = { type = "object", properties = {} }

local function ask_text(message, field, typ)
  return { message = message, schema = { type = "object", required = { field },
    properties = { [field] = { type = typ or "string" } } } }
end

local function with_key(key, t) t.key = key; return t end

local function sample(text, max_tokens)
  return { messages = { { role = "user", content = { type = "text", text = text } } }, max_tokens = max_tokens }
end

return {
  tools = {
    -- basic-elicitation; also missing-input-response (inputResponses={wrong_key=…} -> must
    -- re-ask), result-type, ignore-extra-params (inputResponses has user_name plus junk and
    -- NO requestState -> must complete), validate-input (user_name=12345 / null -> not complete).
    test_input_required_result_elicitation = {
      description = "MRTR: returns InputRequiredResult with elicitation request",
      input = NO_ARGS,
      handler = function(_, ctx)
        local r = ctx:elicit(with_key("user_name", ask_text("What is your name?", "name")))
        return ("Hello, %s!"):format(tostring(r.content and r.content.name))
      end,
    },

    test_input_required_result_sampling = {
      description = "MRTR: returns InputRequiredResult with sampling request",
      input = NO_ARGS,
      handler = function(_, ctx)
        local r = ctx:sample(with_key("capital_question", sample("What is the capital of France?", 100)))
        return "Sampling result: " .. tostring(r.content and r.content.text or "no response")
      end,
    },

    test_input_required_result_list_roots = {
      description = "MRTR: returns InputRequiredResult with roots/list request",
      input = NO_ARGS,
      handler = function(_, ctx)
        local roots = ctx:roots { key = "client_roots" } -- the array of { uri =, name = }
        return ("Found %d root(s)"):format(#roots)
      end,
    },

    -- Round 1 must carry requestState; round 2 (inputResponses.confirm + echoed state) completes.
    test_input_required_result_request_state = {
      description = "MRTR: returns InputRequiredResult with requestState",
      input = NO_ARGS,
      handler = function(_, ctx)
        local r = ctx:elicit(with_key("confirm", ask_text("Please confirm", "ok", "boolean")))
        if r.action == "accept" and r.content and r.content.ok == true then
          return "state-ok: requestState validated"
        end
        return nil, "confirmation declined"
      end,
    },

    -- One round with >= 3 inputRequests of three different methods, plus requestState.
    test_input_required_result_multiple_inputs = {
      description = "MRTR: returns InputRequiredResult with multiple input requests",
      input = NO_ARGS,
      handler = function(_, ctx)
        local r = ctx:ask { -- several questions, one round
          user_name = { elicit = ask_text("What is your name?", "name") },
          greeting = { sample = sample("Generate a greeting", 50) },
          client_roots = { roots = true },
        }
        return ("Name: %s; Greeting: %s; Roots: %d"):format(tostring(r.user_name.content.name),
          tostring(r.greeting.content.text), #r.client_roots)
      end,
    },

    -- Three rounds; the client sends only the newest answer each time (step2 in round 3),
    -- so step1's answer must survive inside requestState, which must differ per round.
    test_input_required_result_multi_round = {
      description = "MRTR: multi-round InputRequiredResult workflow",
      input = NO_ARGS,
      handler = function(_, ctx)
        local a = ctx:elicit(with_key("step1", ask_text("Step 1: What is your name?", "name")))
        local b = ctx:elicit(with_key("step2", ask_text("Step 2: What is your favorite color?", "color")))
        return ("Multi-round complete for %s who likes %s"):format(tostring(a.content.name),
          tostring(b.content.color))
      end,
    },

    -- Suite appends "-TAMPERED" to requestState: the host's integrity check must reject it.
    test_input_required_result_tampered_state = {
      description = "MRTR: HMAC-signed requestState integrity test",
      input = NO_ARGS,
      handler = function(_, ctx)
        ctx:elicit(with_key("confirm", ask_text("Please confirm", "ok", "boolean")))
        return "integrity-ok: state verified"
      end,
    },

    -- Called with clientCapabilities {sampling={}} only: must answer input_required with a
    -- sampling request and NO elicitation request (a complete result fails the check).
    test_input_required_result_capabilities = {
      description = "MRTR: respects client capabilities in inputRequests",
      input = NO_ARGS,
      handler = function(_, ctx)
        local caps = ctx:client().capabilities or {}
        local want, keys = {}, {}
        if caps.elicitation then
          want.elicit_input = { elicit = ask_text("Elicitation input", "value") }
          keys[#keys + 1] = "elicit_input"
        end
        if caps.sampling then
          want.sample_input = { sample = sample("Sample request", 50) }
          keys[#keys + 1] = "sample_input"
        end
        if #keys == 0 then return "No supported capabilities declared" end
        ctx:ask(want)
        return "capabilities-ok: received " .. table.concat(keys, ",")
      end,
    },
  },

  prompts = {
    -- input-required-result-non-tool-request: prompts/get answers input_required first.
    test_input_required_result_prompt = {
      description = "MRTR: prompt that requires elicitation input",
      handler = function(_, ctx)
        local r = ctx:elicit(with_key("user_context", ask_text("What context should the prompt use?", "context")))
        return { messages = { { role = "user", content = { type = "text",
          text = "Prompt with context: " .. tostring(r.content and r.content.context) } } } }
      end,
    },
  },
}

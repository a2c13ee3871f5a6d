-- Bench fixture for bench/elicit.sh: an `ask` tool whose call parks on an elicitation
-- (a server->client `elicitation/create` request, legacy era) until the client answers.
-- The bench never answers, so every call stays parked (until ask_timeout, 300 s).
return {
  tools = {
    ask = {
      description = "Asks the client to confirm, then says what it answered.",
      input = { type = "object" },
      handler = function(_, ctx)
        local r = ctx:elicit {
          message = "Proceed?",
          schema = { type = "object", properties = { ok = { type = "boolean" } } },
        }
        return r.action
      end,
    },
  },
}

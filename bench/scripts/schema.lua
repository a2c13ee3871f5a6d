-- Bench fixture for bench/eras.sh: the cost of argument validation. Two tools with the
-- same handler (returns its arguments, like scripts/echo.lua's `echo`):
--   echo_schema  a realistic ~10-property input schema: strings with a pattern, lengths
--                and formats (email, uri, date-time), an enum, bounded integer and number,
--                a boolean, a nested object (additionalProperties false) and an array of
--                unique strings; required fields; additionalProperties false;
--   echo_plain   no input schema at all (the loader compiles no validator).
-- eras.sh calls both with the same arguments (ARGS below is the JSON it sends), so the
-- difference in server CPU per call is the validation.
local function handler(args)
  return args
end

local SCHEMA = {
  type = "object",
  properties = {
    id = { type = "string", pattern = "^[a-z][a-z0-9-]{2,31}$", description = "Deployment id" },
    email = { type = "string", format = "email", maxLength = 254 },
    callback = { type = "string", format = "uri", maxLength = 2048 },
    at = { type = "string", format = "date-time" },
    env = { type = "string", enum = { "dev", "staging", "prod" } },
    replicas = { type = "integer", minimum = 1, maximum = 64 },
    ratio = { type = "number", minimum = 0, maximum = 1 },
    dry_run = { type = "boolean" },
    owner = {
      type = "object",
      properties = {
        name = { type = "string", minLength = 1, maxLength = 64 },
        team = { type = "string", pattern = "^[A-Z]{2,8}$" },
      },
      required = { "name" },
      additionalProperties = false,
    },
    tags = { type = "array", items = { type = "string", minLength = 1, maxLength = 32 }, maxItems = 10,
      uniqueItems = true },
  },
  required = { "id", "email", "env", "replicas" },
  additionalProperties = false,
}

return {
  tools = {
    echo_schema = {
      description = "Returns its arguments; validated against a realistic input schema.",
      input = SCHEMA,
      handler = handler,
    },
    echo_plain = {
      description = "Returns its arguments; no input schema.",
      handler = handler,
    },
  },
}

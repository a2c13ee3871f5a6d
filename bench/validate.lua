-- bench/validate.lua — argument validation cost, in process (docs/performance.md).
--
--   taskset -c 0 ./build/moonmcp test bench/validate.lua       (N, REPS: sizes)
--
-- Compiles the input schema of bench/scripts/schema.lua's `echo_schema` (the realistic
-- ~10-property schema bench/eras.sh calls over HTTP) with moonmcp.schema_shape, as the
-- loader does, decodes the same arguments eras.sh sends, and times N validator:validate
-- calls, REPS times (median µs per call). To attribute the cost it also times the schema
-- with one kind of keyword removed at a time (formats, patterns, the nested object, the
-- array) and the one-line `{ type = "object" }` schema of the echo tool.
-- luacheck: std +busted
local json = require "moonmcp.json"
local schema_shape = require "moonmcp.schema_shape"
local core = require "moonmcp.core"

local N = tonumber(os.getenv("N")) or 20000
local REPS = tonumber(os.getenv("REPS")) or 7
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "bench"

-- The arguments bench/eras.sh sends (SCHEMA_ARGS there).
local ARGS = '{"id":"api-gateway-7","email":"ops.oncall@example.com",'
  .. '"callback":"https://hooks.example.com/deploy/42?src=mcp",'
  .. '"at":"2026-11-30T09:15:00Z","env":"staging","replicas":3,"ratio":0.25,"dry_run":false,'
  .. '"owner":{"name":"Ada Lovelace","team":"PLATFORM"},"tags":["blue-green","canary","eu-west-1"]}'

local function deep_copy(t)
  if type(t) ~= "table" then
    return t
  end
  local c = {}
  for k, v in pairs(t) do
    c[k] = deep_copy(v)
  end
  return c
end

local function median(list)
  table.sort(list)
  local n = #list
  return n % 2 == 1 and list[(n + 1) / 2] or (list[n / 2] + list[n / 2 + 1]) / 2
end

local function time_validator(doc, args)
  local v = assert(schema_shape.compile(doc))
  local ok, errs = v:validate(args)
  assert(ok, errs and errs[1] and errs[1].message)
  for _ = 1, N do -- warm-up
    v:validate(args)
  end
  local samples = {}
  for r = 1, REPS do
    local t0 = core.clock()
    for _ = 1, N do
      v:validate(args)
    end
    samples[r] = (core.clock() - t0) * 1e6 / N
  end
  return median(samples)
end

describe("validate bench", function()
  it("times the realistic schema and its parts", function()
    local def = dofile(here .. "/scripts/schema.lua").tools.echo_schema.input
    local args = json.decode(ARGS)
    local rows = {}
    local function row(label, doc)
      rows[#rows + 1] = ("| %s | %.2f |"):format(label, time_validator(doc, args))
    end
    row("full schema (10 properties)", def)
    local s = deep_copy(def)
    for _, p in pairs(s.properties) do
      p.format = nil
    end
    row("without the 3 formats (email, uri, date-time)", s)
    s = deep_copy(def)
    s.properties.id.pattern, s.properties.owner.properties.team.pattern = nil, nil
    row("without the 2 patterns", s)
    s = deep_copy(def)
    s.properties.owner = { type = "object" }
    row("nested object reduced to {type=object}", s)
    s = deep_copy(def)
    s.properties.tags = { type = "array" }
    row("array reduced to {type=array}", s)
    row("{ type = \"object\" } (the echo tool's)", { type = "object" })
    print(("\nvalidator:validate, N = %d, median of %d (µs per call)\n| schema | µs/call |\n|---|---|"):format(N, REPS))
    print(table.concat(rows, "\n"))
  end)
end)

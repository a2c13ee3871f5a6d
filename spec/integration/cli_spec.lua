-- The author's commands against the real binary: `moonmcp check` and `moonmcp call`.
local exec = require "moonmcp.exec"
local json = require "moonmcp.json"
local server = require "helpers.server"
local scratch = require "helpers.scratch"

local function run(args, stdin)
  local argv = { server.bin }
  for _, a in ipairs(args) do
    argv[#argv + 1] = a
  end
  argv.timeout = 20
  argv.stdin = stdin or ""
  return assert(exec.run(argv))
end

describe("moonmcp check", function()
  it("lists every tool, prompt and resource and exits 0", function()
    local r = run { "check", "spec/fixtures/authoring" }
    assert.equal(0, r.code)
    assert.matches("tool countdown", r.stdout, 1, true)
    assert.matches('"minimum":1', r.stdout, 1, true)
    assert.matches("prompt review(code*)", r.stdout, 1, true)
    assert.matches("resource memo://motd", r.stdout, 1, true)
    assert.matches("ok: 1 files, 5 tools, 1 prompts, 1 resources, 0 templates", r.stdout, 1, true)
  end)

  it("prints file:line of an error and exits 1", function()
    local r = run { "check", "spec/fixtures/broken" }
    assert.equal(1, r.code)
    assert.matches("spec/fixtures/broken/syntax.lua:4:", r.stderr, 1, true)
  end)

  it("prints every error, not only the first", function()
    local dir = scratch.new()
    dir:write("a.lua", "return { tools = { a = { handler = 1 } } }")
    dir:write("b.lua", "return { tools = { b = { handler = function() end, input = { type = 'array' } } } }")
    local r = run { "check", dir.root }
    dir:destroy()
    assert.equal(1, r.code)
    assert.matches("a.lua: tool \"a\": handler must be a function", r.stderr, 1, true)
    assert.matches("b.lua:1: tool \"b\": input schema must have type", r.stderr, 1, true)
  end)

  it("reports as JSON with --json", function()
    local r = run { "check", "--json", "spec/fixtures/authoring" }
    assert.equal(0, r.code)
    local report = json.decode(r.stdout)
    assert.is_true(report.ok)
    assert.equal("spec/fixtures/authoring/tools.lua", report.tools[1].file)
  end)

  it("reports errors as JSON with --json", function()
    local r = run { "check", "--json", "spec/fixtures/broken" }
    assert.equal(1, r.code)
    local report = json.decode(r.stdout)
    assert.is_false(report.ok)
    assert.equal(4, report.errors[1].line)
  end)
end)

describe("moonmcp call", function()
  it("prints the result on stdout and exits 0", function()
    local r = run { "call", "greet", "name=Ada" }
    assert.equal(0, r.code)
    assert.equal("Hello, Ada!\n", r.stdout)
  end)

  it("coerces key=value by the input schema", function()
    local r = run { "call", "convert_units", "value=3", "from=km", "to=m" }
    assert.equal(0, r.code)
    assert.equal(3000, json.decode(r.stdout).value)
  end)

  it("takes the arguments as JSON with --json", function()
    local r = run { "call", "convert_units", "--json", '{"value":1,"from":"kg","to":"g"}' }
    assert.equal(0, r.code)
    assert.equal(1000, json.decode(r.stdout).value)
  end)

  it("refuses a value the schema cannot take", function()
    local r = run { "call", "convert_units", "value=three", "from=km", "to=m" }
    assert.equal(2, r.code)
    assert.matches("value=three: expected number", r.stderr, 1, true)
  end)

  it("exits 1 on an error result", function()
    local r = run { "call", "spec/fixtures/authoring", "countdown", "n=0" }
    assert.equal(1, r.code)
    assert.matches("must be >= 1", r.stderr, 1, true)
  end)

  it("exits 1 for an unknown tool", function()
    local r = run { "call", "nope" }
    assert.equal(1, r.code)
    assert.matches('no tool "nope"', r.stderr, 1, true)
  end)

  it("prints progress and logs on stderr as they come", function()
    local dir = scratch.new()
    dir:write("p.lua", [[
local moonmcp = require "moonmcp"
return { tools = { p = { handler = function(_, ctx)
  ctx:progress(1, 2, "half")
  moonmcp.log.info("working", { step = 1 })
  return "done"
end } } }]])
    local r = run { "call", dir.root, "p" }
    dir:destroy()
    assert.equal(0, r.code)
    assert.equal("done\n", r.stdout)
    assert.matches("progress 1/2  half", r.stderr, 1, true)
    assert.matches("[info] working step=1", r.stderr, 1, true)
  end)

  it("answers elicitations from --answers (JSON)", function()
    local dir = scratch.new()
    dir:write("answers.json", '{ "Who are you?": { "name": "Grace" } }')
    local r = run { "call", "--answers", dir:path("answers.json"), "spec/fixtures/authoring", "greet_asked" }
    dir:destroy()
    assert.equal(0, r.code)
    assert.equal("Hello, Grace!\n", r.stdout)
  end)

  it("answers elicitations from --answers (Lua), in the modern era", function()
    local dir = scratch.new()
    dir:write("answers.lua", 'return { who = { name = "Linus" } }')
    local r = run { "call", "--era", "modern", "--answers", dir:path("answers.lua"), "spec/fixtures/authoring",
      "greet_asked" }
    dir:destroy()
    assert.equal(0, r.code)
    assert.equal("Hello, Linus!\n", r.stdout)
  end)

  it("fails, naming the question, when nobody can answer it", function()
    local r = run { "call", "spec/fixtures/authoring", "greet_asked" }
    assert.equal(1, r.code)
    assert.matches("no answer for elicitation/create", r.stderr, 1, true)
  end)

  it("prints the whole result with --raw", function()
    local r = run { "call", "--raw", "greet", "name=Ada" }
    assert.equal(0, r.code)
    assert.same({ { type = "text", text = "Hello, Ada!" } }, json.decode(r.stdout).content)
  end)

  -- --config: the config's accessors apply and its scripts are the default PATHs
  it("takes a config file: its scripts and its context accessors", function()
    local dir = scratch.new()
    dir:mkdir("tools")
    dir:write("tools/who.lua", [[
return { tools = { who = { handler = function(_, ctx)
  return "tenant " .. tostring(ctx.tenant)
end } } }]])
    dir:write("moonmcp.conf.lua", [[
return {
  scripts = { "tools" },
  accessors = { { key = "tenant", capture = function() return "acme" end } },
}]])
    local r = run { "call", "--config", dir:path("moonmcp.conf.lua"), "who" }
    local c = run { "check", "--config", dir:path("moonmcp.conf.lua") }
    local bad = run { "call", "--config", dir:path("missing.lua"), "who" }
    dir:destroy()
    assert.equal(0, r.code, r.stderr)
    assert.equal("tenant acme\n", r.stdout)
    assert.equal(0, c.code, c.stderr)
    assert.matches("tool who", c.stdout, 1, true)
    assert.equal(1, bad.code)
    assert.matches("moonmcp call: config:", bad.stderr, 1, true)
  end)
end)

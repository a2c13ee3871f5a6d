-- completion/complete through the dispatcher, with spec/fixtures/scripts/prompts_resources.lua.
local server = require "moonmcp.server"
local loader = require "moonmcp.loader"
local json = require "moonmcp.json"
local completion = require "moonmcp.methods.completion"

local gen = assert(loader.load { "spec/fixtures/scripts/prompts_resources.lua" })

local function complete(ref, name, value, context_args)
  local params = { ref = ref, argument = { name = name, value = value } }
  if context_args then
    params.context = { arguments = context_args }
  end
  local msg = { jsonrpc = "2.0", id = 1, method = "completion/complete", params = params }
  return server.dispatch(msg, { generation = gen }, {})
end

local function prompt(name)
  return { type = "ref/prompt", name = name }
end

local function template(uri)
  return { type = "ref/resource", uri = uri }
end

describe("completion/complete", function()
  it("offers the declared values that start with the typed text", function()
    local res = complete(prompt("fx_review"), "language", "lu")
    assert.same({ values = { "lua", "luau" }, total = 2, hasMore = false }, res.result.completion)
  end)

  it("matches the prefix regardless of ASCII case", function()
    assert.same({ "lua", "luau" }, complete(prompt("fx_review"), "language", "LU").result.completion.values)
  end)

  it("offers every value for an empty text", function()
    assert.equal(4, #complete(prompt("fx_review"), "language", "").result.completion.values)
  end)

  it("uses a completer declared on the argument itself", function()
    assert.same({ "France", "Finland" }, complete(prompt("fx_cities"), "country", "f").result.completion.values)
  end)

  it("passes context.arguments to a completion function, which may yield", function()
    local res = complete(prompt("fx_cities"), "city", "P", { country = "France" })
    assert.same({ "Paris", "Pau" }, res.result.completion.values)
  end)

  it("answers an empty list for an argument without a completer", function()
    local res = complete(prompt("fx_review"), "code", "x")
    assert.same({ values = {}, total = 0, hasMore = false }, res.result.completion)
    assert.matches('"values":%[%]', json.encode(res.result))
  end)

  it("completes a template variable", function()
    assert.same({ "100", "101" }, complete(template("test://fixture/items/{id}"), "id", "10").result.completion.values)
  end)

  it("finds the template of a concrete URI", function()
    assert.same({ "200" }, complete(template("test://fixture/items/9"), "id", "2").result.completion.values)
  end)

  it("caps the values at 100 and says there are more", function()
    local c = complete(template("test://fixture/{+path}"), "path", "p").result.completion
    assert.equal(100, #c.values)
    assert.equal(150, c.total)
    assert.is_true(c.hasMore)
  end)

  it("answers an unknown prompt with -32602", function()
    assert.equal(-32602, complete(prompt("nope"), "x", "").error.code)
  end)

  it("answers an unknown template with -32602", function()
    assert.equal(-32602, complete(template("nope://{x}"), "x", "").error.code)
  end)

  it("answers an unknown ref type with -32602", function()
    assert.equal(-32602, complete({ type = "ref/tool", name = "x" }, "x", "").error.code)
  end)

  it("answers a missing argument with -32602", function()
    local msg = { jsonrpc = "2.0", id = 1, method = "completion/complete", params = { ref = prompt("fx_review") } }
    assert.equal(-32602, server.dispatch(msg, { generation = gen }, {}).error.code)
  end)

  it("accepts { values, total, hasMore } from a function", function()
    local c = completion.complete(function() return { values = { "a" }, total = 10, hasMore = true } end, "", nil, {})
    assert.same({ values = { "a" }, total = 10, hasMore = true }, c)
  end)
end)

-- prompts/list and prompts/get through the dispatcher, with the fixture scripts in
-- spec/fixtures/scripts/prompts_resources.lua.
local server = require "moonmcp.server"
local loader = require "moonmcp.loader"
local paginate = require "moonmcp.paginate"
local json = require "moonmcp.json"
local log = require "moonmcp.log"

local gen = assert(loader.load { "spec/fixtures/scripts/prompts_resources.lua" })

local function dispatch(method, params)
  local exchange = { generation = gen }
  local msg = { jsonrpc = "2.0", id = 1, method = method, params = params or {} }
  return server.dispatch(msg, exchange, {}), exchange
end

local function get(name, args)
  return dispatch("prompts/get", { name = name, arguments = args })
end

describe("prompts/list", function()
  it("lists the prompts sorted by name, with their arguments", function()
    local res = dispatch("prompts/list")
    local names = {}
    for i, p in ipairs(res.result.prompts) do
      names[i] = p.name
    end
    assert.same({ "fx_broken", "fx_cities", "fx_list", "fx_messages", "fx_refuse", "fx_review" }, names)
    assert.same({ name = "fx_review", title = "Review", description = "Reviews code.", arguments = {
      { name = "code", description = "The code", required = true },
      { name = "language", description = "Its language" },
    } }, res.result.prompts[6])
  end)

  it("does not show argument completers", function()
    local res = dispatch("prompts/list")
    local text = json.encode(res.result)
    assert.is_nil(text:find("complete", 1, true))
  end)

  it("omits nextCursor when everything fits on one page", function()
    assert.is_nil(dispatch("prompts/list").result.nextCursor)
  end)

  it("pages with nextCursor", function()
    paginate.set_page_size(4)
    local first = dispatch("prompts/list").result
    local second = dispatch("prompts/list", { cursor = first.nextCursor }).result
    paginate.set_page_size(paginate.DEFAULT_PAGE_SIZE)
    assert.equal(4, #first.prompts)
    assert.same({ "fx_refuse", "fx_review" }, { second.prompts[1].name, second.prompts[2].name })
    assert.is_nil(second.nextCursor)
  end)

  it("refuses an invalid cursor with -32602", function()
    assert.equal(-32602, dispatch("prompts/list", { cursor = "nonsense" }).error.code)
  end)

  it("sets public list caching hints on the exchange", function()
    local _, exchange = dispatch("prompts/list")
    assert.same({ ttl_ms = paginate.cache_defaults.ttl_ms, scope = "public" }, exchange.cache)
  end)
end)

describe("prompts/get", function()
  it("turns a string into one user text message", function()
    local res = get("fx_review", { code = "x = 1", language = "lua" })
    assert.same({ description = "Reviews code.", messages = {
      { role = "user", content = { type = "text", text = "Review this lua:\nx = 1" } },
    } }, res.result)
  end)

  it("answers an unknown prompt with -32602", function()
    local res = get("nope", {})
    assert.equal(-32602, res.error.code)
    assert.matches("unknown prompt: nope", res.error.message)
  end)

  it("answers a missing required argument with -32602 naming it", function()
    local res = get("fx_review", { language = "lua" })
    assert.equal(-32602, res.error.code)
    assert.matches('"code"', res.error.message)
  end)

  it("refuses an argument that is not a string", function()
    local res = get("fx_review", { code = 12 })
    assert.equal(-32602, res.error.code)
    assert.matches("must be a string", res.error.message)
  end)

  it("refuses an undeclared argument", function()
    local res = get("fx_review", { code = "x", colour = "red" })
    assert.equal(-32602, res.error.code)
    assert.matches('"colour"', res.error.message)
  end)

  it("accepts missing arguments when none is required", function()
    local res = dispatch("prompts/get", { name = "fx_messages" })
    assert.is_table(res.result)
  end)

  it("keeps a result table's description and roles, and splits a list of blocks", function()
    local res = get("fx_messages")
    local m = res.result.messages
    assert.equal("custom", res.result.description)
    assert.same({ role = "assistant", content = { type = "text", text = "I am ready." } }, m[1])
    assert.equal("image", m[2].content.type)
    assert.equal("image/png", m[2].content.mimeType)
    assert.same({ role = "user", content = { type = "text", text = "two" } }, m[4])
    assert.equal(4, #m)
  end)

  it("takes a list of messages, bare blocks and strings as user messages", function()
    local m = get("fx_list").result.messages
    assert.same({ role = "user", content = { type = "resource",
      resource = { uri = "test://fixture/text", mimeType = "text/plain", text = "embedded" } } }, m[1])
    assert.same({ type = "resource_link", uri = "test://fixture/binary", name = "binary" }, m[2].content)
    assert.same({ role = "user", content = { type = "text", text = "plain text" } }, m[3])
  end)

  it("marks messages as a JSON array", function()
    assert.is_true(json.is_array(get("fx_list").result.messages))
  end)

  it("turns nil, message into -32602 carrying the message", function()
    local res = get("fx_refuse", { language = "c" })
    assert.same({ code = -32602, message = "language must be lua, not c" }, res.error)
  end)

  it("turns a malformed result into an internal error without details", function()
    log.set_level("critical") -- the traceback is logged; keep it out of the spec output
    local res = get("fx_broken")
    log.set_level("info")
    assert.same({ code = -32603, message = "internal error" }, res.error)
  end)
end)

describe("loading prompts", function()
  local function load(script)
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write(script)
    f:close()
    local g, errors = loader.load { path }
    os.remove(path)
    return g, errors and loader.format_errors(errors)
  end

  it("refuses a prompt without a handler", function()
    local g, err = load 'return { prompts = { p = { description = "x" } } }'
    assert.is_nil(g)
    assert.matches('prompt "p": handler must be a function', err)
  end)

  it("refuses an argument declared twice", function()
    local _, err = load [[return { prompts = { p = {
      arguments = { { name = "a" }, { name = "a" } }, handler = print } } }]]
    assert.matches('argument "a" is declared twice', err)
  end)

  it("refuses a completer for an argument that does not exist", function()
    local _, err = load 'return { prompts = { p = { complete = { b = { "x" } }, handler = print } } }'
    assert.matches("complete.b: no such argument", err)
  end)

  it("refuses a completer that is neither a list of strings nor a function", function()
    local _, err = load [[return { prompts = { p = {
      arguments = { { name = "a", complete = { 1 } } }, handler = print } } }]]
    assert.matches("must hold strings only", err)
  end)

  it("refuses a cache_scope other than public or private", function()
    local _, err = load 'return { prompts = { p = { cache_scope = "shared", handler = print } } }'
    assert.matches("cache_scope", err)
  end)
end)

-- Every example of docs/tools.md, run: the blocks marked <!-- example: NAME --> are
-- loaded as scripts and called through moonmcp.testing; <!-- example-config: NAME -->
-- blocks are loaded as config files and their filters and accessors exercised;
-- <!-- spec-file: PATH --> blocks must be the very file they show.
local moonmcp = require "moonmcp"
local testing = require "moonmcp.testing"
local config = require "moonmcp.config"
local registry = require "moonmcp.registry"
local scratch = require "helpers.scratch"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

local DOC = read("docs/tools.md")

local function blocks(marker)
  local found = {}
  for name, code in DOC:gmatch("<!%-%- " .. marker .. ": (%S+) %-%->\n```%w*\n(.-)```\n") do
    found[name] = code
  end
  return found
end

local EXAMPLES = blocks("example")

describe("docs/tools.md", function()
  local dir, saved, clock

  before_each(function()
    saved = registry.current()
    dir = scratch.new()
  end)

  after_each(function()
    if clock then
      clock:restore()
      clock = nil
    end
    registry.set(saved)
    dir:destroy()
    testing.reset()
  end)

  -- A client on the example `name`, written as a script file.
  local function client(name, opts)
    local code = assert(EXAMPLES[name], "no example " .. name .. " in docs/tools.md")
    dir:write(name .. ".lua", code)
    opts = opts or {}
    opts.paths = { dir:path(name .. ".lua") }
    return testing.client(opts)
  end

  it("has the examples these specs expect", function()
    for _, name in ipairs { "dice", "chart", "prompts", "memos", "whoami", "countdown", "divide", "files",
      "confirm", "counter", "refresher" } do
      assert.is_string(EXAMPLES[name], name)
    end
  end)

  it("shows spec files exactly as they are", function()
    for path, code in pairs(blocks("spec%-file")) do
      assert.equal(read(path), code, path)
    end
  end)

  describe("dice", function()
    it("rolls", function()
      local result = client("dice"):call_tool("roll", { sides = 6, count = 3 })
      assert.equal(3, #result.structuredContent.rolls)
      assert.is_true(result.structuredContent.total >= 3 and result.structuredContent.total <= 18)
    end)

    it("rejects arguments outside the schema", function()
      local result = client("dice"):call_tool("roll", { sides = 1 })
      assert.is_true(result.isError)
      assert.matches("invalid arguments: /sides", testing.text(result))
    end)
  end)

  it("chart returns an image and a resource link", function()
    local result = client("chart"):call_tool("chart")
    assert.same({ "text", "image", "resource_link" }, { result.content[1].type, result.content[2].type,
      result.content[3].type })
  end)

  describe("prompts", function()
    it("builds the messages", function()
      local result = client("prompts"):get_prompt("code_review", { code = "x = 1", language = "lua" })
      assert.equal(2, #result.messages)
      assert.equal("Review this lua code:\nx = 1", result.messages[1].content.text)
    end)

    it("refuses an argument with -32602", function()
      local result, err = client("prompts"):get_prompt("code_review", { code = "x", language = "cobol" })
      assert.is_nil(result)
      assert.equal(-32602, err.code)
      assert.matches("language must be", err.message)
    end)

    it("completes an argument", function()
      local result = client("prompts"):request("completion/complete", {
        ref = { type = "ref/prompt", name = "code_review" }, argument = { name = "language", value = "p" } })
      assert.same({ "python" }, result.completion.values)
    end)
  end)

  describe("memos", function()
    it("reads a resource", function()
      assert.equal("rules\nwelcome", client("memos"):read_resource("memo://index").contents[1].text)
    end)

    it("reads through a template", function()
      assert.equal("Hello!", client("memos"):read_resource("memo://welcome").contents[1].text)
    end)

    it("answers not found for a missing memo", function()
      local result, err = client("memos"):read_resource("memo://nope")
      assert.is_nil(result)
      assert.equal(-32002, err.code)
    end)
  end)

  describe("whoami", function()
    it("sees the principal and the era", function()
      local result = client("whoami", { request = { principal = { name = "ada" } } }):call_tool("whoami")
      assert.equal("ada", result.structuredContent.principal)
      assert.equal("legacy", result.structuredContent.era)
    end)

    it("runs in the stateless era too", function()
      local result = client("whoami", { era = "modern" }):call_tool("whoami")
      assert.equal("modern", result.structuredContent.era)
      assert.equal("2026-07-28", result.structuredContent.version)
    end)
  end)

  it("countdown reports progress (on a virtual clock)", function()
    clock = testing.clock()
    local result, info = client("countdown"):call_tool("countdown", { from = 3 })
    assert.equal("liftoff", testing.text(result))
    assert.equal(3, #info.progress)
    assert.equal("0 to go", info.progress[3].message)
    assert.equal(3, clock:now())
  end)

  describe("divide", function()
    it("divides", function()
      assert.same({ quotient = 2 }, client("divide"):call_tool("divide", { a = 6, b = 3 }).structuredContent)
    end)

    it("fails softly on zero", function()
      local result = client("divide"):call_tool("divide", { a = 1, b = 0 })
      assert.is_true(result.isError)
      assert.equal("cannot divide by zero", testing.text(result))
    end)
  end)

  describe("files", function()
    it("counts the words of a file", function()
      dir:write("words.txt", "one two three")
      local result = client("files"):call_tool("word_count", { path = dir:path("words.txt") })
      assert.same({ words = 3 }, result.structuredContent)
    end)

    it("fails softly on a missing file", function()
      local result = client("files"):call_tool("word_count", { path = dir:path("nope.txt") })
      assert.is_true(result.isError)
      assert.matches("nope.txt", testing.text(result))
    end)
  end)

  describe("confirm", function()
    it("deletes once confirmed (stateless era, answered by key)", function()
      local c = client("confirm", { era = "modern", answers = { confirm = { sure = true } } })
      local result, info = c:call_tool("delete_branch", { branch = "old" })
      assert.equal("deleted old", testing.text(result))
      assert.equal(2, info.rounds)
    end)

    it("deletes once confirmed (handshake era, answered by message)", function()
      local c = client("confirm", { answers = { ["Delete branch old?"] = { sure = true } } })
      assert.equal("deleted old", testing.text((c:call_tool("delete_branch", { branch = "old" }))))
    end)

    it("keeps the branch when the user declines", function()
      local c = client("confirm", { answers = { confirm = "decline" }, era = "modern" })
      assert.equal("kept old", testing.text((c:call_tool("delete_branch", { branch = "old" }))))
    end)
  end)

  it("counter keeps its state across a reload", function()
    local c = client("counter")
    c:call_tool("count")
    c:call_tool("count")
    testing.load { dir:path("counter.lua") } -- a new generation, as a reload makes
    assert.same({ calls = 3 }, c:call_tool("count").structuredContent)
  end)

  it("refresher's timer runs, and stops with its generation", function()
    clock = testing.clock()
    local c = client("refresher")
    moonmcp.sleep(125)
    assert.same({ refreshed = 2 }, c:call_tool("refreshed").structuredContent)
    registry.set(saved) -- the generation is dropped
    moonmcp.sleep(125)
    testing.load { dir:path("refresher.lua") }
    assert.same({ refreshed = 2 }, c:call_tool("refreshed").structuredContent)
  end)

  describe("configuration", function()
    local conf

    before_each(function()
      local code = blocks("example%-config").config
      dir:write("config.lua", code)
      conf = assert(config.load(dir:path("config.lua")))
    end)

    it("loads", function()
      assert.equal("127.0.0.1:8080", conf.listen)
      assert.equal(dir:path("tools"), conf.scripts[1])
    end)

    it("rejects a request without the token", function()
      local ok, status = conf.filters[1]({ headers = {}, log = {} })
      assert.is_false(ok)
      assert.equal(401, status)
    end)

    it("sets the principal and a log field for the right token", function()
      local request = { headers = { authorization = "Bearer secret-token" }, log = {} }
      assert.is_nil(conf.filters[1](request))
      assert.same({ name = "ops" }, request.principal)
      assert.equal("ops", request.log.user)
    end)

    it("captures the tenant", function()
      local acc = conf.accessors[1]
      local ctx = {}
      acc.restore(acc.capture({ headers = { ["x-tenant"] = "acme" } }), ctx)
      assert.equal("acme", ctx.tenant)
      acc.clear(ctx)
      assert.is_nil(ctx.tenant)
    end)
  end)
end)

-- resources/list, resources/templates/list, resources/read, resources/subscribe and
-- /unsubscribe through the dispatcher, with spec/fixtures/scripts/prompts_resources.lua;
-- and moonmcp.subscriptions with a fake sender.
local server = require "moonmcp.server"
local loader = require "moonmcp.loader"
local paginate = require "moonmcp.paginate"
local json = require "moonmcp.json"
local base64 = require "moonmcp.base64"
local resources = require "moonmcp.methods.resources"
local subscriptions = require "moonmcp.subscriptions"
local moonmcp = require "moonmcp"

local gen = assert(loader.load { "spec/fixtures/scripts/prompts_resources.lua" })

local MODERN_META = {
  ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28",
  ["io.modelcontextprotocol/clientCapabilities"] = {},
}

local function dispatch(method, params, exchange)
  exchange = exchange or { generation = gen, subscriber = "spec" }
  exchange.generation = exchange.generation or gen
  local msg = { jsonrpc = "2.0", id = 1, method = method, params = params or {} }
  return server.dispatch(msg, exchange, {}), exchange
end

local function read(uri, meta)
  return dispatch("resources/read", { uri = uri, _meta = meta })
end

describe("resources/list", function()
  it("lists the static resources sorted by URI, with their metadata", function()
    local list = dispatch("resources/list").result.resources
    assert.equal("test://fixture/binary", list[1].uri)
    local text
    for _, r in ipairs(list) do
      if r.uri == "test://fixture/text" then
        text = r
      end
    end
    assert.same({ uri = "test://fixture/text", name = "text", title = "Text", description = "A text resource",
      mimeType = "text/plain", size = 5,
      annotations = { audience = { "user" }, priority = 0.5, lastModified = "2026-01-02T03:04:05Z" } }, text)
  end)

  it("names a resource by its URI when the definition has no name", function()
    local list = dispatch("resources/list").result.resources
    assert.equal("test://fixture/bytes", list[2].uri)
    assert.equal("test://fixture/bytes", list[2].name)
  end)

  it("encodes annotations.audience as a JSON array", function()
    local text = json.encode(dispatch("resources/list").result)
    assert.matches('"audience":%["user"%]', text)
  end)

  it("marks the list private when any resource is private", function()
    local _, exchange = dispatch("resources/list")
    assert.equal("private", exchange.cache.scope)
  end)

  it("pages through every resource exactly once", function()
    paginate.set_page_size(2)
    local seen, cursor, pages = {}, nil, 0
    repeat
      local res = dispatch("resources/list", { cursor = cursor }).result
      for _, r in ipairs(res.resources) do
        seen[#seen + 1] = r.uri
      end
      cursor, pages = res.nextCursor, pages + 1
    until cursor == nil
    paginate.set_page_size(paginate.DEFAULT_PAGE_SIZE)
    assert.equal(9, #seen)
    assert.equal(5, pages)
    local sorted = { unpack(seen) }
    table.sort(sorted)
    assert.same(sorted, seen)
  end)
end)

describe("resources/templates/list", function()
  it("lists the templates sorted by template", function()
    local list = dispatch("resources/templates/list").result.resourceTemplates
    assert.same({ "test://fixture/items/{id}", "test://fixture/items/{id}{?format}", "test://fixture/{+path}" },
      { list[1].uriTemplate, list[2].uriTemplate, list[3].uriTemplate })
    assert.same({ uriTemplate = "test://fixture/items/{id}", name = "item", description = "An item by id",
      mimeType = "application/json" }, list[1])
  end)
end)

describe("resources/read", function()
  it("reads a text resource with the definition's mimeType", function()
    assert.same({ contents = { { uri = "test://fixture/text", mimeType = "text/plain", text = "hello" } } },
      read("test://fixture/text").result)
  end)

  it("reads a blob resource", function()
    local c = read("test://fixture/binary").result.contents[1]
    assert.equal("image/png", c.mimeType)
    assert.is_true(base64.is_valid(c.blob))
    assert.is_nil(c.text)
  end)

  it("base64-encodes raw bytes", function()
    assert.equal(base64.encode("\0\1\2\255"), read("test://fixture/bytes").result.contents[1].blob)
  end)

  it("reads several contents, filling in uri and mimeType", function()
    assert.same({
      { uri = "test://fixture/multi", mimeType = "text/plain", text = "first" },
      { uri = "test://fixture/multi#2", mimeType = "text/markdown", text = "second" },
    }, read("test://fixture/multi").result.contents)
  end)

  it("marks contents as a JSON array", function()
    assert.is_true(json.is_array(read("test://fixture/text").result.contents))
  end)

  it("routes a URI to the template it matches, with its variables", function()
    assert.equal('{"id":"42"}', read("test://fixture/items/42").result.contents[1].text)
  end)

  it("tries the more specific template first, then the next one that matches", function()
    assert.equal("item 42 as json", read("test://fixture/items/42?format=json").result.contents[1].text)
    assert.equal("path other/thing", read("test://fixture/other/thing").result.contents[1].text)
  end)

  it("prefers a static resource over a template that also matches", function()
    assert.equal("hello", read("test://fixture/text").result.contents[1].text)
  end)

  it("answers an unknown URI with -32002 and data.uri (legacy era)", function()
    assert.same({ code = -32002, message = "Resource not found", data = { uri = "nope://x" } }, read("nope://x").error)
  end)

  it("answers an unknown URI with -32602 and data.uri (modern era)", function()
    local res = read("nope://x", MODERN_META)
    assert.same({ code = -32602, message = "Resource not found", data = { uri = "nope://x" } }, res.error)
  end)

  it("answers not found when read returns nil", function()
    assert.equal(-32002, read("test://fixture/gone").error.code)
  end)

  it("answers not found when a template's read returns nil", function()
    assert.equal(-32002, read("test://fixture/missing").error.code)
  end)

  it("answers not found rather than an empty contents list", function()
    assert.equal(-32002, read("test://fixture/empty").error.code)
  end)

  it("refuses a missing uri with -32602", function()
    assert.equal(-32602, dispatch("resources/read", {}).error.code)
  end)

  it("puts the definition's caching hints on the exchange", function()
    local _, exchange = read("test://fixture/private")
    assert.same({ ttl_ms = 5000, scope = "private" }, exchange.cache)
  end)

  it("uses the read defaults when the definition has no hints", function()
    local _, exchange = read("test://fixture/text")
    assert.same({ ttl_ms = resources.read_cache_defaults.ttl_ms, scope = resources.read_cache_defaults.scope },
      exchange.cache)
  end)

  it("lets a read result override the hints", function()
    local _, exchange = read("test://fixture/override")
    assert.same({ ttl_ms = 0, scope = "public" }, exchange.cache)
  end)

  it("gives the modern era ttlMs and cacheScope from the hints", function()
    local res = read("test://fixture/private", MODERN_META)
    assert.equal(5000, res.result.ttlMs)
    assert.equal("private", res.result.cacheScope)
  end)
end)

describe("resources.not_found_error", function()
  it("builds the legacy error by default", function()
    local e = resources.not_found_error("a://b")
    assert.same({ -32002, "Resource not found", { uri = "a://b" } }, { e.code, e.message, e.data })
  end)

  it("builds the modern error from the era's name", function()
    assert.equal(-32602, resources.not_found_error("a://b", "modern").code)
  end)

  it("takes the code from an era module", function()
    assert.equal(-1, resources.not_found_error("a://b", { RESOURCE_NOT_FOUND = -1 }).code)
  end)
end)

describe("resources/subscribe", function()
  local sent, saved

  before_each(function()
    sent = {}
    saved = subscriptions.get_sender()
    subscriptions.set_sender(function(subscriber, message)
      sent[#sent + 1] = { subscriber, message }
    end)
  end)

  after_each(function()
    subscriptions.drop("spec")
    subscriptions.drop("other")
    subscriptions.set_sender(saved)
  end)

  it("answers {} and records the subscription", function()
    local res = dispatch("resources/subscribe", { uri = "test://fixture/counter" })
    assert.same({}, res.result)
    assert.is_true(subscriptions.is_subscribed("spec", "test://fixture/counter"))
  end)

  it("accepts a URI a template serves", function()
    assert.same({}, dispatch("resources/subscribe", { uri = "test://fixture/items/7" }).result)
  end)

  it("refuses an unknown URI with the not-found error", function()
    assert.equal(-32002, dispatch("resources/subscribe", { uri = "nope://x" }).error.code)
  end)

  it("refuses a connection that cannot receive notifications", function()
    local res = dispatch("resources/subscribe", { uri = "test://fixture/counter" }, { generation = gen })
    assert.equal(-32600, res.error.code)
  end)

  it("sends notifications/resources/updated to subscribers of that URI only", function()
    dispatch("resources/subscribe", { uri = "test://fixture/counter" })
    dispatch("resources/subscribe", { uri = "test://fixture/text" }, { subscriber = "other" })
    assert.equal(1, moonmcp.resources.notify_updated("test://fixture/counter"))
    assert.same({ { "spec", { jsonrpc = "2.0", method = "notifications/resources/updated",
      params = { uri = "test://fixture/counter" } } } }, sent)
  end)

  it("notifies from a tool through moonmcp.resources.notify_updated", function()
    dispatch("resources/subscribe", { uri = "test://fixture/counter" })
    local res = dispatch("tools/call", { name = "fx_bump_counter", arguments = {} })
    assert.equal("1", res.result.content[1].text)
    assert.equal("test://fixture/counter", sent[1][2].params.uri)
  end)

  it("stops notifying after resources/unsubscribe", function()
    dispatch("resources/subscribe", { uri = "test://fixture/counter" })
    assert.same({}, dispatch("resources/unsubscribe", { uri = "test://fixture/counter" }).result)
    assert.equal(0, moonmcp.resources.notify_updated("test://fixture/counter"))
    assert.same({}, sent)
  end)

  it("answers {} to unsubscribing from something never subscribed", function()
    assert.same({}, dispatch("resources/unsubscribe", { uri = "test://fixture/text" }).result)
  end)

  it("forgets a dropped subscriber", function()
    dispatch("resources/subscribe", { uri = "test://fixture/counter" })
    subscriptions.drop("spec")
    assert.equal(0, subscriptions.notify_updated("test://fixture/counter"))
  end)

  it("tells on_updated listeners about every update", function()
    local heard
    local function listener(uri)
      heard = heard or uri
    end
    subscriptions.on_updated(listener)
    subscriptions.notify_updated("test://fixture/text")
    subscriptions.off_updated(listener)
    assert.equal("test://fixture/text", heard)
  end)

  it("keeps notifying the others when one delivery fails", function()
    subscriptions.set_sender(function(subscriber)
      if subscriber == "spec" then
        error("gone")
      end
      sent[#sent + 1] = subscriber
    end)
    subscriptions.subscribe("spec", "x://y")
    subscriptions.subscribe("other", "x://y")
    require("moonmcp.log").set_level("critical")
    local n = subscriptions.notify_updated("x://y")
    require("moonmcp.log").set_level("info")
    assert.equal(1, n)
    assert.same({ "other" }, sent)
  end)

  it("delivers through the host's legacy listener with the subscriber's key by default", function()
    local notify = require "moonmcp.notify"
    subscriptions.set_sender(saved)
    local sink = notify.add { era = "legacy", key = "spec", send = function(msg) sent[#sent + 1] = msg end }
    dispatch("resources/subscribe", { uri = "test://fixture/counter" })
    moonmcp.resources.notify_updated("test://fixture/counter")
    notify.remove(sink)
    assert.same({ { jsonrpc = "2.0", method = "notifications/resources/updated",
      params = { uri = "test://fixture/counter" } } }, sent)
  end)

  it("limits how many URIs one subscriber watches", function()
    local max = subscriptions.MAX_PER_SUBSCRIBER
    subscriptions.MAX_PER_SUBSCRIBER = 1
    subscriptions.subscribe("spec", "x://1")
    local ok, err = subscriptions.subscribe("spec", "x://2")
    subscriptions.MAX_PER_SUBSCRIBER = max
    assert.is_nil(ok)
    assert.matches("too many", err)
  end)
end)

describe("loading resources and templates", function()
  local function load(script)
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write(script)
    f:close()
    local g, errors = loader.load { path }
    os.remove(path)
    return g, errors and loader.format_errors(errors)
  end

  it("refuses a resource key that is not an absolute URI", function()
    local _, err = load 'return { resources = { ["motd"] = { read = print } } }'
    assert.matches("must be an absolute URI", err)
  end)

  it("sends a URI with variables to templates", function()
    local _, err = load 'return { resources = { ["x://{id}"] = { read = print } } }'
    assert.matches("belongs in templates", err)
  end)

  it("refuses a resource without a read function", function()
    local _, err = load 'return { resources = { ["x://a"] = { name = "a" } } }'
    assert.matches("read must be a function", err)
  end)

  it("refuses an invalid template with the parser's message", function()
    local _, err = load 'return { templates = { ["x://{id"] = { read = print } } }'
    assert.matches("unclosed", err)
  end)

  it("refuses a completer for a variable the template does not have", function()
    local _, err = load 'return { templates = { ["x://{id}"] = { read = print, complete = { name = { "a" } } } } }'
    assert.matches("complete.name: no such variable", err)
  end)

  it("refuses an annotation audience other than user and assistant", function()
    local _, err = load [[return { resources = { ["x://a"] = {
      read = print, annotations = { audience = { "bot" } } } } }]]
    assert.matches("audience", err)
  end)

  it("refuses a negative ttl_ms", function()
    local _, err = load 'return { resources = { ["x://a"] = { read = print, ttl_ms = -1 } } }'
    assert.matches("ttl_ms", err)
  end)
end)

-- moonmcp.paginate: order, cursor round trip, invalid and stale cursors, page size,
-- caching hints.
local paginate = require "moonmcp.paginate"
local base64 = require "moonmcp.base64"

local function section(keys, defs)
  local s = {}
  for _, k in ipairs(keys) do
    s[k] = { name = k, def = (defs and defs[k]) or {} }
  end
  return s
end

local function name_of(entry)
  return entry.name
end

local function page(s, cursor, exchange)
  return paginate.page(s, "tools", cursor, name_of, exchange)
end

local function raised(fn)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  return err
end

describe("moonmcp.paginate", function()
  after_each(function()
    paginate.set_page_size(paginate.DEFAULT_PAGE_SIZE)
  end)

  it("returns every item sorted bytewise, without a cursor, when they fit", function()
    local items, cursor = page(section { "b", "a", "C", "aa" })
    assert.same({ "C", "a", "aa", "b" }, items)
    assert.is_nil(cursor)
  end)

  it("returns an empty JSON array for an empty list", function()
    local items = page({})
    assert.same({}, items)
    assert.equal("[]", require("moonmcp.json").encode(items))
  end)

  it("continues after the cursor's key, page by page", function()
    paginate.set_page_size(2)
    local s = section { "a", "b", "c", "d", "e" }
    local p1, c1 = page(s)
    local p2, c2 = page(s, c1)
    local p3, c3 = page(s, c2)
    assert.same({ { "a", "b" }, { "c", "d" }, { "e" } }, { p1, p2, p3 })
    assert.is_string(c1)
    assert.is_nil(c3)
  end)

  it("gives no cursor when the last page is exactly full", function()
    paginate.set_page_size(2)
    local _, c1 = page(section { "a", "b", "c", "d" })
    local _, c2 = page(section { "a", "b", "c", "d" }, c1)
    assert.is_nil(c2)
  end)

  it("treats a JSON null cursor as the first page", function()
    assert.same({ "a" }, (page(section { "a" }, require("moonmcp.json").null)))
  end)

  it("makes cursors that are URL-safe text", function()
    paginate.set_page_size(1)
    local _, c = page(section { "a/b?c", "d" })
    assert.matches("^[%w_%-]+$", c)
  end)

  it("refuses a cursor that is not one of ours with -32602", function()
    local err = raised(function() page(section { "a" }, "bm9wZQ") end)
    assert.same({ -32602, "invalid cursor" }, { err.code, err.message })
  end)

  it("refuses a non-string cursor with -32602", function()
    assert.equal(-32602, raised(function() page(section { "a" }, 5) end).code)
  end)

  it("refuses an empty cursor with -32602", function()
    assert.equal(-32602, raised(function() page(section { "a" }, "") end).code)
  end)

  it("refuses a cursor from a list that has changed", function()
    paginate.set_page_size(1)
    local _, c = page(section { "a", "b" })
    local err = raised(function() page(section { "a", "b", "c" }, c) end)
    assert.equal(-32602, err.code)
    assert.matches("changed", err.message)
  end)

  it("refuses a cursor of another kind of list", function()
    paginate.set_page_size(1)
    local s = section { "a", "b" }
    local _, c = page(s)
    assert.equal(-32602, raised(function() paginate.page(s, "prompts", c, name_of) end).code)
  end)

  it("accepts a cursor from an equal list of another generation", function()
    paginate.set_page_size(1)
    local _, c = page(section { "a", "b" })
    assert.same({ "b" }, (page(section { "a", "b" }, c)))
  end)

  it("continues after a key that is no longer there in a forged cursor", function()
    local s = section { "a", "c" }
    local forged = base64.encode_url("1:" .. paginate.tag(s, "tools") .. ":b")
    assert.same({ "c" }, (page(s, forged)))
  end)

  it("refuses a page size that is not a positive integer", function()
    assert.has_error(function() paginate.set_page_size(0) end)
    assert.has_error(function() paginate.set_page_size(1.5) end)
  end)

  it("sets the list caching hints on the exchange", function()
    local exchange = {}
    page(section { "a" }, nil, exchange)
    assert.same({ ttl_ms = paginate.cache_defaults.ttl_ms, scope = paginate.cache_defaults.scope }, exchange.cache)
  end)

  it("makes every page private when any item of the list is private", function()
    paginate.set_page_size(1)
    local s = section({ "a", "b" }, { b = { cache_scope = "private" } })
    local exchange = {}
    page(s, nil, exchange)
    assert.equal("private", exchange.cache.scope)
  end)

  it("changes the list caching defaults", function()
    local saved = paginate.cache_defaults
    paginate.set_cache_defaults { ttl_ms = 1234 }
    local now = paginate.cache_defaults
    paginate.cache_defaults = saved
    assert.same({ ttl_ms = 1234, scope = saved.scope }, now)
  end)

  it("refuses an invalid caching default", function()
    assert.has_error(function() paginate.set_cache_defaults { scope = "shared" } end)
    assert.has_error(function() paginate.set_cache_defaults { ttl_ms = -1 } end)
  end)
end)

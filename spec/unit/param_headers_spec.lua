-- Mcp-Param-{Name} headers (x-mcp-header): declarations checked at load, values checked
-- against the body on modern HTTP tools/call.
local ph = require "moonmcp.param_headers"

local function schema(props)
  return { type = "object", properties = props }
end

describe("param_headers.collect", function()
  it("finds annotated properties, nested ones through properties", function()
    local list = assert(ph.collect(schema {
      region = { type = "string", ["x-mcp-header"] = "Region" },
      opts = { type = "object", properties = { dry = { type = "boolean", ["x-mcp-header"] = "Dry-Run" } } },
    }))
    assert.same(2, #list)
    assert.same({ "opts", "dry" }, list[1].path)
    assert.same("mcp-param-region", list[2].header)
  end)

  it("refuses a number parameter", function()
    assert.is_nil((ph.collect(schema { x = { type = "number", ["x-mcp-header"] = "X" } })))
  end)

  it("refuses a name that is not an HTTP token", function()
    assert.is_nil((ph.collect(schema { x = { type = "string", ["x-mcp-header"] = "Bad Name" } })))
  end)

  it("refuses a duplicate, case-insensitively", function()
    assert.is_nil((ph.collect(schema {
      a = { type = "string", ["x-mcp-header"] = "Region" },
      b = { type = "string", ["x-mcp-header"] = "region" },
    })))
  end)
end)

describe("param_headers.check", function()
  local list = assert(ph.collect(schema {
    region = { type = "string", ["x-mcp-header"] = "Region" },
    count = { type = "integer", ["x-mcp-header"] = "Count" },
  }))

  it("accepts matching headers", function()
    assert.is_true(ph.check(list, { region = "us-west1", count = 42 },
      { ["mcp-param-region"] = "us-west1", ["mcp-param-count"] = "42.0" }))
  end)

  it("decodes the base64 form", function()
    assert.is_true(ph.check(list, { region = "Hello, 世界" },
      { ["mcp-param-region"] = "=?base64?SGVsbG8sIOS4lueVjA==?=" }))
  end)

  it("refuses a missing header when the body has the value", function()
    assert.is_nil((ph.check(list, { region = "x" }, {})))
  end)

  it("refuses a mismatch", function()
    assert.is_nil((ph.check(list, { region = "x" }, { ["mcp-param-region"] = "y" })))
  end)

  it("expects no header when the value is absent", function()
    assert.is_true(ph.check(list, {}, {}))
  end)
end)

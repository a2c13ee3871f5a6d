-- The bundled example tools, tested through the real protocol layer with moonmcp.testing.
local testing = require "moonmcp.testing"

describe("example tools", function()
  local c

  before_each(function()
    c = testing.client { paths = { "scripts/examples" } }
  end)

  it("greets by name", function()
    local result = c:call_tool("greet", { name = "Ada" })
    assert.equal("Hello, Ada!", testing.text(result))
  end)

  it("logs the greeting to the client", function()
    local _, info = c:call_tool("greet", { name = "Ada" })
    assert.equal("greeting", info.logs[1].data.message)
  end)

  it("converts units", function()
    local result = c:call_tool("convert_units", { value = 1, from = "mi", to = "km" })
    assert.equal(1.609344, result.structuredContent.value)
  end)

  it("refuses to convert across dimensions", function()
    local result = c:call_tool("convert_units", { value = 1, from = "kg", to = "km" })
    assert.is_true(result.isError)
    assert.matches("cannot convert kg", testing.text(result))
  end)

  it("rejects arguments that break the schema", function()
    local result = c:call_tool("convert_units", { value = "one", from = "kg", to = "g" })
    assert.is_true(result.isError)
    assert.matches("invalid arguments: /value", testing.text(result))
  end)

  it("tells the time in a zone, in the stateless era too", function()
    local modern = testing.client { era = "modern" }
    local result = modern:call_tool("current_time", { zone = "UTC" })
    assert.equal("+00:00", result.structuredContent.offset)
  end)
end)

-- Script loading: the script contract, validation, errors with file and line.
local loader = require "moonmcp.loader"
local json = require "moonmcp.json"

describe("loader", function()
  it("loads every script of a directory", function()
    local gen = assert(loader.load { "spec/fixtures/scripts" })
    assert.is_table(gen.tools.echo)
    assert.is_function(gen.tools.echo.def.handler)
  end)

  it("reports a syntax error with file and line", function()
    local gen, errors = loader.load { "spec/fixtures/broken/syntax.lua" }
    assert.is_nil(gen)
    assert.matches("spec/fixtures/broken/syntax.lua:4:", loader.format_errors(errors))
  end)

  it("reports a missing path", function()
    local gen, errors = loader.load { "spec/fixtures/nope" }
    assert.is_nil(gen)
    assert.matches("spec/fixtures/nope", loader.format_errors(errors))
  end)

  it("keeps an empty required list an array in inputSchema", function()
    local dir = os.tmpname()
    os.remove(dir)
    local f = assert(io.open(dir .. ".lua", "w"))
    f:write([[return { tools = { t = { input = { type = "object", properties = {}, required = {} },
      handler = function() return "ok" end } } }]])
    f:close()
    local gen = assert(loader.load { dir .. ".lua" })
    os.remove(dir .. ".lua")
    local text = json.encode(gen.tools.t.input_schema)
    assert.matches('"required":%[%]', text)
    assert.matches('"properties":{}', text)
  end)

  for name, script in pairs {
    ["a handler that is not a function"] = 'return { tools = { t = { handler = 1 } } }',
    ["a bad tool name"] = 'return { tools = { ["no spaces"] = { handler = function() end } } }',
    ["an input schema that is not an object schema"] =
      'return { tools = { t = { input = { type = "string" }, handler = function() end } } }',
    ["an invalid regex in a schema"] = 'return { tools = { t = { input = { type = "object", properties = '
      .. '{ a = { type = "string", pattern = "(" } } }, handler = function() end } } }',
    ["an unknown section"] = 'return { toolz = {} }',
    ["a script that returns nothing"] = 'local x = 1',
  } do
    it("refuses " .. name, function()
      local path = os.tmpname() .. ".lua"
      local f = assert(io.open(path, "w"))
      f:write(script)
      f:close()
      local gen, errors = loader.load { path }
      os.remove(path)
      assert.is_nil(gen)
      assert.matches(path:gsub("%p", "%%%0"), loader.format_errors(errors))
    end)
  end
end)

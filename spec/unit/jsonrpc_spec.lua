-- The JSON-RPC 2.0 envelope: classification, exact ids, error codes.
local jsonrpc = require "moonmcp.jsonrpc"
local json = require "moonmcp.json"
local inproc = require "helpers.inproc"

describe("jsonrpc.parse", function()
  it("classifies a request", function()
    local msg, kind = jsonrpc.parse('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert.same("request", kind)
    assert.same(1, msg.id)
  end)

  it("classifies a notification", function()
    local _, kind = jsonrpc.parse('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert.same("notification", kind)
  end)

  it("classifies a client response", function()
    local _, kind = jsonrpc.parse('{"jsonrpc":"2.0","id":"s-1","result":{}}')
    assert.same("response", kind)
  end)

  it("answers malformed JSON with -32700", function()
    local msg, code, message = jsonrpc.parse('{"jsonrpc":')
    assert.is_nil(msg)
    assert.same(-32700, code)
    assert.matches("parse error", message)
  end)

  it("refuses a batch with -32600", function()
    local _, code, message = jsonrpc.parse('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    assert.same(-32600, code)
    assert.matches("batch", message)
  end)

  it("refuses a wrong jsonrpc version with -32600 and keeps the id", function()
    local _, code, _, id = jsonrpc.parse('{"jsonrpc":"1.0","id":7,"method":"ping"}')
    assert.same(-32600, code)
    assert.same(7, id)
  end)

  it("refuses a fractional id", function()
    local _, code = jsonrpc.parse('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
    assert.same(-32600, code)
  end)

  it("refuses array params", function()
    local _, code = jsonrpc.parse('{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}')
    assert.same(-32600, code)
  end)
end)

describe("ids", function()
  setup(function()
    inproc.load { "spec/fixtures/scripts" }
  end)

  for _, text in ipairs { "0", "-1", "9007199254740992", "9007199254740991", '"abc"', '""', '"9007199254740993"' } do
    it("echoes id " .. text .. " exactly", function()
      local msg = assert(jsonrpc.parse('{"jsonrpc":"2.0","id":' .. text .. ',"method":"ping"}'))
      local res = inproc.call(msg)
      assert.matches('"id":' .. text:gsub("%-", "%%-") .. "[,}]", json.encode(res))
    end)
  end
end)

describe("error codes", function()
  setup(function()
    inproc.load { "spec/fixtures/scripts" }
  end)

  it("-32601 for an unknown method", function()
    local res = inproc.call { jsonrpc = "2.0", id = 1, method = "no/such" }
    assert.same(-32601, res.error.code)
  end)

  it("-32602 for an unknown tool", function()
    local res = inproc.call(inproc.tool("no_such_tool", {}))
    assert.same(-32602, res.error.code)
  end)

  it("-32602 for initialize without a protocolVersion", function()
    local res = inproc.call { jsonrpc = "2.0", id = 1, method = "initialize", params = {} }
    assert.same(-32602, res.error.code)
  end)
end)

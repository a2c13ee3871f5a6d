-- Specs for moonmcp.tcp (core/ltcp.c), against servers started by the spec itself.
local tcp = require "moonmcp.tcp"
local core = require "moonmcp.core"
local moonmcp = require "moonmcp"
local leak = require "helpers.leak"

-- An echo server: echoes what arrives until the peer closes.
local function echo_server()
  return assert(tcp.listen("127.0.0.1", 0, function(sock)
    while true do
      local data = sock:read_some()
      if not data then
        return
      end
      sock:write(data)
    end
  end))
end

-- A server that sends `payload` then closes.
local function send_server(payload)
  return assert(tcp.listen("127.0.0.1", 0, function(sock)
    sock:write(payload)
  end))
end

describe("tcp", function()
  it("connects, writes and reads back", function()
    local srv = echo_server()
    local sock = assert(tcp.connect("127.0.0.1", srv:port()))
    assert.is_true(sock:write("hello"))
    assert.equal("hello", sock:read(5))
    sock:close()
    srv:close()
  end)

  it("resolves names (localhost)", function()
    local srv = echo_server()
    local sock = assert(tcp.connect("localhost", srv:port()))
    assert.is_true(sock:write("x"))
    assert.equal("x", sock:read(1))
    sock:close()
    srv:close()
  end)

  it("reads lines without \\n and \\r", function()
    local srv = send_server("one\r\ntwo\nthree")
    local sock = assert(tcp.connect("127.0.0.1", srv:port()))
    assert.equal("one", sock:read_line())
    assert.equal("two", sock:read_line())
    assert.same({ nil, "closed", "three" }, { sock:read_line() })
    sock:close()
    srv:close()
  end)

  it("returns a partial read when the peer closes", function()
    local srv = send_server("abc")
    local sock = assert(tcp.connect("127.0.0.1", srv:port()))
    assert.same({ nil, "closed", "abc" }, { sock:read(10) })
    sock:close()
    srv:close()
  end)

  it("reads everything until close", function()
    local big = ("0123456789"):rep(100000)
    local srv = send_server(big)
    local sock = assert(tcp.connect("127.0.0.1", srv:port()))
    assert.equal(big, sock:read_all())
    sock:close()
    srv:close()
  end)

  it("read_some returns nil, closed at the end", function()
    local srv = send_server("")
    local sock = assert(tcp.connect("127.0.0.1", srv:port()))
    assert.same({ nil, "closed" }, { sock:read_some() })
    sock:close()
    srv:close()
  end)

  it("times out a read and keeps the buffered bytes", function()
    local srv = assert(tcp.listen("127.0.0.1", 0, function(sock)
      sock:write("ab")
      moonmcp.sleep(0.2)
      sock:write("cd")
      sock:read_some()
    end))
    local sock = assert(tcp.connect("127.0.0.1", srv:port()))
    sock:settimeout(0.05)
    assert.same({ nil, "timeout" }, { sock:read(4) })
    assert.equal("abcd", sock:read(4, 2))
    sock:close()
    srv:close()
  end)

  it("fails to connect to a closed port", function()
    local srv = echo_server()
    local port = srv:port()
    srv:close()
    local sock, err = tcp.connect("127.0.0.1", port)
    assert.is_nil(sock)
    assert.equal("connection refused", err)
  end)

  it("fails on an unknown name", function()
    local sock, err = tcp.connect("no-such-host.invalid", 80, { timeout = 5 })
    assert.is_nil(sock)
    assert.is_string(err)
  end)

  it("raises on misuse", function()
    assert.has_error(function()
      tcp.connect("127.0.0.1", 0)
    end)
    assert.has_error(function()
      tcp.connect(nil, 80)
    end)
    assert.has_error(function()
      tcp.listen("example.com", 0, function() end)
    end)
  end)

  it("reports a port in use", function()
    local srv = echo_server()
    local srv2, err = tcp.listen("127.0.0.1", srv:port(), function() end)
    assert.is_nil(srv2)
    assert.matches("address already in use", err)
    srv:close()
  end)

  it("raises when a closed socket is used", function()
    local srv = echo_server()
    local sock = assert(tcp.connect("127.0.0.1", srv:port()))
    sock:close()
    assert.has_error(function()
      sock:write("x")
    end)
    srv:close()
  end)

  it("wakes a parked reader with closed when the socket is closed", function()
    local srv = echo_server()
    local sock = assert(tcp.connect("127.0.0.1", srv:port()))
    local result
    core.spawn(function()
      result = { sock:read_some() }
    end)
    moonmcp.sleep(0.01)
    sock:close()
    moonmcp.sleep(0.01)
    assert.same({ nil, "closed" }, result)
    srv:close()
  end)

  it("serves many connections concurrently", function()
    local srv = echo_server()
    local done, n = 0, 50
    for i = 1, n do
      core.spawn(function()
        local sock = assert(tcp.connect("127.0.0.1", srv:port()))
        sock:write("msg" .. i .. "\n")
        assert(sock:read_line() == "msg" .. i)
        sock:close()
        done = done + 1
      end)
    end
    local deadline = core.clock() + 5
    while done < n and core.clock() < deadline do
      moonmcp.sleep(0.01)
    end
    assert.equal(n, done)
    srv:close()
  end)

  it("does not leak with many connections and cancellations", function()
    local srv = echo_server()
    local base = leak.baseline()
    local port = srv:port()
    local finished = 0
    local N = leak.ops(2000)
    for i = 1, N do
      local id = core.spawn(pcall, function()
        local sock = tcp.connect("127.0.0.1", port)
        if sock then
          sock:write("x")
          sock:read(1)
          if i % 5 == 0 then
            sock:read(1) -- parks until cancelled
          end
          sock:close()
        end
        finished = finished + 1
      end)
      if i % 5 == 0 or i % 7 == 0 then
        core.spawn(function()
          moonmcp.sleep(0.001 * (i % 3))
          core.cancel(id)
        end)
      end
      if i % 100 == 0 then
        moonmcp.sleep(0.005)
      end
    end
    leak.check(base, 5)
    srv:close()
  end)
end)

-- Specs for moonmcp.http (core/lhttp_client.c), against peers the spec starts: a tiny HTTP
-- server made with moonmcp.tcp, and `openssl s_server` with a self-signed certificate.
local http = require "moonmcp.http"
local json = require "moonmcp.json"
local core = require "moonmcp.core"
local exec = require "moonmcp.exec"
local tcp = require "moonmcp.tcp"
local moonmcp = require "moonmcp"
local peer_lib = require "helpers.http_peer"
local leak = require "helpers.leak"

describe("http client", function()
  local peer

  setup(function()
    peer = peer_lib.start {
      ["/hello"] = function()
        return 200, { ["Content-Type"] = "text/plain" }, "hi"
      end,
      ["/echo"] = function(req)
        return 200, { ["Content-Type"] = "application/json" },
          json.encode { method = req.method, body = req.body, x = req.headers["x-test"] or json.null }
      end,
      ["/redirect"] = function()
        return 302, { Location = "/hello" }, ""
      end,
      ["/loop"] = function()
        return 302, { Location = "/loop" }, ""
      end,
      ["/cookies"] = function()
        return 200, { ["Set-Cookie"] = { "a=1", "b=2" } }, ""
      end,
      ["/slow"] = function()
        moonmcp.sleep(1)
        return 200, {}, "late"
      end,
      ["/big"] = function()
        return 200, {}, ("z"):rep(2000000)
      end,
    }
  end)

  teardown(function()
    peer.close()
  end)

  it("gets a body, a status and lowercase headers", function()
    local r = assert(http.get(peer.url .. "/hello"))
    assert.equal(200, r.status)
    assert.equal("hi", r.body)
    assert.equal("text/plain", r.headers["content-type"])
  end)

  it("posts a body with headers", function()
    local r = assert(http.post(peer.url .. "/echo", "payload", { headers = { ["X-Test"] = "yes" } }))
    assert.same({ method = "POST", body = "payload", x = "yes" }, json.decode(r.body))
  end)

  it("sends other methods", function()
    local r = assert(http.request { url = peer.url .. "/echo", method = "PUT", body = "b" })
    assert.equal("PUT", json.decode(r.body).method)
  end)

  it("posts large bodies without waiting for 100-continue", function()
    local body = ("y"):rep(3000000)
    local t0 = core.clock()
    local r = assert(http.post(peer.url .. "/echo", body, { timeout = 10 }))
    assert.equal(body, json.decode(r.body).body)
    assert.is_true(core.clock() - t0 < 0.9)
  end)

  it("returns non-2xx statuses as results", function()
    local r = assert(http.get(peer.url .. "/missing"))
    assert.equal(404, r.status)
  end)

  it("follows redirects", function()
    local r = assert(http.get(peer.url .. "/redirect"))
    assert.equal(200, r.status)
    assert.equal("hi", r.body)
    assert.is_nil(r.headers.location)
  end)

  it("does not follow redirects when told not to", function()
    local r = assert(http.get(peer.url .. "/redirect", { follow_redirects = false }))
    assert.equal(302, r.status)
    assert.equal("/hello", r.headers.location)
  end)

  it("stops after max_redirects", function()
    local r, err = http.get(peer.url .. "/loop", { max_redirects = 3 })
    assert.is_nil(r)
    assert.matches("[Rr]edirect", err)
  end)

  it("joins repeated headers", function()
    local r = assert(http.get(peer.url .. "/cookies"))
    assert.equal("a=1, b=2", r.headers["set-cookie"])
  end)

  it("reads large bodies", function()
    local r = assert(http.get(peer.url .. "/big"))
    assert.equal(2000000, #r.body)
  end)

  it("fails on max_body", function()
    local r, err = http.get(peer.url .. "/big", { max_body = 1000 })
    assert.is_nil(r)
    assert.matches("max_body", err)
  end)

  it("times out", function()
    local r, err = http.get(peer.url .. "/slow", { timeout = 0.1 })
    assert.is_nil(r)
    assert.equal("timeout", err)
  end)

  it("reports a refused connection", function()
    local srv = assert(tcp.listen("127.0.0.1", 0, function() end))
    local port = srv:port()
    srv:close()
    local r, err = http.get("http://127.0.0.1:" .. port .. "/")
    assert.is_nil(r)
    assert.is_string(err)
  end)

  it("raises on misuse", function()
    assert.has_error(function()
      http.get("ftp://example.com/")
    end)
    assert.has_error(function()
      http.get(peer.url, { headers = { ["X"] = "a\r\nInjected: 1" } })
    end)
    assert.has_error(function()
      http.request { url = peer.url, method = "get" }
    end)
  end)

  it("cancels a request in flight", function()
    local got
    local id = core.spawn(function()
      got = { pcall(http.get, peer.url .. "/slow") }
    end)
    moonmcp.sleep(0.05)
    core.cancel(id)
    moonmcp.sleep(0.01)
    assert.same({ false, "cancelled" }, got)
  end)

  it("runs requests concurrently", function()
    local t0, done = core.clock(), 0
    for _ = 1, 5 do
      core.spawn(function()
        assert(http.get(peer.url .. "/slow"))
        done = done + 1
      end)
    end
    while done < 5 and core.clock() - t0 < 5 do
      moonmcp.sleep(0.01)
    end
    assert.equal(5, done)
    assert.is_true(core.clock() - t0 < 1.8)
  end)

  it("does not leak with many requests and cancellations", function()
    http.close_idle()
    local base = leak.baseline()
    local done, N = 0, leak.ops(500)
    for i = 1, N do
      local id = core.spawn(function()
        pcall(http.get, peer.url .. "/hello")
        done = done + 1
      end)
      if i % 4 == 0 then
        core.spawn(function()
          moonmcp.sleep(0.001 * (i % 5))
          core.cancel(id)
        end)
      end
      if i % 50 == 0 then
        moonmcp.sleep(0.01)
      end
    end
    local deadline = core.clock() + 10
    while done < N and core.clock() < deadline do
      moonmcp.sleep(0.01)
    end
    assert.equal(N, done)
    moonmcp.sleep(0.05)
    http.close_idle()
    leak.check(base, 5)
  end)

  describe("https", function()
    local dir, server, url

    setup(function()
      dir = assert(exec.run { "mktemp", "-d" }).stdout:gsub("\n$", "")
      local r = assert(exec.run {
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        "-keyout", dir .. "/key.pem", "-out", dir .. "/cert.pem",
        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
      })
      assert(r.code == 0, r.stderr)
      local probe = assert(tcp.listen("127.0.0.1", 0, function() end))
      local port = probe:port()
      probe:close()
      server = assert(exec.spawn {
        "openssl", "s_server", "-accept", "127.0.0.1:" .. port, "-cert", dir .. "/cert.pem",
        "-key", dir .. "/key.pem", "-www", "-quiet", stdin = "null", stdout = "null", stderr = "null",
      })
      url = "https://localhost:" .. port .. "/"
      local deadline = core.clock() + 10
      repeat
        local sock = tcp.connect("127.0.0.1", port)
        if sock then
          sock:close()
          break
        end
        moonmcp.sleep(0.02)
      until core.clock() > deadline
    end)

    teardown(function()
      server:close()
      exec.run { "rm", "-rf", dir }
    end)

    it("rejects a self-signed certificate", function()
      local r, err = http.get(url, { timeout = 5 })
      assert.is_nil(r)
      assert.matches("certificate", err)
    end)

    it("accepts it with cainfo", function()
      local r = assert(http.get(url, { cainfo = dir .. "/cert.pem", timeout = 5 }))
      assert.equal(200, r.status)
    end)

    it("accepts it with insecure = true", function()
      local r = assert(http.get(url, { insecure = true, timeout = 5 }))
      assert.equal(200, r.status)
    end)
  end)
end)

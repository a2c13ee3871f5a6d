-- Specs for moonmcp.dns (core/ldns.c).
local dns = require "moonmcp.dns"
local core = require "moonmcp.core"
local moonmcp = require "moonmcp"
local leak = require "helpers.leak"

describe("dns", function()
  it("resolves localhost", function()
    local addrs = assert(dns.resolve("localhost", { family = "inet" }))
    assert.same({ "127.0.0.1" }, addrs)
  end)

  it("passes addresses through", function()
    assert.same({ "10.1.2.3" }, dns.resolve("10.1.2.3"))
    assert.same({ "::1" }, dns.resolve("::1"))
  end)

  it("returns nil, message for an unknown name", function()
    local addrs, err = dns.resolve("no-such-host.invalid")
    assert.is_nil(addrs)
    assert.is_string(err)
  end)

  it("raises on misuse", function()
    assert.has_error(function()
      dns.resolve(42)
    end)
    assert.has_error(function()
      dns.resolve("localhost", { family = "ipx" })
    end)
  end)

  it("does not leak with many lookups and cancellations", function()
    local base = leak.baseline()
    local done, N = 0, leak.ops(2000)
    for i = 1, N do
      local id = core.spawn(function()
        pcall(dns.resolve, "localhost")
        done = done + 1
      end)
      if i % 3 == 0 then
        core.spawn(function()
          core.cancel(id)
        end)
      end
    end
    local deadline = core.clock() + 10
    while done < N and core.clock() < deadline do
      moonmcp.sleep(0.01)
    end
    assert.equal(N, done)
    leak.check(base, 5)
  end)
end)

-- moonmcp.testing: the in-process client in both eras (tools, prompts, resources,
-- progress, logs, scripted elicitation / sampling / roots), and the virtual clock.
local core = require "moonmcp.core"
local moonmcp = require "moonmcp"
local registry = require "moonmcp.registry"
local testing = require "moonmcp.testing"

local FIXTURE = { "spec/fixtures/authoring" }

describe("moonmcp.testing", function()
  local saved, clock

  before_each(function()
    saved = registry.current()
  end)

  after_each(function()
    if clock then
      clock:restore()
      clock = nil
    end
    registry.set(saved)
  end)

  for _, era in ipairs { "legacy", "modern" } do
    describe("client (" .. era .. " era)", function()
      it("calls a tool and returns its result", function()
        local c = testing.client { paths = FIXTURE, era = era }
        local result = c:call_tool("whoami")
        assert.equal("anonymous", testing.text(result))
      end)

      it("passes request-context fields to the call", function()
        local c = testing.client { paths = FIXTURE, era = era, request = { principal = { name = "ada" } } }
        assert.equal("ada", testing.text((c:call_tool("whoami"))))
      end)

      it("returns an isError result for a tool error", function()
        local c = testing.client { paths = FIXTURE, era = era }
        local result = c:call_tool("countdown", { n = 0 })
        assert.is_true(result.isError)
      end)

      it("returns a protocol error as nil, error", function()
        local c = testing.client { paths = FIXTURE, era = era }
        local result, err = c:call_tool("nope")
        assert.is_nil(result)
        assert.equal(-32602, err.code)
      end)

      it("captures progress and log notifications", function()
        clock = testing.clock()
        local c = testing.client { paths = FIXTURE, era = era }
        local result, info = c:call_tool("countdown", { n = 2 })
        assert.same({ done = 2 }, result.structuredContent)
        assert.same({ 1, 2 }, { info.progress[1].progress, info.progress[2].progress })
        assert.equal("step 2", info.progress[2].message)
        assert.equal("tick", info.logs[1].data.message)
      end)

      it("answers an elicitation by key or message", function()
        local c = testing.client { paths = FIXTURE, era = era, answers = { ["Who are you?"] = { name = "Ada" } } }
        local result, info = c:call_tool("greet_asked")
        assert.equal("Hello, Ada!", testing.text(result))
        assert.equal("elicitation/create", info.asked[1].method)
      end)

      it("answers a declined elicitation", function()
        local c = testing.client { paths = FIXTURE, era = era, answers = { ["Who are you?"] = "decline" } }
        local result = c:call_tool("greet_asked")
        assert.is_true(result.isError)
        assert.matches("decline", testing.text(result))
      end)

      it("answers sampling with a string", function()
        local c = testing.client { paths = FIXTURE, era = era, answers = {
          [era == "modern" and "summary" or "sample_1"] = "short" } }
        assert.equal("summary: short", testing.text((c:call_tool("summarize", { text = "long text" }))))
      end)

      it("answers roots with a list", function()
        local c = testing.client { paths = FIXTURE, era = era, answers = {
          [era == "modern" and "roots_1" or "roots_1"] = { { uri = "file:///a" }, { uri = "file:///b" } } } }
        assert.equal("file:///a,file:///b", testing.text((c:call_tool("list_roots"))))
      end)

      it("gets a prompt", function()
        local c = testing.client { paths = FIXTURE, era = era }
        local result = c:get_prompt("review", { code = "x = 1" })
        assert.equal("Please review:\nx = 1", result.messages[1].content.text)
      end)

      it("reads a resource", function()
        local c = testing.client { paths = FIXTURE, era = era }
        local result = c:read_resource("memo://motd")
        assert.equal("be kind", result.contents[1].text)
      end)

      it("lists tools, prompts and resources", function()
        local c = testing.client { paths = FIXTURE, era = era }
        assert.equal(5, #c:list_tools())
        assert.equal("review", c:list_prompts()[1].name)
        assert.equal("memo://motd", c:list_resources()[1].uri)
      end)
    end)
  end

  it("says which question had no answer", function()
    local c = testing.client { paths = FIXTURE, era = "modern" }
    local result, err = c:call_tool("greet_asked")
    assert.is_nil(result)
    assert.matches("no answer for elicitation/create \"who\"", err.message)
  end)

  describe("clock", function()
    it("makes moonmcp.sleep return at once with the virtual time advanced", function()
      clock = testing.clock()
      local c = testing.client { paths = FIXTURE }
      local started = core.clock()
      c:call_tool("countdown", { n = 3 })
      assert.equal(30, clock:now())
      assert.is_true(core.clock() - started < 1)
    end)

    it("wakes concurrent sleepers in deadline order", function()
      clock = testing.clock()
      local order = {}
      local done = 0
      for _, s in ipairs { 3, 1, 2 } do
        core.spawn(function()
          moonmcp.sleep(s)
          order[#order + 1] = s
          done = done + 1
        end)
      end
      local deadline = core.clock() + 2
      while done < 3 and core.clock() < deadline do
        clock.real(0.001)
      end
      assert.same({ 1, 2, 3 }, order)
      assert.equal(3, clock:now())
    end)

    it("puts the real sleep back on restore", function()
      local real = moonmcp.sleep
      clock = testing.clock()
      assert.not_equal(real, moonmcp.sleep)
      clock:restore()
      assert.equal(real, moonmcp.sleep)
    end)
  end)
end)

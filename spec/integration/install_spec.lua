-- The binary finds its runtime and bundled scripts from the build tree and, after
-- `cmake --install`, from the install prefix.
local exec = require "moonmcp.exec"
local json = require "moonmcp.json"
local server = require "helpers.server"

local LIST = json.encode { jsonrpc = "2.0", id = 1, method = "tools/list" } .. "\n"

local function tools_of(stdout)
  local msg = assert(json.decode(stdout:match("^[^\n]+")))
  local names = {}
  for _, t in ipairs(msg.result.tools) do
    names[#names + 1] = t.name
  end
  return names
end

describe("finding the runtime", function()
  it("serves the bundled examples from the build tree", function()
    local res = assert(exec.run { server.bin, "serve", "--stdio", stdin = LIST, timeout = 20 })
    assert.same(0, res.code)
    assert.truthy(#tools_of(res.stdout) > 0)
  end)

  it("serves the bundled examples after cmake --install", function()
    local prefix = os.tmpname()
    os.remove(prefix)
    local build_dir = server.bin:match("^(.*)/[^/]+$") or "."
    local inst = assert(exec.run { "cmake", "--install", build_dir, "--prefix", prefix, timeout = 60 })
    assert.same(0, inst.code, inst.stderr)
    -- run from an unrelated directory, so nothing can be found relative to the sources
    local res = assert(exec.run { prefix .. "/bin/moonmcp", "serve", "--stdio", stdin = LIST, cwd = "/",
      env = { MOONMCP_HOME = false }, timeout = 20 })
    exec.run { "rm", "-rf", prefix }
    assert.same(0, res.code, res.stderr)
    assert.truthy(#tools_of(res.stdout) > 0)
  end)
end)

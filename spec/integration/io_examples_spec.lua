-- The bundled I/O examples, served by the real binary: fetch a page's title (moonmcp.http
-- against a local server made here), run a command in a configured directory
-- (moonmcp.exec), search files under a root (moonmcp.fs + PCRE2).
local server = require "helpers.server"
local tcp = require "moonmcp.tcp"
local fs = require "moonmcp.fs"

local function call(p, id, name, args)
  p:send { jsonrpc = "2.0", id = id, method = "tools/call", params = { name = name, arguments = args } }
  local msg = assert(p:recv(15))
  assert.same(id, msg.id)
  return msg.result
end

describe("I/O examples", function()
  local dir, web, p
  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(fs.mkdir(dir))
    assert(fs.write(dir .. "/notes.txt", "first line\nthe needle is here\nlast line\n"))
    web = assert(tcp.listen("127.0.0.1", 0, function(sock)
      repeat
        local line = sock:read_line()
      until not line or line == ""
      local body = "<html><head><title>Hello &amp; welcome</title></head><body>hi</body></html>"
      sock:write("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " .. #body ..
        "\r\nConnection: close\r\n\r\n" .. body)
      sock:close()
    end))
    p = server.stdio({ "scripts/examples" }, { env = { MOONMCP_RUN_DIR = dir, MOONMCP_FILES_ROOT = dir } })
  end)
  teardown(function()
    p:close_stdin()
    p:wait()
    web:close()
    fs.remove(dir, { recursive = true })
  end)

  it("fetch_title reports the status and the title", function()
    local r = call(p, 1, "fetch_title", { url = "http://127.0.0.1:" .. web:port() .. "/" })
    assert.same(200, r.structuredContent.status)
    assert.same("Hello & welcome", r.structuredContent.title)
  end)

  it("fetch_title turns an unreachable host into an error result", function()
    local r = call(p, 2, "fetch_title", { url = "http://127.0.0.1:1/", timeout = 2 })
    assert.is_true(r.isError)
  end)

  it("run_command runs in the configured directory", function()
    local r = call(p, 3, "run_command", { program = "ls" })
    assert.same(0, r.structuredContent.code)
    assert.matches("notes.txt", r.structuredContent.stdout)
  end)

  it("run_command refuses programs outside its list", function()
    local r = call(p, 4, "run_command", { program = "rm", args = { "-rf", dir } })
    assert.is_true(r.isError)
    assert.truthy(fs.exists(dir .. "/notes.txt"))
  end)

  it("run_command refuses arguments that leave the directory", function()
    local r = call(p, 7, "run_command", { program = "cat", args = { "/etc/hostname" } })
    assert.is_true(r.isError)
    r = call(p, 8, "run_command", { program = "ls", args = { "../.." } })
    assert.is_true(r.isError)
  end)

  it("search_files finds the matching lines under the root", function()
    local r = call(p, 5, "search_files", { pattern = "needle\\s+is" })
    assert.same({ { file = "notes.txt", line = 2, text = "the needle is here" } }, r.structuredContent.matches)
  end)

  it("search_files reports a bad regex clearly", function()
    local r = call(p, 6, "search_files", { pattern = "(" })
    assert.is_true(r.isError)
    assert.matches("regex", r.content[1].text)
  end)
end)

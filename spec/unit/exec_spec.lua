-- Specs for moonmcp.exec (core/lexec.c): exec.run and long-lived processes.
local exec = require "moonmcp.exec"
local core = require "moonmcp.core"
local leak = require "helpers.leak"

describe("exec.run", function()
  it("captures stdout, stderr and the exit code", function()
    local r = assert(exec.run { "sh", "-c", "echo out; echo err >&2; exit 3" })
    assert.same({ code = 3, stdout = "out\n", stderr = "err\n" }, r)
  end)

  it("passes arguments without a shell", function()
    local r = assert(exec.run { "printf", "%s|", "a b", "$HOME", ";ls" })
    assert.equal("a b|$HOME|;ls|", r.stdout)
  end)

  it("runs a command line with shell = true", function()
    local r = assert(exec.run { "echo $0-$1 | tr a-z A-Z", "x", shell = true })
    assert.equal("SH-X\n", r.stdout)
  end)

  it("feeds stdin", function()
    local r = assert(exec.run { "wc", "-c", stdin = ("x"):rep(300000) })
    assert.equal("300000", r.stdout:match("%d+"))
  end)

  it("gives the child an empty stdin by default", function()
    local r = assert(exec.run { "cat" })
    assert.same({ code = 0, stdout = "", stderr = "" }, r)
  end)

  it("adds env to the inherited environment", function()
    local r = assert(exec.run { "sh", "-c", 'echo "$FOO:$HOME"', env = { FOO = "bar" } })
    assert.equal("bar:" .. os.getenv("HOME") .. "\n", r.stdout)
  end)

  it("removes variables set to false", function()
    local r = assert(exec.run { "sh", "-c", 'echo "[$HOME]"', env = { HOME = false } })
    assert.equal("[]\n", r.stdout)
  end)

  it("runs in cwd", function()
    local r = assert(exec.run { "pwd", cwd = "/tmp" })
    assert.equal("/tmp\n", r.stdout)
  end)

  it("reports a signal", function()
    local r = assert(exec.run { "sh", "-c", "kill -KILL $$" })
    assert.equal("SIGKILL", r.signal)
    assert.equal(137, r.code)
  end)

  it("collects large outputs", function()
    local r = assert(exec.run { "head", "-c", "5000000", "/dev/zero" })
    assert.equal(5000000, #r.stdout)
  end)

  it("fails on max_output", function()
    local r, err = exec.run { "head", "-c", "5000000", "/dev/zero", max_output = 1000 }
    assert.is_nil(r)
    assert.matches("max_output", err)
  end)

  it("returns nil, message for a missing program", function()
    local r, err = exec.run { "/no/such/program" }
    assert.is_nil(r)
    assert.equal("/no/such/program: no such file or directory", err)
  end)

  it("raises on misuse", function()
    assert.has_error(function()
      exec.run {}
    end)
    assert.has_error(function()
      exec.run { "ls", env = { 1 } }
    end)
    assert.has_error(function()
      exec.run { "ls", timeout = -1 }
    end)
  end)

  it("times out with SIGTERM", function()
    local t0 = core.clock()
    local r = assert(exec.run { "sleep", "10", timeout = 0.1 })
    assert.is_true(r.timed_out)
    assert.equal("SIGTERM", r.signal)
    assert.is_true(core.clock() - t0 < 2)
  end)

  it("escalates to SIGKILL after the grace period", function()
    local r = assert(exec.run { "sh", "-c", "trap '' TERM; sleep 10", timeout = 0.1, kill_grace = 0.1 })
    assert.is_true(r.timed_out)
    assert.equal("SIGKILL", r.signal)
  end)

  it("kills the child when the call is cancelled", function()
    local dir = os.tmpname()
    local id = core.spawn(pcall, exec.run, { "sh", "-c", "echo $$ > " .. dir .. "; exec sleep 30" })
    local pid
    for _ = 1, 200 do
      local f = io.open(dir)
      pid = f and f:read("*n")
      if f then
        f:close()
      end
      if pid then
        break
      end
      require("moonmcp").sleep(0.01)
    end
    assert.is_number(pid)
    core.cancel(id)
    local r
    for _ = 1, 200 do
      r = exec.run { "kill", "-0", tostring(pid) }
      if r.code ~= 0 then
        break
      end
      require("moonmcp").sleep(0.01)
    end
    os.remove(dir)
    assert.are_not.equal(0, r.code)
  end)
end)

describe("exec.spawn", function()
  it("reads lines from stdout and stderr", function()
    local p = assert(exec.spawn { "sh", "-c", "echo one; echo two >&2; printf 'three\\r\\nfour'" })
    assert.equal("one", p:read_line(5))
    assert.equal("two", p:read_stderr_line(5))
    assert.equal("three", p:read_line(5))
    assert.same({ nil, "closed", "four" }, { p:read_line(5) })
    assert.same({ 0 }, { p:wait(5) })
    p:close()
  end)

  it("talks to the child through stdin", function()
    local p = assert(exec.spawn { "cat" })
    assert.is_true(p:write("hello\n"))
    assert.equal("hello", p:read_line(5))
    p:close_stdin()
    assert.same({ nil, "closed", "" }, { p:read_line(5) })
    assert.equal(0, p:wait(5))
    p:close()
  end)

  it("times out a read", function()
    local p = assert(exec.spawn { "sleep", "5" })
    assert.same({ nil, "timeout" }, { p:read_line(0.05) })
    assert.same({ nil, "timeout" }, { p:wait(0.05) })
    p:close()
  end)

  it("kills with a signal", function()
    local p = assert(exec.spawn { "sleep", "5" })
    assert.is_true(p:kill("INT"))
    assert.same({ 130, "SIGINT" }, { p:wait(5) })
    p:close()
  end)

  it("lets one call read stderr while another waits for the exit", function()
    local p = assert(exec.spawn { "sh", "-c", "echo a >&2; sleep 0.05; echo b >&2; exit 4" })
    local lines = {}
    core.spawn(function()
      while true do
        local line = p:read_stderr_line()
        if not line then
          return
        end
        lines[#lines + 1] = line
      end
    end)
    assert.same({ 4 }, { p:wait(5) })
    require("moonmcp").sleep(0.02)
    assert.same({ "a", "b" }, lines)
    p:close()
  end)

  it("wakes waiting calls with closed on close", function()
    local p = assert(exec.spawn { "sleep", "5" })
    local got
    core.spawn(function()
      got = { p:read_line() }
    end)
    require("moonmcp").sleep(0.01)
    p:close()
    require("moonmcp").sleep(0.01)
    assert.same({ nil, "closed" }, got)
  end)

  it("raises on a second waiter of the same kind", function()
    local p = assert(exec.spawn { "sleep", "5" })
    core.spawn(pcall, p.wait, p)
    require("moonmcp").sleep(0.01)
    assert.has_error(function()
      p:wait()
    end, "process: busy (another call is waiting on it)")
    p:close()
  end)

  it("raises when used after close", function()
    local p = assert(exec.spawn { "true" })
    p:close()
    assert.has_error(function()
      p:wait()
    end)
  end)

  it("cleans up after garbage collection", function()
    local base = leak.baseline()
    for _ = 1, 20 do
      exec.spawn { "sleep", "5" }
    end
    collectgarbage()
    collectgarbage()
    leak.check(base, 5)
  end)

  it("does not leak descriptors or handles", function()
    local base = leak.baseline()
    for i = 1, leak.ops(200) do
      if i % 3 == 0 then
        local id = core.spawn(pcall, exec.run, { "sleep", "5" })
        require("moonmcp").sleep(0)
        core.cancel(id)
      elseif i % 3 == 1 then
        assert(exec.run { "echo", "x", stdin = "abc" })
      else
        local p = assert(exec.spawn { "cat" })
        p:write("x\n")
        p:read_line(1)
        p:close()
      end
    end
    leak.check(base, 5)
  end)
end)

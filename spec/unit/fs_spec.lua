-- Specs for moonmcp.fs (core/lfs.c), in a temporary directory made by the spec.
local fs = require "moonmcp.fs"
local core = require "moonmcp.core"
local exec = require "moonmcp.exec"
local moonmcp = require "moonmcp"
local leak = require "helpers.leak"

describe("fs", function()
  local dir

  before_each(function()
    dir = assert(exec.run { "mktemp", "-d" }).stdout:gsub("\n$", "")
  end)

  after_each(function()
    exec.run { "rm", "-rf", dir }
  end)

  it("writes and reads a file", function()
    assert.is_true(fs.write(dir .. "/a.txt", "hello\0world"))
    assert.equal("hello\0world", fs.read(dir .. "/a.txt"))
  end)

  it("reads a large file", function()
    local big = ("x"):rep(3000000)
    assert.is_true(fs.write(dir .. "/big", big))
    assert.equal(big, fs.read(dir .. "/big"))
  end)

  it("reads files the kernel reports with size 0", function()
    local data = assert(fs.read("/proc/self/status"))
    assert.matches("Name:", data)
  end)

  it("appends", function()
    fs.write(dir .. "/a", "1")
    assert.is_true(fs.append(dir .. "/a", "2"))
    assert.is_true(fs.append(dir .. "/b", "3"))
    assert.equal("12", fs.read(dir .. "/a"))
    assert.equal("3", fs.read(dir .. "/b"))
  end)

  it("truncates on write", function()
    fs.write(dir .. "/a", "long content")
    fs.write(dir .. "/a", "x")
    assert.equal("x", fs.read(dir .. "/a"))
  end)

  it("returns nil, message for a missing file", function()
    assert.same({ nil, dir .. "/nope: no such file or directory" }, { fs.read(dir .. "/nope") })
  end)

  it("stats files and directories", function()
    fs.write(dir .. "/f", "abc")
    local st = assert(fs.stat(dir .. "/f"))
    assert.equal(3, st.size)
    assert.equal("file", st.type)
    assert.is_number(st.mode)
    assert.is_true(math.abs(st.mtime - core.now()) < 60)
    assert.equal("directory", fs.stat(dir).type)
    assert.is_true(fs.exists(dir .. "/f"))
    assert.is_false(fs.exists(dir .. "/g"))
  end)

  it("lists a directory, sorted", function()
    for _, n in ipairs { "b", "a", "c" } do
      fs.write(dir .. "/" .. n, "")
    end
    fs.mkdir(dir .. "/d")
    assert.same({ "a", "b", "c", "d" }, fs.list(dir))
  end)

  it("makes directories, with parents", function()
    assert.is_true(fs.mkdir(dir .. "/x"))
    assert.is_nil(fs.mkdir(dir .. "/x"))
    assert.is_nil(fs.mkdir(dir .. "/p/q/r"))
    assert.is_true(fs.mkdir(dir .. "/p/q/r", { parents = true }))
    assert.is_true(fs.mkdir(dir .. "/p/q/r", { parents = true }))
    assert.equal("directory", fs.stat(dir .. "/p/q/r").type)
  end)

  it("fails mkdir -p through a file", function()
    fs.write(dir .. "/file", "")
    local ok, err = fs.mkdir(dir .. "/file/sub", { parents = true })
    assert.is_nil(ok)
    assert.matches("not a directory", err)
  end)

  it("removes files, empty directories and trees", function()
    fs.write(dir .. "/f", "")
    assert.is_true(fs.remove(dir .. "/f"))
    fs.mkdir(dir .. "/e")
    assert.is_true(fs.remove(dir .. "/e"))
    fs.mkdir(dir .. "/t/u/v", { parents = true })
    fs.write(dir .. "/t/u/v/w", "")
    local r, err = fs.remove(dir .. "/t")
    assert.is_nil(r)
    assert.matches("not empty", err)
    assert.is_true(fs.remove(dir .. "/t", { recursive = true }))
    assert.same({}, fs.list(dir))
  end)

  it("does not follow symbolic links when removing a tree", function()
    fs.mkdir(dir .. "/keep")
    fs.write(dir .. "/keep/precious", "x")
    fs.mkdir(dir .. "/t")
    exec.run { "ln", "-s", dir .. "/keep", dir .. "/t/link" }
    assert.is_true(fs.remove(dir .. "/t", { recursive = true }))
    assert.equal("x", fs.read(dir .. "/keep/precious"))
  end)

  it("renames", function()
    fs.write(dir .. "/a", "1")
    assert.is_true(fs.rename(dir .. "/a", dir .. "/b"))
    assert.equal("1", fs.read(dir .. "/b"))
    assert.is_false(fs.exists(dir .. "/a"))
  end)

  it("raises on misuse", function()
    assert.has_error(function()
      fs.read(nil)
    end)
    assert.has_error(function()
      fs.write(dir .. "/a", 1)
    end)
    assert.has_error(function()
      fs.read("a\0b")
    end)
  end)

  it("raises cancelled in a cancelled call", function()
    local got
    local id = core.spawn(function()
      got = { pcall(fs.read, "/proc/self/status") }
    end)
    core.cancel(id)
    moonmcp.sleep(0.01)
    assert.same({ false, "cancelled" }, got)
  end)

  it("does not leak with many operations and cancellations", function()
    fs.write(dir .. "/f", "data")
    local base = leak.baseline()
    local done = 0
    local N = leak.ops(10000)
    for i = 1, N do
      local id = core.spawn(function()
        pcall(fs.read, dir .. "/f")
        done = done + 1
      end)
      if i % 3 == 0 then
        core.cancel(id)
      end
      if i % 500 == 0 then
        moonmcp.sleep(0)
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

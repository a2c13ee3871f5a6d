-- spec/helpers/scratch.lua — a scratch directory of script files for reload specs.
--
--   local scratch = require "helpers.scratch"
--   local dir = scratch.new()                  -- a fresh empty directory under /tmp
--   dir:write("a.lua", source)                 -- writes in place (truncate + write)
--   dir:save("a.lua", source)                  -- writes a temporary file, renames it over
--   dir:mkdir("sub"); dir:remove("a.lua"); dir:path("a.lua"); dir:destroy()
local _M = {}

local Dir = {}
Dir.__index = Dir

local function sh_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

function _M.new()
  local path = os.tmpname()
  os.remove(path)
  assert(os.execute("mkdir -p " .. sh_quote(path)) == 0)
  return setmetatable({ root = path }, Dir)
end

function Dir:path(name)
  return name and (self.root .. "/" .. name) or self.root
end

function Dir:write(name, text)
  local f = assert(io.open(self:path(name), "w"))
  f:write(text)
  f:close()
end

--- Saves as editors that rename do: a hidden temporary file renamed over the target.
function Dir:save(name, text)
  local dir, base = self:path(name):match("^(.*)/([^/]*)$")
  local tmp = dir .. "/." .. base .. ".tmp"
  local f = assert(io.open(tmp, "w"))
  f:write(text)
  f:close()
  assert(os.rename(tmp, self:path(name)))
end

function Dir:mkdir(name)
  assert(os.execute("mkdir -p " .. sh_quote(self:path(name))) == 0)
end

function Dir:remove(name)
  os.remove(self:path(name))
end

function Dir:destroy()
  os.execute("rm -rf " .. sh_quote(self.root))
end

--- A script defining one tool `name` that answers `answer` (after `delay` seconds).
function _M.tool(name, answer, opts)
  opts = opts or {}
  return ([[
local moonmcp = require "moonmcp"
return { tools = { [%q] = {
  description = %q,
  handler = function()
    if %s > 0 then moonmcp.sleep(%s) end
    return %q
  end,
} } }
]]):format(name, opts.description or ("tool " .. name), opts.delay or 0, opts.delay or 0, answer)
end

return _M

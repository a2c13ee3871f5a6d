-- moonmcp.state — state that survives reloads: moonmcp.state(name, init).
--
-- Everything a script keeps in its own locals and upvalues belongs to one generation:
-- a reload runs every script again, in a fresh environment, and the new generation
-- starts from scratch. State that must outlive a reload (a cache, a counter, a
-- connection pool) is asked for by name:
--
--   local cache = moonmcp.state("weather.cache", function() return { hits = 0 } end)
--
-- The first call with a name runs init() (default: an empty table) and keeps the table
-- it returns for the life of the process; every later call, in this generation or any
-- later one, returns that same table, without running init again. Names are global to
-- the process: prefix them with your script's name. To start over after changing the
-- shape of the state, use a new name.
local type, error, tostring, pairs = type, error, tostring, pairs

local _M = {}

local states = {}

--- Returns the table kept under name, creating it with init() the first time.
function _M.get(name, init)
  if type(name) ~= "string" or name == "" then
    error("moonmcp.state: name must be a non-empty string", 2)
  end
  local s = states[name]
  if s ~= nil then
    return s
  end
  if init ~= nil and type(init) ~= "function" then
    error("moonmcp.state: init must be a function (it returns the first value)", 2)
  end
  if init then
    s = init()
  else
    s = {}
  end
  if type(s) ~= "table" then
    error(("moonmcp.state(%q): init must return a table, got %s"):format(name, tostring(type(s))), 2)
  end
  states[name] = s
  return s
end

--- Forgets the state kept under name (every name when nil): for specs.
function _M.reset(name)
  if name == nil then
    for k in pairs(states) do
      states[k] = nil
    end
  else
    states[name] = nil
  end
end

--- Whether a state named name exists (for specs).
function _M.exists(name)
  return states[name] ~= nil
end

return _M

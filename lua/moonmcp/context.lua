-- moonmcp.context — context accessors and the per-call context snapshot (DESIGN §2).
--
-- An accessor is { key = "name", capture = fn(request) -> value,
--                  restore = fn(value, ctx), clear = fn(ctx) }.
-- Before a call's coroutine is spawned, snapshot(request) captures every accessor's
-- value from the request context. Inside the coroutine, restore(snapshot) builds the
-- call's own context table: each accessor restores a deep copy of what it captured, so
-- nothing the handler writes reaches the request, another call or a later one. When the
-- call ends, however it ends, clear(accessors, ctx) runs every accessor's clear in
-- reverse order and empties the table.
--
-- Defaults: capture reads request[key]; restore stores a deep copy at ctx[key]; clear
-- removes ctx[key]. The built-in accessors (request id, trace, principal, log fields) are
-- registered by moonmcp.accessors.
local pairs, ipairs, type, error, next, pcall, setmetatable, getmetatable = pairs, ipairs, type, error, next, pcall,
  setmetatable, getmetatable
local table_remove = table.remove
local new_tab = require "table.new"

local _M = {}

-- The list is never changed in place (register and unregister build a new one), so a
-- snapshot can keep the list it was taken with.
local accessors = {}
local builtin = nil -- the accessor register_builtin is registering

local function copy_list(list)
  local c = {}
  for i = 1, #list do
    c[i] = list[i]
  end
  return c
end

local function deep_copy(v, seen)
  if type(v) ~= "table" then
    return v
  end
  seen = seen or {}
  if seen[v] then
    return seen[v]
  end
  local c = {}
  seen[v] = c
  for k, x in pairs(v) do
    c[deep_copy(k, seen)] = deep_copy(x, seen)
  end
  return setmetatable(c, getmetatable(v))
end
_M.copy = deep_copy

--- Registers an accessor (see the top of this file). Registering a key again replaces
--- the earlier accessor in place.
function _M.register(acc)
  if type(acc) ~= "table" or type(acc.key) ~= "string" then
    error("accessor: a table with a string key is required", 2)
  end
  for _, f in ipairs({ "capture", "restore", "clear" }) do
    if acc[f] ~= nil and type(acc[f]) ~= "function" then
      error(("accessor %q: %s must be a function"):format(acc.key, f), 2)
    end
  end
  local key = acc.key
  local entry = {
    key = key,
    trusted = acc == builtin,
    capture = acc.capture or function(request)
      return request[key]
    end,
    restore = acc.restore or function(value, ctx)
      ctx[key] = deep_copy(value)
    end,
    clear = acc.clear or function(ctx)
      ctx[key] = nil
    end,
  }
  local list = copy_list(accessors)
  for i, a in ipairs(list) do
    if a.key == key then
      list[i] = entry
      accessors = list
      return
    end
  end
  list[#list + 1] = entry
  accessors = list
end

--- Registers one of the host's own accessors (moonmcp.accessors): its clear cannot fail,
--- so it runs without a protected call.
function _M.register_builtin(acc)
  builtin = acc
  _M.register(acc)
  builtin = nil
end

--- Removes the accessor registered under key (used by specs and reloads).
function _M.unregister(key)
  local list = copy_list(accessors)
  for i, a in ipairs(list) do
    if a.key == key then
      table_remove(list, i)
      accessors = list
      return
    end
  end
end

--- Captures every accessor's value from the request context (the snapshot).
function _M.snapshot(request)
  local snap = new_tab(#accessors, 1)
  for i = 1, #accessors do
    snap[i] = accessors[i].capture(request)
  end
  snap.accessors = accessors
  return snap
end

--- Restores a snapshot into ctx (a fresh table the caller owns). Returns the accessor
--- list to clear with: the snapshot itself is not needed once restored.
function _M.restore(snap, ctx)
  local list = snap.accessors
  for i = 1, #list do
    list[i].restore(snap[i], ctx)
  end
  return list
end

--- Runs the clear of every accessor of list (what restore returned) in reverse order,
--- then empties ctx. Returns the first error a clear raised (the others still run), or nil.
function _M.clear(list, ctx)
  local first = nil
  for i = #list, 1, -1 do
    local a = list[i]
    if a.trusted then -- the host's own accessors cannot fail: no protected call needed
      a.clear(ctx)
    else
      local ok, err = pcall(a.clear, ctx)
      if not ok and not first then
        first = err
      end
    end
  end
  local k = next(ctx)
  while k ~= nil do
    ctx[k] = nil
    k = next(ctx)
  end
  return first
end

return _M

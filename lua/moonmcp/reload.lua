-- moonmcp.reload — hot reload of the scripts (DESIGN §6).
--
-- A reload builds a whole new generation from every script (moonmcp.loader: each file
-- in a fresh environment, every definition validated) and swaps it in with one
-- assignment (registry.set). Any error keeps the current generation and goes to the
-- server log, one line per error with its file and line. Calls in flight finish on the
-- generation they started with (call.start captures exchange.generation); new calls see
-- the new one. The dropped generation's background tasks, timers and unload hooks are
-- cleaned up (moonmcp.tasks). After a swap, each kind of definition whose list changed
-- (tools; prompts; resources and templates, as "resources") is announced with
-- notify.list_changed(kind): legacy clients and the modern era's listen streams hear it.
--
-- Lifecycle, as `serve` drives it:
--   configure(paths)   remembers the paths and stamps the script files (before the
--                      first load, so an edit made during start-up is not missed)
--   watch()            watches every directory of the tree (core.watch: one libuv
--                      fs_event per directory, since inotify is not recursive; a script
--                      given as a file is watched through its directory, which keeps
--                      working when editors save by renaming a new file over the old)
--   request(reason, force)
--                      asks for a check: a single runner task waits until no event came
--                      for DEBOUNCE seconds, then stamps every script file again (size,
--                      mtime, inode) and reloads only if a stamp changed, was added or
--                      went away; SIGHUP forces a reload without the wait or the stamps
--   stop()             stops watching
-- The watched directories are reconciled with the tree on every check, so new
-- subdirectories are watched and removed ones forgotten.
local core = require "moonmcp.core"
local host = require "moonmcp.host"
local loader = require "moonmcp.loader"
local registry = require "moonmcp.registry"
local notify = require "moonmcp.notify"
local log = require "moonmcp.log"

local type, pairs, ipairs, tostring, tonumber, sort, concat, xpcall, traceback, floor =
  type, pairs, ipairs, tostring, tonumber, table.sort, table.concat, xpcall, debug.traceback, math.floor

local _M = {}

--- Seconds without a file event before a change is looked at.
_M.DEBOUNCE = 0.05

local paths = nil -- the script paths (nil until configure)
local stamps = {} -- path -> stamp of every script file, as last seen
local watcher = nil
local runner = nil -- id of the task that debounces and reloads, while it runs
local dirty, forced, reason = false, false, nil
local last_event = 0
local stats = { reloads = 0, failures = 0, checks = 0 }

local function sleep(seconds)
  host.await(core.sleep(seconds))
end

-- Files whose changes count: what the loader loads, and helper modules beside it
-- (names starting with "_"); editors' temporary and hidden files do not.
local function counts(name)
  return name:sub(1, 1) ~= "." and name:match("%.lua$") ~= nil and name:match("_spec%.lua$") == nil
end

local function stamp_of(path)
  local kind, size, sec, nsec, ino = core.file_stamp(path)
  if not kind then
    return nil
  end
  return kind, ("%d:%d.%09d:%d"):format(size, sec, nsec, ino), ino
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

--- Stamps every script file under paths. Returns stamps (path -> stamp) and the list of
--- directories to watch.
function _M.scan(list)
  local out, dirs, seen = {}, {}, {}
  local function walk(dir, ino)
    if seen[ino] then -- a symlink loop
      return
    end
    seen[ino] = true
    dirs[#dirs + 1] = dir
    for _, name in ipairs(core.scandir(dir) or {}) do
      if name:sub(1, 1) ~= "." then
        local path = dir .. "/" .. name
        local kind, stamp, child = stamp_of(path)
        if kind == "directory" then
          walk(path, child)
        elseif kind == "file" and counts(name) then
          out[path] = stamp
        end
      end
    end
  end
  for _, p in ipairs(list) do
    p = p:gsub("/+$", "")
    if p == "" then
      p = "/"
    end
    local kind, stamp, ino = stamp_of(p)
    if kind == "directory" then
      walk(p, ino)
    else
      out[p] = stamp or "missing"
      dirs[#dirs + 1] = dirname(p)
    end
  end
  return out, dirs
end

local function same(a, b)
  for k, v in pairs(a) do
    if b[k] ~= v then
      return false
    end
  end
  for k in pairs(b) do
    if a[k] == nil then
      return false
    end
  end
  return true
end

-- Watches exactly the directories in want.
local function reconcile(want)
  if not watcher then
    return
  end
  local wanted = {}
  for _, d in ipairs(want) do
    wanted[d] = true
  end
  for _, d in ipairs(watcher:dirs()) do
    if not wanted[d] then
      watcher:remove(d)
    end
  end
  for d in pairs(wanted) do
    local ok, err = watcher:add(d)
    if not ok then
      log.warning("cannot watch a script directory", { dir = d, error = err })
    end
  end
end

-- ---- what changed between two generations ----

-- A canonical text of a definition: every field but functions, keys sorted.
local function canonical(v, out, seen)
  local t = type(v)
  if t == "table" then
    if seen[v] then
      out[#out + 1] = "<cycle>"
      return
    end
    seen[v] = true
    local keys = {}
    for k, x in pairs(v) do
      if type(x) ~= "function" then
        keys[#keys + 1] = k
      end
    end
    sort(keys, function(a, b)
      local ta, tb = type(a), type(b)
      if ta ~= tb then
        return ta < tb
      end
      return a < b
    end)
    out[#out + 1] = "{"
    for _, k in ipairs(keys) do
      out[#out + 1] = type(k) == "string" and ("%q="):format(k) or ("[" .. tostring(k) .. "]=")
      canonical(v[k], out, seen)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
    seen[v] = nil
  elseif t == "string" then
    out[#out + 1] = ("%q"):format(v)
  elseif t == "number" and v == floor(v) and v > -2 ^ 53 and v < 2 ^ 53 then
    out[#out + 1] = ("%d"):format(v)
  else
    out[#out + 1] = tostring(v)
  end
end

--- The fingerprint of a definition: what a client can see of it (functions left out).
function _M.fingerprint(def)
  local out = {}
  canonical(def, out, {})
  return concat(out)
end

local KIND_OF = { tools = "tools", prompts = "prompts", resources = "resources", templates = "resources" }
local ANNOUNCED = { "tools", "prompts", "resources" }

--- The kinds ("tools", "prompts", "resources") whose lists differ between generations
--- old and new: a name added or removed, or a definition whose fingerprint changed.
function _M.diff(old, new)
  local changed = {}
  for section, kind in pairs(KIND_OF) do
    if not changed[kind] then
      local a, b = old[section] or {}, new[section] or {}
      for name, entry in pairs(a) do
        local other = b[name]
        if not other or _M.fingerprint(entry.def) ~= _M.fingerprint(other.def) then
          changed[kind] = true
          break
        end
      end
      if not changed[kind] then
        for name in pairs(b) do
          if not a[name] then
            changed[kind] = true
            break
          end
        end
      end
    end
  end
  local list = {}
  for _, kind in ipairs(ANNOUNCED) do
    if changed[kind] then
      list[#list + 1] = kind
    end
  end
  return list
end

--- Swaps gen in and announces what changed. Returns the list of changed kinds.
function _M.apply(gen)
  local old = registry.current()
  registry.set(gen)
  local changed = _M.diff(old, gen)
  for _, kind in ipairs(changed) do
    notify.list_changed(kind)
  end
  return changed
end

--- The position and first line of a loader error: file, line (or nil), message — the
--- "file:line: " prefix Lua puts on syntax and runtime errors taken apart.
function _M.position(e)
  local message = tostring(e.message):match("^[^\n]*")
  local line = e.line
  local at, rest = message:match("^[^:]*:(%d+): (.*)$")
  if at and e.file and message:sub(1, #e.file) == e.file then
    line, message = line or tonumber(at), rest
  end
  return e.file, line, message
end

local function count(t)
  local n = 0
  for _ in pairs(t or {}) do
    n = n + 1
  end
  return n
end

--- Checks the scripts now, and reloads them if a file changed (always, when force).
--- Returns true, changed kinds; or false, "unchanged"; or nil, errors.
function _M.now(why, force)
  if not paths then
    error("reload: configure(paths) first", 2)
  end
  stats.checks = stats.checks + 1
  local new_stamps, dirs = _M.scan(paths)
  reconcile(dirs)
  if not force and same(new_stamps, stamps) then
    return false, "unchanged"
  end
  stamps = new_stamps
  local started = core.clock()
  local gen, errors = loader.load(paths)
  if not gen then
    stats.failures = stats.failures + 1
    log.error("reload failed; keeping the current scripts", { reason = why, errors = #errors })
    for _, e in ipairs(errors) do
      local file, line, message = _M.position(e)
      log.error(("%s%s: %s"):format(file or "?", line and (":" .. line) or "", message), { file = file, line = line })
    end
    return nil, errors
  end
  local changed = _M.apply(gen)
  stats.reloads = stats.reloads + 1
  log.info("scripts reloaded", { reason = why, files = #gen.files, tools = count(gen.tools),
    prompts = count(gen.prompts), resources = count(gen.resources) + count(gen.templates),
    changed = #changed > 0 and concat(changed, ",") or "none",
    ms = ("%.1f"):format((core.clock() - started) * 1000) })
  return true, changed
end

local function run()
  while dirty do
    if not forced then
      local quiet = core.clock() - last_event
      while quiet < _M.DEBOUNCE do
        sleep(_M.DEBOUNCE - quiet)
        quiet = core.clock() - last_event
      end
    end
    local force, why = forced, reason
    dirty, forced, reason = false, false, nil
    local ok, err = xpcall(_M.now, traceback, why, force)
    if not ok then
      log.error("reload failed", { error = tostring(err) })
    end
  end
  runner = nil
end

--- Asks for a check (after the debounce), or a forced reload (at once). The work runs in
--- one task at a time; requests made meanwhile are served after it.
function _M.request(why, force)
  if not paths then
    return
  end
  dirty = true
  reason = why or reason
  if force then
    forced = true
  else
    last_event = core.clock()
  end
  if not runner then
    runner = core.spawn(run)
  end
end

local function on_event(dir, name, err)
  if err then
    log.warning("script watch error", { dir = dir, error = err })
  end
  if name and (name:sub(1, 1) == "." or name:sub(-1) == "~") then
    return
  end
  _M.request("change")
end

--- Remembers the script paths and stamps their files as they are now.
function _M.configure(list, opts)
  paths = {}
  for i, p in ipairs(list) do
    paths[i] = p
  end
  stamps = _M.scan(paths)
  if opts and opts.debounce then
    _M.DEBOUNCE = opts.debounce
  end
end

--- Starts watching the script tree. Returns the number of directories watched.
function _M.watch()
  if not paths then
    error("reload: configure(paths) first", 2)
  end
  if not watcher then
    watcher = core.watch(on_event)
  end
  local _, dirs = _M.scan(paths)
  reconcile(dirs)
  return #watcher:dirs()
end

--- Stops watching (a pending check still runs).
function _M.stop()
  if watcher then
    watcher:close()
    watcher = nil
  end
end

--- The directories watched now (sorted; for specs).
function _M.watched()
  local list = watcher and watcher:dirs() or {}
  sort(list)
  return list
end

--- Counters: reloads (swaps), failures (loads that failed), checks.
function _M.stats()
  return { reloads = stats.reloads, failures = stats.failures, checks = stats.checks }
end

--- Whether a check is pending or running (for specs).
function _M.busy()
  return runner ~= nil
end

return _M

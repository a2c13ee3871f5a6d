-- moonmcp.config — the optional config file (`moonmcp serve --config FILE`).
--
-- A Lua file that returns a table; every key is optional:
--   listen = "127.0.0.1:8080"     endpoint = "/mcp"
--   allowed_hosts = { "localhost", "127.0.0.1", "[::1]" }  -- or "*" (Host and Origin)
--   limits = { max_header_bytes = 16384, max_headers = 64, max_body_bytes = 4194304,
--              header_timeout = 10, idle_timeout = 60, max_line_bytes = 4194304 }
--   filters = { function(request) ... end, ... }        -- see moonmcp.filters
--   accessors = { { key = "tenant", capture = ..., restore = ..., clear = ... }, ... }
--   log_level = "info"            instructions = "text for the client's model"
--   scripts = { "path", ... }     -- used when no PATH is given on the command line
--   sessions = false              -- legacy-era HTTP sessions (Mcp-Session-Id); see moonmcp.sessions
--   session_ttl = 3600            -- seconds an idle session lives
--   mrtr_key = "64 hex digits"    -- AES-256 key sealing MRTR requestState (share it between
--                                 -- instances behind a load balancer; default: ephemeral)
--   mrtr_ttl = 600                -- seconds a requestState stays valid
--   ask_timeout = 300             -- seconds a legacy server->client request may wait
--   page_size = 50                -- items per page of the list methods
--   call_timeout = nil            -- seconds a tool call may take (default: no limit; a
--                                 -- tool's own `timeout` overrides it)
--   cpu_budget = 10               -- seconds a handler may compute without yielding
--   watchdog = true               -- false: no CPU budget (handlers then run JIT-compiled)
-- Relative script paths are relative to the config file's folder.
local type, pairs, setmetatable, setfenv, loadfile, pcall, tostring = type, pairs, setmetatable, setfenv, loadfile,
  pcall, tostring

local _M = {}

_M.DEFAULT_LIMITS = {
  max_header_bytes = 16384,
  max_headers = 64,
  max_body_bytes = 4 * 1024 * 1024,
  header_timeout = 10,
  idle_timeout = 60,
  max_line_bytes = 4 * 1024 * 1024,
}

_M.DEFAULT_ALLOWED_HOSTS = { "localhost", "127.0.0.1", "[::1]" }

local KNOWN = {
  listen = "string", endpoint = "string", allowed_hosts = "table|string", limits = "table", filters = "table",
  accessors = "table", log_level = "string", instructions = "string", scripts = "table",
  sessions = "boolean", session_ttl = "number", mrtr_key = "string", mrtr_ttl = "number", ask_timeout = "number",
  page_size = "number", call_timeout = "number", cpu_budget = "number", watchdog = "boolean",
}

--- Loads the config file at path. Returns the table, or nil, message.
function _M.load(path)
  local chunk, err = loadfile(path)
  if not chunk then
    return nil, err
  end
  setfenv(chunk, setmetatable({}, { __index = _G }))
  local ok, conf = pcall(chunk)
  if not ok then
    return nil, tostring(conf)
  end
  if type(conf) ~= "table" then
    return nil, path .. ": the config file must return a table"
  end
  for k, v in pairs(conf) do
    local want = KNOWN[k]
    if not want then
      return nil, ("%s: unknown setting %q"):format(path, tostring(k))
    end
    if not want:find(type(v), 1, true) then
      return nil, ("%s: %s must be a %s"):format(path, k, want:gsub("|", " or "))
    end
  end
  for k in pairs(conf.limits or {}) do
    if not _M.DEFAULT_LIMITS[k] then
      return nil, ("%s: unknown limit %q"):format(path, tostring(k))
    end
  end
  local dir = path:match("^(.*)/[^/]*$") or "."
  if conf.scripts then
    for i, p in ipairs(conf.scripts) do
      if not p:match("^/") then
        conf.scripts[i] = dir .. "/" .. p
      end
    end
  end
  return conf
end

--- limits with the defaults filled in.
function _M.limits(conf)
  local out = {}
  for k, v in pairs(_M.DEFAULT_LIMITS) do
    out[k] = (conf and conf.limits and conf.limits[k]) or v
  end
  return out
end

return _M

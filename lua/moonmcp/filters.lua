-- moonmcp.filters — request filters: user functions of the HTTP request phase.
--
-- A filter is fn(request) where request is the request context being built
-- ({ transport, remote, headers, request_id, log = {}, message, meta }). It runs in the
-- request's coroutine, before the call is spawned, so it may yield (call an auth
-- service, sleep). It adds to the context by writing fields (request.principal = ...,
-- request.log.tenant = ...). To reject the request it returns false, status, message
-- [, headers]; e.g. `return false, 401, "missing bearer token",
-- { ["WWW-Authenticate"] = "Bearer" }`. A filter that raises rejects with 500 and logs
-- the traceback. Filters are configured in the config file (`filters = { ... }`), run in
-- order, and stop at the first rejection.
local log = require "moonmcp.log"

local type, xpcall, traceback, tostring, error = type, xpcall, debug.traceback, tostring, error

local _M = {}

local list = {}

--- Replaces the filter list.
function _M.set(filters)
  for i, f in ipairs(filters) do
    if type(f) ~= "function" then
      error(("filters[%d] must be a function"):format(i), 2)
    end
  end
  list = filters
end

--- Number of filters configured.
function _M.count()
  return #list
end

--- Runs every filter on request (giving it the empty log-fields table filters write to).
--- Returns true, or false, status, message, headers.
function _M.run(request)
  local n = #list
  if n == 0 then
    return true
  end
  request.log = request.log or {}
  for i = 1, n do
    local ok, verdict, status, message, headers = xpcall(list[i], traceback, request)
    if not ok then
      log.error("request filter failed", { error = tostring(verdict) })
      return false, 500, "internal error in a request filter"
    end
    if verdict == false then
      return false, type(status) == "number" and status or 403, type(message) == "string" and message or "rejected",
        headers
    end
  end
  return true
end

return _M

-- moonmcp.dns — name resolution for handlers (core/ldns.c: getaddrinfo on the thread pool).
--
--   dns.resolve(name, { family = "any" | "inet" | "inet6" }) -> { "127.0.0.1", "::1", ... }
--     in the resolver's order, without duplicates | nil, message
local core = require "moonmcp.core"
local host = require "moonmcp.host"

local type, error = type, error
local await, c_resolve = host.await, core.dns_resolve

local _M = {}

function _M.resolve(name, opts)
  if type(name) ~= "string" or name == "" then
    error("dns.resolve: name must be a non-empty string", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("dns.resolve: options must be a table", 2)
  end
  local family = opts and opts.family or "any"
  if family ~= "any" and family ~= "inet" and family ~= "inet6" then
    error("dns.resolve: family must be any, inet or inet6", 2)
  end
  return await(c_resolve(name, family))
end

return _M

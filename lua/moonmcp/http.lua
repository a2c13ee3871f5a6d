-- moonmcp.http — the HTTP client for handlers (core/lhttp_client.c: libcurl driven by the
-- event loop; HTTPS through OpenSSL). The call parks while the request runs.
--
--   http.request{ url = "https://...", method = "GET", headers = { Name = "value" },
--                 body = "...", timeout = seconds, follow_redirects = true,
--                 max_redirects = 10, insecure = false, cainfo = "/path/ca.pem",
--                 max_body = 64 MiB }
--     -> { status = 200, headers = { ["content-type"] = "..." }, body = "..." }
--      | nil, message   ("timeout", a curl message such as "Could not resolve host: x")
--   http.get(url, opts), http.post(url, body, opts)
-- Response header names are lowercase; repeated headers are joined with ", ". Only http
-- and https URLs are accepted, also for redirects. A cancelled call drops its transfer.
-- http.close_idle() closes the connections kept for reuse (they close by themselves after
-- 30 s without requests).
local core = require "moonmcp.core"
local host = require "moonmcp.host"

local type, error, pairs, ipairs, tostring, huge = type, error, pairs, ipairs, tostring, math.huge
local await, c_request = host.await, core.http_request

local _M = {}

local function check(cond, msg)
  if not cond then
    error("http: " .. msg, 3)
  end
end

function _M.request(opts)
  check(type(opts) == "table", "request expects a table of options")
  check(type(opts.url) == "string" and opts.url:match("^[hH][tT][tT][pP][sS]?://"), "url must be an http(s) URL")
  local method = opts.method
  check(method == nil or (type(method) == "string" and method:match("^[%u]+$")), "method must be an uppercase token")
  check(opts.body == nil or type(opts.body) == "string", "body must be a string")
  for _, k in ipairs { "timeout", "max_redirects", "max_body" } do
    local v = opts[k]
    check(v == nil or (type(v) == "number" and v >= 0 and v == v and v ~= huge), k .. " must be a number >= 0")
  end
  check(opts.cainfo == nil or type(opts.cainfo) == "string", "cainfo must be a string")
  local list, has_expect = {}, false
  if opts.headers ~= nil then
    check(type(opts.headers) == "table", "headers must be a table")
    for name, value in pairs(opts.headers) do
      check(type(name) == "string" and name:match("^[%w!#$%%&'*+%-.^_`|~]+$"), "bad header name " .. tostring(name))
      check(type(value) == "string" or type(value) == "number", "header " .. name .. " must be a string")
      value = tostring(value)
      check(not value:find("[\r\n]"), "header " .. name .. " contains a line break")
      if name:lower() == "expect" then
        has_expect = true
      end
      list[#list + 1] = name .. ": " .. value
    end
  end
  if not has_expect then
    list[#list + 1] = "Expect:" -- no 100-continue round trip for large bodies
  end
  return await(c_request {
    url = opts.url,
    method = method,
    headers = list,
    body = opts.body,
    timeout = opts.timeout,
    follow_redirects = opts.follow_redirects ~= false,
    max_redirects = opts.max_redirects,
    insecure = opts.insecure == true,
    cainfo = opts.cainfo,
    max_body = opts.max_body,
  })
end

local function with(opts, fields)
  local o = {}
  if opts ~= nil then
    check(type(opts) == "table", "options must be a table")
    for k, v in pairs(opts) do
      o[k] = v
    end
  end
  for k, v in pairs(fields) do
    o[k] = v
  end
  return o
end

function _M.get(url, opts)
  return _M.request(with(opts, { url = url, method = opts and opts.method or "GET" }))
end

function _M.post(url, body, opts)
  return _M.request(with(opts, { url = url, method = opts and opts.method or "POST", body = body or "" }))
end

_M.close_idle = core.http_close_idle

return _M

-- moonmcp.era.modern — what is particular to the stateless era (2026-07-28): the _meta
-- envelope on every request (protocol version, client capabilities, client info, log
-- level), the HTTP routing headers checked against the body, resultType and serverInfo
-- on every result, caching hints on cacheable results, and the HTTP status of errors.
local json = require "moonmcp.json"
local jsonrpc = require "moonmcp.jsonrpc"
local protocol = require "moonmcp.protocol"
local base64 = require "moonmcp.base64"
local param_headers = require "moonmcp.param_headers"
local mrtr = require "moonmcp.mrtr"

local type, tostring = type, tostring

local _M = { name = "modern" }

_M.HEADER_MISMATCH = -32020
_M.MISSING_CAPABILITY = -32021
_M.UNSUPPORTED_VERSION = -32022

_M.VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_M.CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
_M.CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
_M.LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
_M.SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

_M.METHODS = {
  ["server/discover"] = true, ["tools/list"] = true, ["tools/call"] = true, ["prompts/list"] = true,
  ["prompts/get"] = true, ["resources/list"] = true, ["resources/read"] = true, ["resources/templates/list"] = true,
  ["completion/complete"] = true, ["subscriptions/listen"] = true,
}

_M.CACHEABLE = {
  ["server/discover"] = true, ["tools/list"] = true, ["prompts/list"] = true, ["resources/list"] = true,
  ["resources/templates/list"] = true, ["resources/read"] = true,
}

-- The methods whose Mcp-Name header mirrors a body field.
local NAME_FIELD = { ["tools/call"] = "name", ["prompts/get"] = "name", ["resources/read"] = "uri" }

--- The "resource not found" error of this era (-32002 is retired).
_M.RESOURCE_NOT_FOUND = jsonrpc.INVALID_PARAMS

--- Caching defaults; a definition may override with ttl_ms / cache_scope.
_M.cache_defaults = { ttl_ms = 0, scope = "public" }

local function decode_header(v)
  local inner = v:match("^=%?base64%?(.*)%?=$")
  if inner then
    return base64.decode(inner)
  end
  return v
end

local function header(headers, name)
  local v = headers[name]
  if v and (v:find("^%s") or v:find("%s$")) then -- rare: values are usually clean
    v = v:match("^%s*(.-)%s*$")
  end
  return v
end

local function mismatch(message)
  jsonrpc.raise(_M.HEADER_MISMATCH, "Header mismatch: " .. message)
end

-- The HTTP routing headers must be present and agree with the body.
local function check_headers(msg, headers, version, exchange)
  local h = header(headers, "mcp-protocol-version")
  if not h then
    mismatch("MCP-Protocol-Version header is required")
  elseif h ~= version then
    mismatch(("MCP-Protocol-Version header value '%s' does not match body value '%s'"):format(h, tostring(version)))
  end
  h = header(headers, "mcp-method")
  if not h then
    mismatch("Mcp-Method header is required")
  elseif h ~= msg.method then
    mismatch(("Mcp-Method header value '%s' does not match body value '%s'"):format(h, msg.method))
  end
  local field = NAME_FIELD[msg.method]
  if field then
    local body = msg.params[field]
    h = header(headers, "mcp-name")
    if not h then
      mismatch("Mcp-Name header is required for " .. msg.method)
    end
    local decoded = decode_header(h)
    if decoded ~= body then
      mismatch(("Mcp-Name header value '%s' does not match body value '%s'"):format(tostring(decoded),
        tostring(body)))
    end
  end
  if msg.method == "tools/call" and exchange.generation then
    local entry = exchange.generation.tools[msg.params.name]
    if entry and entry.param_headers then
      local ok, err = param_headers.check(entry.param_headers, msg.params.arguments or {}, headers)
      if not ok then
        mismatch(err)
      end
    end
  end
end

--- Fills the exchange from the request's _meta; raises a protocol error when it
--- cannot be served.
function _M.prepare(msg, exchange)
  local params = msg.params
  local meta = params._meta
  local version = meta[_M.VERSION_KEY]
  local request = exchange.request
  if request and request.transport == "http" then
    check_headers(msg, request.headers, version, exchange) -- first: routing must agree with the body
  end
  if not protocol.is_modern(version) then
    jsonrpc.raise(_M.UNSUPPORTED_VERSION, "Unsupported protocol version",
      { supported = protocol.supported_versions(), requested = version })
  end
  local caps = meta[_M.CAPABILITIES_KEY]
  if type(caps) ~= "table" or json.is_array(caps) then
    jsonrpc.raise(jsonrpc.INVALID_PARAMS, "_meta." .. _M.CAPABILITIES_KEY .. " is required (an object)")
  end
  if not _M.METHODS[msg.method] then
    jsonrpc.raise(jsonrpc.METHOD_NOT_FOUND, "method not found: " .. msg.method .. " (protocol " .. version .. ")")
  end
  exchange.version = version
  exchange.client = { info = meta[_M.CLIENT_INFO_KEY], capabilities = caps }
  exchange.progress_token = meta.progressToken
  exchange.log_level = meta[_M.LOG_LEVEL_KEY] -- nil: no notifications/message at all
  if mrtr.METHODS[msg.method] then
    mrtr.prepare(msg, exchange) -- checks inputResponses / requestState; handlers may ask
  end
end

--- Decorates a result: resultType, serverInfo, caching hints.
function _M.result(msg, result, exchange)
  if result.resultType == nil then
    result.resultType = "complete"
  end
  local meta = result._meta
  if type(meta) ~= "table" then
    meta = {}
    result._meta = meta
  end
  meta[_M.SERVER_INFO_KEY] = protocol.server_info
  if _M.CACHEABLE[msg.method] and result.resultType == "complete" then
    local cache = exchange.cache or _M.cache_defaults
    result.ttlMs = cache.ttl_ms or _M.cache_defaults.ttl_ms
    result.cacheScope = cache.scope or _M.cache_defaults.scope
  end
  return jsonrpc.result(msg.id, result)
end

--- HTTP status of a response message (the transport page's mapping).
function _M.http_status(response)
  local err = response.error
  if not err then
    return 200
  end
  local code = err.code
  if code == jsonrpc.METHOD_NOT_FOUND then
    return 404
  elseif code == jsonrpc.INTERNAL_ERROR then
    return 500
  end
  return 400
end

return _M

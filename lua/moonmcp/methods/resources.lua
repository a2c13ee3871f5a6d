-- moonmcp.methods.resources — resources/list, resources/templates/list, resources/read,
-- resources/subscribe and resources/unsubscribe.
--
-- Routing a URI (resolve): a static resource with exactly that URI first; otherwise the
-- templates, most specific first (more literal characters first, then by template text,
-- so the order never depends on load order), and the first template the URI matches owns
-- it. A URI that nothing owns, or whose read returns nil, is "not found": one error,
-- built by not_found_error(uri, era) with the era's code (legacy -32002, modern -32602)
-- and data.uri.
--
-- read(uri, ctx) for a resource, read(uri, vars, ctx) for a template, returns:
--   a string                          -> one text contents (uri, the definition's mimeType)
--   { text = } | { blob = base64 } | { bytes = raw }  (+ mimeType, uri, _meta)
--                                     -> one contents
--   { contents = { ... } }            -> several; each item a string or a table as above,
--                                        uri and mimeType defaulting to the request's
--   nil [, reason]                    -> not found (the reason goes to the debug log)
-- Any of the table forms may carry ttl_ms / cache_scope to override the definition's
-- caching hints for this one read. An empty contents list counts as not found (the spec
-- forbids answering a missing resource with an empty list). Raised errors are internal
-- errors (-32603), except protocol errors raised with jsonrpc.raise, which pass through.
--
-- Caching hints go on the exchange, never in the result: exchange.cache = { ttl_ms,
-- scope }; the modern era turns them into ttlMs / cacheScope.
local server = require "moonmcp.server"
local jsonrpc = require "moonmcp.jsonrpc"
local json = require "moonmcp.json"
local log = require "moonmcp.log"
local content = require "moonmcp.content"
local paginate = require "moonmcp.paginate"
local subscriptions = require "moonmcp.subscriptions"

local type, pairs, ipairs, sort, setmetatable, tostring, select, floor, error =
  type, pairs, ipairs, table.sort, setmetatable, tostring, select, math.floor, error

local _M = {}

_M.LEGACY_NOT_FOUND = -32002              -- 2025-11-25 resources.mdx, "Error Handling"
_M.MODERN_NOT_FOUND = jsonrpc.INVALID_PARAMS -- 2026-07-28 resources.mdx, "Error Handling"

--- Caching hints of resources/read results without their own (ttl_ms >= 0, scope).
--- "private" by default: a read handler may depend on who asks.
_M.read_cache_defaults = { ttl_ms = 0, scope = "private" }

--- The "resource not found" error value for uri in era (the era module, or its name
--- "legacy" | "modern"; nil: legacy). Raise it with error(value, 0).
function _M.not_found_error(uri, era)
  local code
  if type(era) == "table" and era.RESOURCE_NOT_FOUND then
    code = era.RESOURCE_NOT_FOUND
  elseif era == "modern" or (type(era) == "table" and era.name == "modern") then
    code = _M.MODERN_NOT_FOUND
  else
    code = _M.LEGACY_NOT_FOUND
  end
  return jsonrpc.error_value(code, "Resource not found", { uri = uri })
end

--- Raises the not-found error of the exchange's era.
function _M.raise_not_found(uri, exchange)
  error(_M.not_found_error(uri, exchange and exchange.era), 0)
end

local function invalid(message)
  jsonrpc.raise(jsonrpc.INVALID_PARAMS, message)
end

local function describe_resource(entry)
  local def = entry.def
  return {
    uri = entry.uri,
    name = entry.name,
    title = def.title,
    description = def.description,
    mimeType = def.mimeType,
    size = def.size,
    annotations = def.annotations,
    icons = def.icons,
    _meta = def._meta,
  }
end
_M.describe_resource = describe_resource

local function describe_template(entry)
  local def = entry.def
  return {
    uriTemplate = entry.uri_template,
    name = entry.name,
    title = def.title,
    description = def.description,
    mimeType = def.mimeType,
    annotations = def.annotations,
    icons = def.icons,
    _meta = def._meta,
  }
end
_M.describe_template = describe_template

server.method("resources/list", function(params, exchange)
  local items, next_cursor = paginate.page(exchange.generation.resources, "resources", params.cursor,
    describe_resource, exchange)
  return { resources = items, nextCursor = next_cursor }
end)

server.method("resources/templates/list", function(params, exchange)
  local items, next_cursor = paginate.page(exchange.generation.templates, "templates", params.cursor,
    describe_template, exchange)
  return { resourceTemplates = items, nextCursor = next_cursor }
end)

-- templates section -> its entries, most specific first (cached per generation).
local ordered = setmetatable({}, { __mode = "k" })

local function templates_in_order(templates)
  local list = ordered[templates]
  if not list then
    list = {}
    for _, entry in pairs(templates) do
      list[#list + 1] = entry
    end
    sort(list, function(a, b)
      local la, lb = a.template.literal_length, b.template.literal_length
      if la ~= lb then
        return la > lb
      end
      return a.uri_template < b.uri_template
    end)
    ordered[templates] = list
  end
  return list
end
_M.templates_in_order = templates_in_order

--- Finds what serves uri in generation gen: the resource entry, or the template entry
--- and the variables, or nil.
function _M.resolve(gen, uri)
  local entry = gen.resources[uri]
  if entry then
    return entry, nil
  end
  for _, t in ipairs(templates_in_order(gen.templates)) do
    local vars = t.template:match(uri)
    if vars then
      return t, vars
    end
  end
  return nil
end

-- One ResourceContents from a read result item.
local function contents_item(item, uri, mime)
  if type(item) == "string" then
    return { uri = uri, mimeType = mime, text = item }
  end
  if type(item) ~= "table" then
    error("a resource read returned a " .. type(item) .. " content item", 0)
  end
  return content.contents {
    uri = item.uri or uri, mimeType = item.mimeType or mime, _meta = item._meta,
    text = item.text, blob = item.blob, bytes = item.bytes,
  }
end

local function valid_ttl(v)
  return type(v) == "number" and v >= 0 and v == floor(v)
end

--- Shapes read's return values into a ReadResourceResult, or nil (not found).
--- Also returns the caching hints for this read.
function _M.shape(entry, uri, value)
  if value == nil then
    return nil
  end
  local def = entry.def
  local mime = def.mimeType
  local list = json.array()
  if type(value) == "table" and value.contents ~= nil then
    if type(value.contents) ~= "table" then
      error("a resource read returned contents that is not a list", 0)
    end
    for _, item in ipairs(value.contents) do
      list[#list + 1] = contents_item(item, uri, mime)
    end
  else
    list[1] = contents_item(value, uri, mime)
  end
  if #list == 0 then
    return nil
  end
  local ttl, scope = def.ttl_ms, def.cache_scope
  if type(value) == "table" then
    if valid_ttl(value.ttl_ms) then
      ttl = value.ttl_ms
    end
    if value.cache_scope == "public" or value.cache_scope == "private" then
      scope = value.cache_scope
    end
  end
  local result = { contents = list }
  if type(value) == "table" and value._meta ~= nil and value.contents ~= nil then
    result._meta = value._meta
  end
  return result, { ttl_ms = ttl or _M.read_cache_defaults.ttl_ms, scope = scope or _M.read_cache_defaults.scope }
end

local function pack(...)
  return select("#", ...), ...
end

local function uri_param(params, method)
  local uri = params.uri
  if type(uri) ~= "string" or uri == "" then
    invalid(method .. ": uri must be a non-empty string")
  end
  return uri
end

server.method("resources/read", function(params, exchange, ctx)
  local uri = uri_param(params, "resources/read")
  local entry, vars = _M.resolve(exchange.generation, uri)
  if not entry then
    _M.raise_not_found(uri, exchange)
  end
  if ctx and ctx.log then
    ctx.log.resource = uri
  end
  local n, value, reason
  -- Unprotected, as prompts/get: raises belong to the dispatcher.
  if vars then
    n, value, reason = pack(entry.def.read(uri, vars, ctx))
  else
    n, value, reason = pack(entry.def.read(uri, ctx))
  end
  local result, cache = _M.shape(entry, uri, value)
  if not result then
    if n >= 2 and reason ~= nil then
      log.debug("resource not found", { uri = uri, reason = tostring(reason) })
    end
    _M.raise_not_found(uri, exchange)
  end
  exchange.cache = cache
  return result
end)

-- The key notifications for this exchange's client go to (see moonmcp.subscriptions).
local function subscriber_of(exchange)
  local key = exchange.subscriber
  if key == nil then
    jsonrpc.raise(jsonrpc.INVALID_REQUEST, "resource subscriptions need a connection that can receive notifications")
  end
  return key
end

server.method("resources/subscribe", function(params, exchange)
  local uri = uri_param(params, "resources/subscribe")
  if not _M.resolve(exchange.generation, uri) then
    _M.raise_not_found(uri, exchange)
  end
  local ok, err = subscriptions.subscribe(subscriber_of(exchange), uri)
  if not ok then
    invalid(err)
  end
  return {}
end)

server.method("resources/unsubscribe", function(params, exchange)
  local uri = uri_param(params, "resources/unsubscribe")
  -- Unsubscribing from something never subscribed is not an error: the end state is
  -- what the client asked for.
  subscriptions.unsubscribe(subscriber_of(exchange), uri)
  return {}
end)

--- Sends notifications/resources/updated for uri to its subscribers (moonmcp.resources
--- .notify_updated). Returns how many were notified.
function _M.notify_updated(uri)
  return subscriptions.notify_updated(uri)
end

return _M

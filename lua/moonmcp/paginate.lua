-- moonmcp.paginate — paged list results (tools/list, prompts/list, resources/list,
-- resources/templates/list): deterministic order, opaque cursors, caching hints.
--
-- Order: a list is the keys of one registry section (tool and prompt names, resource
-- URIs, URI templates) sorted bytewise, so every page of every request sees the same
-- order, whatever the load order of the scripts was.
--
-- Cursors are keyset cursors: base64url of "1:<list tag>:<last key sent>". The next page
-- starts after that key, so a cursor stays meaningful however long the client holds it.
-- The list tag is a hash of the kind and of every key in the list: when a reload changes
-- the list, its old cursors are refused (-32602) and the client starts again without a
-- cursor, as the pagination and caching pages of the spec ask of clients. A reload that
-- keeps the same keys keeps the cursors valid, and so does another server process
-- serving the same scripts (stateless deployments behind a load balancer). Cursors are
-- not secret and carry no authority: a forged one only picks another starting point.
--
-- Caching hints (the modern era turns exchange.cache into ttlMs / cacheScope): a list
-- gets the list defaults; its scope is "private" when any definition in the whole list
-- declares cache_scope = "private" (every page of one list must carry the same scope).
local json = require "moonmcp.json"
local jsonrpc = require "moonmcp.jsonrpc"
local base64 = require "moonmcp.base64"
local bit = require "bit"

local type, pairs, sort, setmetatable, floor, error, byte =
  type, pairs, table.sort, setmetatable, math.floor, error, string.byte
local bxor, tobit, lshift, tohex = bit.bxor, bit.tobit, bit.lshift, bit.tohex

local _M = {}

_M.DEFAULT_PAGE_SIZE = 50

local page_size = _M.DEFAULT_PAGE_SIZE

--- Caching hints of list results (ttl_ms >= 0; scope "public" | "private").
_M.cache_defaults = { ttl_ms = 60000, scope = "public" }

--- Sets the number of items per page (an integer >= 1).
function _M.set_page_size(n)
  if type(n) ~= "number" or n < 1 or n ~= floor(n) then
    error("paginate.set_page_size: expected an integer >= 1", 2)
  end
  page_size = n
end

function _M.page_size()
  return page_size
end

--- Sets the list caching defaults: { ttl_ms = integer >= 0, scope = "public"|"private" }
--- (fields left out keep their value).
function _M.set_cache_defaults(t)
  if type(t) ~= "table" then
    error("paginate.set_cache_defaults: expected a table", 2)
  end
  if t.ttl_ms ~= nil and (type(t.ttl_ms) ~= "number" or t.ttl_ms < 0 or t.ttl_ms ~= floor(t.ttl_ms)) then
    error("paginate.set_cache_defaults: ttl_ms must be an integer >= 0", 2)
  end
  if t.scope ~= nil and t.scope ~= "public" and t.scope ~= "private" then
    error('paginate.set_cache_defaults: scope must be "public" or "private"', 2)
  end
  _M.cache_defaults = { ttl_ms = t.ttl_ms or _M.cache_defaults.ttl_ms, scope = t.scope or _M.cache_defaults.scope }
end

-- FNV-1a, 32 bits. h * 16777619 == (h << 24) + h * 403 (mod 2^32); h * 403 stays exact.
local function fnv1a(s, h)
  for i = 1, #s do
    h = bxor(h, byte(s, i))
    h = tobit(lshift(h, 24) + h * 403)
  end
  return h
end

-- section (registry table) -> { keys = sorted keys, tag = hex, private = boolean }.
-- Sections are never modified once loaded (a reload builds new ones), so this is safe
-- to cache; weak keys let old generations go.
local prepared = setmetatable({}, { __mode = "k" })

local function prepare(section, kind)
  local p = prepared[section]
  if p and p.kind == kind then
    return p
  end
  local keys, private = {}, false
  for key, entry in pairs(section) do
    keys[#keys + 1] = key
    local def = type(entry) == "table" and entry.def
    if type(def) == "table" and def.cache_scope == "private" then
      private = true
    end
  end
  sort(keys)
  local h = fnv1a(kind, tobit(0x811c9dc5))
  for i = 1, #keys do
    h = fnv1a("\0" .. keys[i], h)
  end
  p = { kind = kind, keys = keys, tag = tohex(h), private = private }
  prepared[section] = p
  return p
end

local function invalid(message)
  jsonrpc.raise(jsonrpc.INVALID_PARAMS, message)
end

-- The cursor that continues the list with this tag after key.
local function encode_cursor(tag, key)
  return base64.encode_url("1:" .. tag .. ":" .. key)
end

-- The key a cursor continues after; raises -32602 for a bad or stale cursor.
local function decode_cursor(cursor, p)
  if type(cursor) ~= "string" then
    invalid("invalid cursor: must be a string")
  end
  local text = base64.decode_url(cursor)
  local tag, key = (text or ""):match("^1:(%x+):(.*)$")
  if not tag then
    invalid("invalid cursor")
  end
  if tag ~= p.tag then
    invalid("invalid cursor: the list has changed since it was issued; list again without a cursor")
  end
  return key
end

-- Index of the first key > after (keys sorted).
local function first_after(keys, after)
  local lo, hi = 1, #keys + 1
  while lo < hi do
    local mid = floor((lo + hi) / 2)
    if keys[mid] <= after then
      lo = mid + 1
    else
      hi = mid
    end
  end
  return lo
end

--- Returns one page of a registry section: a JSON array of describe(entry, key) for the
--- keys of the page, and the nextCursor (nil on the last page). cursor is the request's
--- params.cursor (nil or json.null: the first page). kind names the list ("tools",
--- "prompts", "resources", "templates"). Raises -32602 for an invalid cursor. When
--- exchange is given, sets exchange.cache to the list's caching hints.
function _M.page(section, kind, cursor, describe, exchange)
  local p = prepare(section, kind)
  local keys = p.keys
  local start = 1
  if cursor ~= nil and cursor ~= json.null then
    start = first_after(keys, decode_cursor(cursor, p))
  end
  local stop = start + page_size - 1
  if stop > #keys then
    stop = #keys
  end
  local items = json.array()
  for i = start, stop do
    items[#items + 1] = describe(section[keys[i]], keys[i])
  end
  if exchange then
    exchange.cache = { ttl_ms = _M.cache_defaults.ttl_ms, scope = p.private and "private" or _M.cache_defaults.scope }
  end
  if stop < #keys then
    return items, encode_cursor(p.tag, keys[stop])
  end
  return items, nil
end

--- The tag of a section's list (for specs and diagnostics).
function _M.tag(section, kind)
  return prepare(section, kind).tag
end

return _M

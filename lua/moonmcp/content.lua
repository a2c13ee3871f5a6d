-- moonmcp.content — building MCP content blocks (tool results, prompt messages) and
-- resource contents (resources/read results); exposed to scripts as moonmcp.content.
--
--   text(s [, annotations])                     {type="text", text}
--   image(base64, mime [, annotations])         {type="image", data, mimeType}
--   image_bytes(raw, mime [, annotations])      the same, base64-encoding raw bytes
--   audio(base64, mime [, annotations])         {type="audio", data, mimeType}
--   audio_bytes(raw, mime [, annotations])
--   resource{uri=, text= | blob= | bytes=, mimeType=, annotations=, _meta=}
--                                               {type="resource", resource={uri, mimeType, text|blob}}
--   resource_link{uri=, name=, title=, description=, mimeType=, size=, annotations=,
--                 icons=, _meta=}                {type="resource_link", ...}
--   contents{uri=, text= | blob= | bytes=, mimeType=, _meta=}
--                                               one TextResourceContents / BlobResourceContents
--   check(block) -> true | nil, message         is block a well-formed content block?
--
-- `blob`/`data` arguments must already be base64 (RFC 4648, padded); `bytes` arguments
-- are raw and get encoded here. Misuse (a missing uri, a non-string text, data that is not
-- base64) raises, naming the function — these are bugs in the calling script.
local base64 = require "moonmcp.base64"
local json = require "moonmcp.json"

local type, error, ipairs, tostring = type, error, ipairs, tostring

local _M = {}

--- Is s plausibly standard base64 (alphabet, padding, length)? O(n) in C, no decoding.
local function is_base64(s)
  return type(s) == "string" and #s % 4 == 0 and s:find("^[%w+/]*=?=?$") ~= nil
end
_M.is_base64 = is_base64

local function need(cond, fn, message)
  if not cond then
    error("moonmcp.content." .. fn .. ": " .. message, 3)
  end
end

local function with_annotations(block, annotations, fn)
  if annotations ~= nil then
    need(type(annotations) == "table", fn, "annotations must be a table")
    block.annotations = annotations
  end
  return block
end

function _M.text(s, annotations)
  need(type(s) == "string", "text", "expected a string, got " .. type(s))
  return with_annotations({ type = "text", text = s }, annotations, "text")
end

local function media(kind, fn, data, mime, annotations)
  need(is_base64(data), fn, "data must be a base64 string (use " .. kind .. "_bytes for raw bytes)")
  need(type(mime) == "string" and mime ~= "", fn, "a MIME type is required")
  return with_annotations({ type = kind, data = data, mimeType = mime }, annotations, fn)
end

function _M.image(data, mime, annotations)
  return media("image", "image", data, mime, annotations)
end

function _M.audio(data, mime, annotations)
  return media("audio", "audio", data, mime, annotations)
end

function _M.image_bytes(raw, mime, annotations)
  need(type(raw) == "string", "image_bytes", "expected a string of bytes, got " .. type(raw))
  return media("image", "image_bytes", base64.encode(raw), mime, annotations)
end

function _M.audio_bytes(raw, mime, annotations)
  need(type(raw) == "string", "audio_bytes", "expected a string of bytes, got " .. type(raw))
  return media("audio", "audio_bytes", base64.encode(raw), mime, annotations)
end

-- One ResourceContents from { uri, text | blob | bytes, mimeType, _meta }.
local function resource_contents(t, fn)
  need(type(t) == "table", fn, "expected a table")
  need(type(t.uri) == "string" and t.uri ~= "", fn, "uri is required")
  need(t.mimeType == nil or type(t.mimeType) == "string", fn, "mimeType must be a string")
  local c = { uri = t.uri, mimeType = t.mimeType, _meta = t._meta }
  local n = (t.text ~= nil and 1 or 0) + (t.blob ~= nil and 1 or 0) + (t.bytes ~= nil and 1 or 0)
  need(n == 1, fn, "exactly one of text, blob, bytes is required")
  if t.text ~= nil then
    need(type(t.text) == "string", fn, "text must be a string")
    c.text = t.text
  elseif t.blob ~= nil then
    need(is_base64(t.blob), fn, "blob must be a base64 string (use bytes = for raw bytes)")
    c.blob = t.blob
  else
    need(type(t.bytes) == "string", fn, "bytes must be a string")
    c.blob = base64.encode(t.bytes)
  end
  return c
end

function _M.contents(t)
  return resource_contents(t, "contents")
end

function _M.resource(t)
  local c = resource_contents(t, "resource")
  return with_annotations({ type = "resource", resource = c }, t.annotations, "resource")
end

local LINK_FIELDS = { "uri", "name", "title", "description", "mimeType", "size", "annotations", "icons", "_meta" }

function _M.resource_link(t)
  need(type(t) == "table", "resource_link", "expected a table")
  need(type(t.uri) == "string" and t.uri ~= "", "resource_link", "uri is required")
  local block = { type = "resource_link" }
  for _, f in ipairs(LINK_FIELDS) do
    block[f] = t[f]
  end
  -- name is required by the schema; the URI is the natural fallback
  block.name = t.name or t.uri
  if type(block.icons) == "table" then
    json.array(block.icons)
  end
  return block
end

local CHECKS = {
  text = function(b)
    return type(b.text) == "string", "text must be a string"
  end,
  image = function(b)
    return is_base64(b.data) and type(b.mimeType) == "string", "image needs base64 data and a mimeType"
  end,
  audio = function(b)
    return is_base64(b.data) and type(b.mimeType) == "string", "audio needs base64 data and a mimeType"
  end,
  resource = function(b)
    local r = b.resource
    return type(r) == "table" and type(r.uri) == "string"
      and (type(r.text) == "string" or is_base64(r.blob)), "resource needs resource = {uri, text | blob}"
  end,
  resource_link = function(b)
    return type(b.uri) == "string" and type(b.name) == "string", "resource_link needs uri and name"
  end,
}

--- Checks a content block. Returns true, or nil and a message.
function _M.check(block)
  if type(block) ~= "table" then
    return nil, "a content block must be a table, got " .. type(block)
  end
  local check = CHECKS[block.type]
  if not check then
    return nil, "unknown content type " .. tostring(block.type)
  end
  local ok, message = check(block)
  if not ok then
    return nil, message
  end
  return true
end

return _M

-- moonmcp.json — the JSON codec (the one JSON module of moonmcp; the work is done in C,
-- core/ljson.c, registered as "moonmcp.jsonc").
--
-- How JSON maps to Lua
--   object  <-> plain table with string keys. Decoding: duplicate keys, the last wins.
--   array   <-> table with the array metatable (json.array_mt). decode() always sets it,
--               so `[]` and `{}` stay distinguishable; use json.array(t) to build one.
--   null    <-> json.null, a lightuserdata NULL (the same value as cjson.null). A nil
--               argument to encode() also gives `null`; nil cannot be stored in a table.
--   number  <-> Lua number. Integers up to 2^53 are exact; integral numbers below 2^63
--               print as integers (so JSON-RPC ids echo exactly), others as the shortest
--               text that reads back as the same double.
--
-- How encode() sees a table
--   - with the array metatable: an array (empty -> `[]`); keys must be exactly 1..n.
--   - empty, without it: `{}`.
--   - keys exactly 1..n: an array.
--   - at least one string key, any others numbers: an object (number keys stringified).
--   - anything else (holes, only non-sequence number keys, boolean keys...): an error.
--   Other metatables are ignored (access is raw: no __index, __pairs or __tojson).
--
-- Errors
--   decode(text) returns nil, "<what> at offset <n>" (0-based byte offset) for malformed
--   or non-UTF-8 text and for nesting deeper than 1000. encode(value) raises
--   "json.encode: cannot encode <what> at <JSON Pointer>" for functions, userdata, NaN,
--   infinities, invalid tables and nesting deeper than 1000 (cycles end there).
--   Strings: invalid UTF-8 bytes are encoded as U+FFFD; `\uD800`-style lone surrogates
--   in input decode to U+FFFD.
local jsonc = require("moonmcp.jsonc")

local error = error
local getmetatable = getmetatable
local setmetatable = setmetatable
local type = type

local ARRAY_MT = jsonc.array_mt
local kind = jsonc.kind

local _M = {}

-- The null sentinel and the array metatable.
_M.null = jsonc.null
_M.array_mt = ARRAY_MT

-- decode(text) -> value | nil, message (text: a string, or bytes from the host)
_M.decode = jsonc.decode

-- encode(value) -> string; raises on an unencodable value.
_M.encode = jsonc.encode

-- encode_bytes(value) -> bytes: the same text as a host bytes value, which LuaJIT does
-- not intern (core/bytes.c says why): for a message that is only written out.
_M.encode_bytes = jsonc.encode_bytes

-- kind(value) -> "null" | "boolean" | "number" | "string" | "array" | "object"
--              | nil, reason
-- How encode() would see value, without looking inside it (so a table holding a
-- function is still an "object"). A table with the array metatable is always "array".
_M.kind = kind

-- array(t) -> t: marks t (default: a new table) as a JSON array and returns it.
function _M.array(t)
    if t == nil then
        return setmetatable({}, ARRAY_MT)
    end
    if type(t) ~= "table" then
        error("json.array: expected a table or nil, got " .. type(t), 2)
    end
    return setmetatable(t, ARRAY_MT)
end

-- is_array(v) -> boolean: v is a table encode() writes as a JSON array.
function _M.is_array(v)
    if type(v) ~= "table" then
        return false
    end
    if getmetatable(v) == ARRAY_MT then
        return true
    end
    -- a plain array has keys 1..n with n > 0: without v[1] it cannot be one (this spares
    -- objects, the common case on the hot path, the scan of their keys)
    return v[1] ~= nil and kind(v) == "array"
end

-- is_object(v) -> boolean: v is a table encode() writes as a JSON object (so an
-- empty table without the array metatable is an object).
function _M.is_object(v)
    return type(v) == "table" and kind(v) == "object"
end

return _M

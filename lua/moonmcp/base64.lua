-- moonmcp.base64 — Base64 (RFC 4648 §4) and base64url (§5), in Lua with LuaJIT's bit
-- library.
--
-- MCP carries binary data as standard base64 (ImageContent.data, AudioContent.data,
-- BlobResourceContents.blob); pagination cursors use base64url without padding so they
-- survive URLs and headers unchanged.
--
--   encode(bytes) -> text                standard alphabet, padded with "="
--   decode(text)  -> bytes | nil, err    strict: alphabet, length and padding are checked
--   encode_url(bytes) -> text            "-" and "_", no padding
--   decode_url(text)  -> bytes | nil, err  accepts the unpadded form only
--
-- The decoders reject anything that is not canonical base64 of their alphabet (other
-- characters, whitespace, misplaced or missing padding, non-zero bits in the padding
-- positions), so a value that decodes re-encodes to the very same text.
local bit = require "bit"

local band, bor, lshift, rshift = bit.band, bit.bor, bit.lshift, bit.rshift
local byte, char, concat, type, error, unpack = string.byte, string.char, table.concat, type, error, unpack

local _M = {}

local STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

-- alphabet -> { enc = { [0..63] = byte }, dec = { [byte] = 0..63 } }
local function tables(alphabet)
  local enc, dec = {}, {}
  for i = 1, 64 do
    local b = byte(alphabet, i)
    enc[i - 1] = b
    dec[b] = i - 1
  end
  return enc, dec
end

local STD_ENC, STD_DEC = tables(STD)
local URL_ENC, URL_DEC = tables(URL)

-- Output is built in chunks of CHUNK groups so no call passes too many arguments to char.
local CHUNK = 1024

local function encode(s, enc, pad)
  if type(s) ~= "string" then
    error("base64.encode: expected a string, got " .. type(s), 3)
  end
  local n = #s
  local parts, buf, nb = {}, {}, 0
  local full = n - n % 3
  for i = 1, full, 3 do
    local a, b, c = byte(s, i, i + 2)
    local v = bor(lshift(a, 16), lshift(b, 8), c)
    buf[nb + 1] = enc[rshift(v, 18)]
    buf[nb + 2] = enc[band(rshift(v, 12), 63)]
    buf[nb + 3] = enc[band(rshift(v, 6), 63)]
    buf[nb + 4] = enc[band(v, 63)]
    nb = nb + 4
    if nb >= CHUNK * 4 then
      parts[#parts + 1] = char(unpack(buf, 1, nb))
      nb = 0
    end
  end
  local rest = n - full
  if rest > 0 then
    local a, b = byte(s, full + 1, n)
    local v = bor(lshift(a, 16), lshift(b or 0, 8))
    buf[nb + 1] = enc[rshift(v, 18)]
    buf[nb + 2] = enc[band(rshift(v, 12), 63)]
    nb = nb + 2
    if rest == 2 then
      nb = nb + 1
      buf[nb] = enc[band(rshift(v, 6), 63)]
    end
    if pad then
      for _ = rest, 2 do
        nb = nb + 1
        buf[nb] = 61 -- "="
      end
    end
  end
  if nb > 0 then
    parts[#parts + 1] = char(unpack(buf, 1, nb))
  end
  return concat(parts)
end

-- Decodes the unpadded text s (length mod 4 ~= 1).
local function decode(s, dec)
  local n = #s
  local rest = n % 4
  if rest == 1 then
    return nil, "invalid base64 length"
  end
  local parts, buf, nb = {}, {}, 0
  local full = n - rest
  for i = 1, full, 4 do
    local a, b, c, d = byte(s, i, i + 3)
    a, b, c, d = dec[a], dec[b], dec[c], dec[d]
    if not (a and b and c and d) then
      return nil, "invalid base64 character near offset " .. (i - 1)
    end
    local v = bor(lshift(a, 18), lshift(b, 12), lshift(c, 6), d)
    buf[nb + 1] = rshift(v, 16)
    buf[nb + 2] = band(rshift(v, 8), 255)
    buf[nb + 3] = band(v, 255)
    nb = nb + 3
    if nb >= CHUNK * 3 then
      parts[#parts + 1] = char(unpack(buf, 1, nb))
      nb = 0
    end
  end
  if rest > 0 then
    local a, b, c = byte(s, full + 1, n)
    a, b = dec[a], dec[b]
    c = c and dec[c]
    if not (a and b) or (rest == 3 and not c) then
      return nil, "invalid base64 character near offset " .. full
    end
    local v = bor(lshift(a, 18), lshift(b, 12), lshift(c or 0, 6))
    -- canonical form: the bits below the last whole byte are zero
    if (rest == 2 and band(v, 0xFFFF) ~= 0) or (rest == 3 and band(v, 0xFF) ~= 0) then
      return nil, "invalid base64: non-zero padding bits"
    end
    nb = nb + 1
    buf[nb] = rshift(v, 16)
    if rest == 3 then
      nb = nb + 1
      buf[nb] = band(rshift(v, 8), 255)
    end
  end
  if nb > 0 then
    parts[#parts + 1] = char(unpack(buf, 1, nb))
  end
  return concat(parts)
end

--- Standard base64 with padding.
function _M.encode(s)
  return encode(s, STD_ENC, true)
end

--- Decodes standard, padded base64. Returns the bytes, or nil and a message.
function _M.decode(s)
  if type(s) ~= "string" then
    error("base64.decode: expected a string, got " .. type(s), 2)
  end
  local n = #s
  if n % 4 ~= 0 then
    return nil, "invalid base64 length (not a multiple of 4)"
  end
  local body = s
  if byte(s, n) == 61 then
    body = byte(s, n - 1) == 61 and s:sub(1, n - 2) or s:sub(1, n - 1)
  end
  return decode(body, STD_DEC)
end

--- base64url without padding.
function _M.encode_url(s)
  return encode(s, URL_ENC, false)
end

--- Decodes unpadded base64url. Returns the bytes, or nil and a message.
function _M.decode_url(s)
  if type(s) ~= "string" then
    error("base64.decode_url: expected a string, got " .. type(s), 2)
  end
  return decode(s, URL_DEC)
end

--- Is s canonical standard base64 (what MCP's data / blob fields must hold)?
function _M.is_valid(s)
  return type(s) == "string" and _M.decode(s) ~= nil
end

return _M

-- time — the current time in any IANA time zone (Europe/Paris, America/New_York, UTC...),
-- read from the system's zoneinfo files (Debian package tzdata).
local moonmcp = require "moonmcp"

local ZONEINFO = os.getenv("ZONEINFO") or "/usr/share/zoneinfo"

-- Reads a big-endian signed integer of n bytes at position pos of s.
local function int(s, pos, n)
  local v = 0
  for i = 0, n - 1 do
    v = v * 256 + s:byte(pos + i)
  end
  if v >= 2 ^ (8 * n - 1) then
    v = v - 2 ^ (8 * n)
  end
  return v
end

-- Parses a TZif file (RFC 8536) and returns the UTC offset (seconds), the abbreviation
-- and whether DST is in effect at time t. Uses the 64-bit (v2+) block when present.
local function offset_at(data, t)
  if data:sub(1, 4) ~= "TZif" then
    return nil, "not a TZif file"
  end
  local function header(pos)
    return {
      isutcnt = int(data, pos + 20, 4), isstdcnt = int(data, pos + 24, 4), leapcnt = int(data, pos + 28, 4),
      timecnt = int(data, pos + 32, 4), typecnt = int(data, pos + 36, 4), charcnt = int(data, pos + 40, 4),
    }
  end
  local h, pos, size = header(1), 45, 4
  if data:byte(5) >= 50 then -- version 2 or later: skip the 32-bit block
    pos = pos + h.timecnt * 5 + h.typecnt * 6 + h.charcnt + h.leapcnt * 8 + h.isstdcnt + h.isutcnt
    h = header(pos)
    pos, size = pos + 44, 8
  end
  local times, idx = pos, pos + h.timecnt * size
  local types = idx + h.timecnt
  local chars = types + h.typecnt * 6
  local which = 0
  for i = 0, h.timecnt - 1 do
    if int(data, times + i * size, size) <= t then
      which = data:byte(idx + i)
    else
      break
    end
  end
  local ttinfo = types + which * 6
  local utoff, isdst, abbr_at = int(data, ttinfo, 4), data:byte(ttinfo + 4), data:byte(ttinfo + 5)
  local abbr = data:match("^[^%z]*", chars + abbr_at)
  return utoff, abbr, isdst == 1
end

return {
  tools = {
    current_time = {
      title = "Current time",
      description = "The current date and time in an IANA time zone, e.g. Europe/Paris or America/New_York.",
      input = {
        type = "object",
        properties = {
          zone = { type = "string", description = "IANA time zone name", pattern = "^[A-Za-z_]+(/[A-Za-z0-9_+-]+)*$",
            default = "UTC" },
        },
      },
      output = {
        type = "object",
        properties = {
          zone = { type = "string" }, iso = { type = "string" }, offset = { type = "string" },
          abbreviation = { type = "string" }, dst = { type = "boolean" },
        },
        required = { "zone", "iso", "offset" },
      },
      annotations = { readOnlyHint = true, openWorldHint = false },
      handler = function(args)
        local zone = args.zone or "UTC"
        local f = io.open(ZONEINFO .. "/" .. zone, "rb")
        if not f then
          return nil, "unknown time zone: " .. zone .. " (is tzdata installed?)"
        end
        local data = f:read("*a")
        f:close()
        local now = os.time()
        local utoff, abbr, dst = offset_at(data, now)
        if not utoff then
          return nil, zone .. ": " .. abbr
        end
        local sign = utoff < 0 and "-" or "+"
        local a = math.abs(utoff)
        local offset = ("%s%02d:%02d"):format(sign, math.floor(a / 3600), math.floor(a % 3600 / 60))
        moonmcp.log.debug("time zone lookup", { zone = zone, offset = offset })
        return {
          zone = zone,
          iso = os.date("!%Y-%m-%dT%H:%M:%S", now + utoff) .. offset,
          offset = offset,
          abbreviation = abbr,
          dst = dst,
        }
      end,
    },
  },
}

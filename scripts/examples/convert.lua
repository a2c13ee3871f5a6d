-- convert — unit conversion for length, mass, volume, speed, data size and temperature.

-- factor to the base unit of each dimension
local UNITS = {
  length = { m = 1, km = 1000, cm = 0.01, mm = 0.001, mi = 1609.344, yd = 0.9144, ft = 0.3048, ["in"] = 0.0254,
    nmi = 1852 },
  mass = { kg = 1, g = 0.001, mg = 1e-6, t = 1000, lb = 0.45359237, oz = 0.028349523125, st = 6.35029318 },
  volume = { l = 1, ml = 0.001, m3 = 1000, gal = 3.785411784, qt = 0.946352946, pt = 0.473176473,
    cup = 0.2365882365, floz = 0.0295735295625 },
  speed = { ["m/s"] = 1, ["km/h"] = 1 / 3.6, mph = 0.44704, kn = 1852 / 3600 },
  data = { B = 1, KB = 1e3, MB = 1e6, GB = 1e9, TB = 1e12, KiB = 1024, MiB = 1024 ^ 2, GiB = 1024 ^ 3, TiB = 1024 ^ 4 },
}

local TEMPERATURE = {
  C = { to = function(v) return v end, from = function(v) return v end },
  F = { to = function(v) return (v - 32) * 5 / 9 end, from = function(v) return v * 9 / 5 + 32 end },
  K = { to = function(v) return v - 273.15 end, from = function(v) return v + 273.15 end },
}

local function dimension_of(unit)
  for dim, units in pairs(UNITS) do
    if units[unit] then
      return dim
    end
  end
end

local function known_units()
  local all = {}
  for _, units in pairs(UNITS) do
    for u in pairs(units) do
      all[#all + 1] = u
    end
  end
  for u in pairs(TEMPERATURE) do
    all[#all + 1] = u
  end
  table.sort(all)
  return table.concat(all, ", ")
end

return {
  tools = {
    convert_units = {
      title = "Convert units",
      description = "Convert a value between units of the same kind: length (m, km, mi, ft, in...), "
        .. "mass (kg, lb, oz...), volume (l, gal, cup...), speed (km/h, mph, kn, m/s), data (MB, GiB...) "
        .. "and temperature (C, F, K).",
      input = {
        type = "object",
        properties = {
          value = { type = "number" },
          from = { type = "string", description = "unit of value" },
          to = { type = "string", description = "unit to convert to" },
        },
        required = { "value", "from", "to" },
        additionalProperties = false,
      },
      annotations = { readOnlyHint = true, idempotentHint = true, openWorldHint = false },
      handler = function(args)
        local v, from, to = args.value, args.from, args.to
        local result
        if TEMPERATURE[from] and TEMPERATURE[to] then
          result = TEMPERATURE[to].from(TEMPERATURE[from].to(v))
        else
          local df, dt = dimension_of(from), dimension_of(to)
          if not df or not dt then
            return nil, ("unknown unit %q; known units: %s"):format(not df and from or to, known_units())
          end
          if df ~= dt then
            return nil, ("cannot convert %s (%s) to %s (%s)"):format(from, df, to, dt)
          end
          result = v * UNITS[df][from] / UNITS[dt][to]
        end
        result = tonumber(("%.10g"):format(result))
        return { value = result, unit = to, text = ("%s %s = %s %s"):format(v, from, result, to) }
      end,
    },
  },
}

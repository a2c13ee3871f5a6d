-- moonmcp.flags — the command line's flag parser, shared by every command.
--
--   local opts, err = flags.parse(args, {
--     ["--listen"] = { key = "listen", value = "HOST:PORT" },   -- takes a value
--     ["--stdio"]  = { key = "stdio" },                         -- a switch (true)
--     ["--no-watch"] = { key = "watch", set = false },          -- a switch with its value
--   })
-- Accepts "--flag value" and "--flag=value"; -h/--help set opts.help; "--" ends the
-- flags; an unknown flag or a missing value is an error (nil, message). Everything else
-- is positional, in order, in opts.args.
local _M = {}

function _M.parse(args, spec)
  local opts = { args = {} }
  local i = 1
  while i <= #args do
    local a = args[i]
    local flag, inline = a:match("^(%-%-[%w-]+)=(.*)$")
    if flag then
      a = flag
    end
    local s = spec[a]
    if s then
      if s.value then
        local v = inline
        if v == nil then
          i = i + 1
          v = args[i]
        end
        if v == nil then
          return nil, a .. " needs " .. s.value
        end
        opts[s.key] = v
      else
        if s.set == nil then
          opts[s.key] = true
        else
          opts[s.key] = s.set
        end
      end
    elseif a == "-h" or a == "--help" then
      opts.help = true
    elseif a == "--" then
      for j = i + 1, #args do
        opts.args[#opts.args + 1] = args[j]
      end
      break
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      return nil, "unknown option " .. a
    else
      opts.args[#opts.args + 1] = a
    end
    i = i + 1
  end
  return opts
end

return _M

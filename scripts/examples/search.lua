-- search — find the lines matching a regular expression in the files under a root folder
-- (moonmcp.fs on the thread pool: the call parks on every read; PCRE2 regexes).
--
-- The root is $MOONMCP_FILES_ROOT (default: this examples folder), as for files.lua.
-- Hidden entries (".name") are skipped; files over 1 MiB and binary files are not read.
local fs = require "moonmcp.fs"
local regex = require "moonmcp.regex"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local ROOT = os.getenv("MOONMCP_FILES_ROOT") or here
local MAX_FILE = 1024 * 1024

local function walk(dir, rel, out, limit)
  for _, name in ipairs(fs.list(dir) or {}) do
    if #out >= limit then
      return
    end
    if name:sub(1, 1) ~= "." then
      local path, relpath = dir .. "/" .. name, rel == "" and name or rel .. "/" .. name
      local st = fs.stat(path)
      if st and st.type == "directory" then
        walk(path, relpath, out, limit)
      elseif st and st.type == "file" then
        out[#out + 1] = { path = path, rel = relpath, size = st.size }
      end
    end
  end
end

return {
  tools = {
    search_files = {
      title = "Search files",
      description = "Search the text files under the configured root for lines matching a regular "
        .. "expression (PCRE2 syntax); returns file, line number and line for each match.",
      input = {
        type = "object",
        properties = {
          pattern = { type = "string", minLength = 1, maxLength = 1000 },
          max_matches = { type = "integer", minimum = 1, maximum = 1000, default = 100 },
        },
        required = { "pattern" },
        additionalProperties = false,
      },
      annotations = { readOnlyHint = true, openWorldHint = false },
      handler = function(args)
        local re, err = regex.compile(args.pattern)
        if not re then
          return nil, err
        end
        local files = {}
        walk(ROOT, "", files, 10000)
        table.sort(files, function(a, b) return a.rel < b.rel end)
        local matches, limit, scanned = {}, args.max_matches or 100, 0
        for _, f in ipairs(files) do
          if #matches >= limit then
            break
          end
          if f.size <= MAX_FILE then
            local data = fs.read(f.path)
            if data and not data:find("\0", 1, true) then
              scanned = scanned + 1
              local n = 0
              for line in (data .. "\n"):gmatch("(.-)\r?\n") do
                n = n + 1
                if re:test(line) then
                  matches[#matches + 1] = { file = f.rel, line = n, text = line:sub(1, 500) }
                  if #matches >= limit then
                    break
                  end
                end
              end
            end
          end
        end
        return { matches = matches, files_scanned = scanned, truncated = #matches >= limit }
      end,
    },
  },
}

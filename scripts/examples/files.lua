-- files — read-only access to the files under one root folder, as resources.
--
--   template  file:///{+path}   any file or folder under the root (text, or base64 for
--                               binary files); a folder reads as its listing
--   resource  the root folder itself, so resources/list shows where to start
--   completion of {path}: the entries of the folder typed so far
--
-- The root is $MOONMCP_FILES_ROOT, or this examples folder when it is unset. Nothing
-- outside the root is ever read: the path is resolved with realpath(3) — which also
-- follows symbolic links and removes ".." — and must then lie inside the resolved root;
-- anything else is "not found", so the answer does not even reveal that a file exists.
-- Files larger than MAX_BYTES are refused.
local moonmcp = require "moonmcp"
local fs = require "moonmcp.fs" -- on the thread pool: a read parks only its own call
local ffi = require "ffi"

pcall(ffi.cdef, [[
  char *realpath(const char *path, char *resolved_path);
  void free(void *ptr);
]])

local MAX_BYTES = 1024 * 1024

-- The canonical absolute path of p, or nil (missing, unreadable, or not a string).
local function realpath(p)
  if type(p) ~= "string" or p:find("\0", 1, true) then
    return nil
  end
  local r = ffi.C.realpath(p, nil)
  if r == nil then
    return nil
  end
  local s = ffi.string(r)
  ffi.C.free(r)
  return s
end

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local ROOT = realpath(os.getenv("MOONMCP_FILES_ROOT") or here)
assert(ROOT, "files.lua: the root folder does not exist: " .. tostring(os.getenv("MOONMCP_FILES_ROOT") or here))

local function inside_root(p)
  return p == ROOT or (ROOT == "/" and p:sub(1, 1) == "/") or p:sub(1, #ROOT + 1) == ROOT .. "/"
end

local function uri_of(p)
  return moonmcp.uri_template.expand("file:///{+path}", { path = p:sub(2) })
end

local MIME = {
  txt = "text/plain", md = "text/markdown", lua = "text/x-lua", c = "text/x-c", h = "text/x-c",
  py = "text/x-python", sh = "text/x-shellscript", js = "text/javascript", ts = "text/x-typescript",
  html = "text/html", css = "text/css", csv = "text/csv", json = "application/json", xml = "application/xml",
  yaml = "application/yaml", yml = "application/yaml", toml = "application/toml",
  png = "image/png", jpg = "image/jpeg", jpeg = "image/jpeg", gif = "image/gif", webp = "image/webp",
  svg = "image/svg+xml", pdf = "application/pdf", wav = "audio/wav", mp3 = "audio/mpeg", ogg = "audio/ogg",
  zip = "application/zip", gz = "application/gzip",
}

-- Is s valid UTF-8 without NUL bytes (so it can travel as text)?
local function is_text(s)
  local i, n = 1, #s
  while i <= n do
    local b = s:byte(i)
    local len = b < 0x80 and 1 or (b >= 0xC2 and b <= 0xDF) and 2 or (b >= 0xE0 and b <= 0xEF) and 3
      or (b >= 0xF0 and b <= 0xF4) and 4 or nil
    if not len or b == 0 or i + len - 1 > n then
      return false
    end
    for j = i + 1, i + len - 1 do
      local c = s:byte(j)
      if c < 0x80 or c > 0xBF then
        return false
      end
    end
    i = i + len
  end
  return true
end

local function is_dir(p)
  local st = fs.stat(p)
  return st ~= nil and st.type == "directory"
end

local function listing(dir)
  local lines = {}
  for _, name in ipairs(fs.list(dir) or {}) do
    lines[#lines + 1] = name .. (is_dir(dir .. "/" .. name) and "/" or "")
  end
  return table.concat(lines, "\n")
end

-- Reads the file or folder at the absolute path p (already checked to be inside ROOT).
local function read_path(p)
  local st, err = fs.stat(p)
  if not st then
    return nil, err
  end
  if st.type == "directory" then
    return { text = listing(p), mimeType = "inode/directory" }
  end
  if st.size > MAX_BYTES then
    error(("%s is larger than %d bytes"):format(uri_of(p), MAX_BYTES), 0)
  end
  local data
  data, err = fs.read(p)
  if not data then
    return nil, err
  end
  local ext = p:match("%.([%w]+)$")
  local mime = ext and MIME[ext:lower()]
  local textual = mime == nil or mime:match("^text/") or mime:match("json$") or mime:match("xml$")
    or mime:match("yaml$") or mime:match("toml$")
  if textual and is_text(data) then
    return { text = data, mimeType = mime or "text/plain" }
  end
  return { bytes = data, mimeType = mime or "application/octet-stream" }
end

local function read(uri, vars)
  local p = realpath("/" .. vars.path)
  if not p or not inside_root(p) then
    return nil, "outside the root or missing: " .. uri
  end
  return read_path(p)
end

-- Completes a path: the entries of the deepest folder typed so far that start with the
-- rest. Only folders inside the root are listed; above it, the root is the suggestion.
local function complete_path(value)
  local root_rel = ROOT:sub(2)
  if root_rel ~= "" and (root_rel .. "/"):sub(1, #value) == value then
    return { root_rel .. "/" }
  end
  local dir, prefix = value:match("^(.*)/([^/]*)$")
  if not dir then
    dir, prefix = "", value
  end
  local real = realpath("/" .. dir)
  if not real or not inside_root(real) or not is_dir(real) then
    return {}
  end
  local out = {}
  for _, name in ipairs(fs.list(real) or {}) do
    if name:sub(1, #prefix) == prefix and name:sub(1, 1) ~= "." then
      out[#out + 1] = (dir ~= "" and dir .. "/" or "") .. name .. (is_dir(real .. "/" .. name) and "/" or "")
    end
  end
  return out
end

return {
  resources = {
    [uri_of(ROOT)] = {
      name = "files-root",
      title = "Files: " .. ROOT,
      description = "The root folder of the files this server exposes (its listing, one entry a line; "
        .. "folders end with /). Read entries through the file:///{+path} template.",
      mimeType = "inode/directory",
      read = function()
        return read_path(ROOT)
      end,
    },
  },

  templates = {
    ["file:///{+path}"] = {
      name = "files",
      title = "Files",
      description = "A file or folder under " .. ROOT .. " (read-only). Text files come as text, others "
        .. "as base64; folders as their listing.",
      read = read,
      complete = { path = complete_path },
    },
  },
}

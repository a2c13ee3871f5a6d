-- moonmcp.fs — files for handlers, on libuv's thread pool (core/lfs.c underneath): the
-- call parks while the work runs; other calls keep running.
--
--   fs.read(path)                  -> data
--   fs.write(path, data)           -> true   (creates or truncates)
--   fs.append(path, data)          -> true   (creates or appends)
--   fs.stat(path)                  -> { size, mtime (seconds), type = "file" |
--                                       "directory" | "other", mode (permission bits) }
--   fs.exists(path)                -> true | false
--   fs.list(dir)                   -> sorted names (without . and ..)
--   fs.mkdir(path, { parents = true })  -> true  (parents: existing directories are fine)
--   fs.remove(path, { recursive = true }) -> true  (a file or an empty directory; with
--                                       recursive a whole tree, symbolic links not followed)
--   fs.rename(from, to)            -> true
-- Failures return nil, "path: message" (e.g. "x: no such file or directory"); bad
-- arguments raise. A cancelled call raises "cancelled" (work already running on the pool
-- completes and is discarded).
local core = require "moonmcp.core"
local host = require "moonmcp.host"

local type, error = type, error
local await, c_fs = host.await, core.fs

local _M = {}

local function check_path(p, name, fn)
  if type(p) ~= "string" or p == "" then
    error("fs." .. fn .. ": " .. name .. " must be a non-empty string", 3)
  end
end

local function check_opts(opts, fn)
  if opts ~= nil and type(opts) ~= "table" then
    error("fs." .. fn .. ": options must be a table", 3)
  end
  return opts or {}
end

function _M.read(path)
  check_path(path, "path", "read")
  return await(c_fs("read", path))
end

function _M.write(path, data)
  check_path(path, "path", "write")
  if type(data) ~= "string" then
    error("fs.write: data must be a string", 2)
  end
  return await(c_fs("write", path, data))
end

function _M.append(path, data)
  check_path(path, "path", "append")
  if type(data) ~= "string" then
    error("fs.append: data must be a string", 2)
  end
  return await(c_fs("append", path, data))
end

function _M.stat(path)
  check_path(path, "path", "stat")
  return await(c_fs("stat", path))
end

function _M.exists(path)
  check_path(path, "path", "exists")
  return await(c_fs("stat", path)) ~= nil
end

function _M.list(dir)
  check_path(dir, "dir", "list")
  return await(c_fs("list", dir))
end

function _M.mkdir(path, opts)
  check_path(path, "path", "mkdir")
  return await(c_fs("mkdir", path, check_opts(opts, "mkdir").parents == true))
end

function _M.remove(path, opts)
  check_path(path, "path", "remove")
  return await(c_fs("remove", path, check_opts(opts, "remove").recursive == true))
end

function _M.rename(from, to)
  check_path(from, "from", "rename")
  check_path(to, "to", "rename")
  return await(c_fs("rename", from, to))
end

return _M

-- moonmcp.accessors — the built-in context accessors: request id, trace, principal and
-- log fields (registered in this order, so log fields can read the others).
--
-- The request context they capture from is built by the transport and the request
-- filters: { request_id, headers, meta (the message's params._meta), principal, log (the
-- fields filters added; absent without filters) }.
--   ctx.request_id  X-Request-Id, or a generated id
--   ctx.trace       { trace_id, span_id, parent_id, flags, traceparent }: W3C trace
--                   context from the traceparent header or _meta.traceparent; the call
--                   gets its own span id whose parent is the incoming span (ids are made
--                   when first read, so pairs() shows only those read so far)
--   ctx.principal   whatever an auth filter set on the request context (a copy)
--   ctx.log         the fields every log line of the call carries (request_id, plus the
--                   request's log fields; the protocol layer adds tool; moonmcp.log adds
--                   trace_id)
local core = require "moonmcp.core"
local context = require "moonmcp.context"

local type, pairs, next, rawset, setmetatable = type, pairs, next, rawset, setmetatable
local random_hex = core.random_hex
local new_tab = require "table.new"

local _M = {}

-- A call's ids are made when first read (most calls never read them): trace_id (unless
-- the incoming trace gave one), span_id, and the traceparent to send downstream.
local TRACE_MT = {
  __index = function(t, k)
    local v
    if k == "trace_id" then
      v = random_hex(16)
    elseif k == "span_id" then
      v = random_hex(8)
    elseif k == "traceparent" then
      v = "00-" .. t.trace_id .. "-" .. t.span_id .. "-" .. t.flags
    else
      return nil
    end
    rawset(t, k, v)
    return v
  end,
}

--- Parses a W3C traceparent header value. Returns { trace_id, parent_id, flags } or nil.
function _M.parse_traceparent(v)
  if type(v) ~= "string" then
    return nil
  end
  local version, trace_id, parent_id, flags = v:match("^%s*(%x%x)%-(%x+)%-(%x+)%-(%x%x)")
  if not version or version == "ff" or #trace_id ~= 32 or #parent_id ~= 16 then
    return nil
  end
  trace_id, parent_id = trace_id:lower(), parent_id:lower()
  if trace_id == ("0"):rep(32) or parent_id == ("0"):rep(16) then
    return nil
  end
  return { trace_id = trace_id, parent_id = parent_id, flags = flags:lower() }
end

function _M.install()
  context.register_builtin {
    key = "request_id",
  }
  context.register_builtin {
    key = "trace",
    capture = function(req)
      local meta = type(req.meta) == "table" and req.meta or nil
      local headers = req.headers or {}
      return _M.parse_traceparent(headers.traceparent) or (meta and _M.parse_traceparent(meta.traceparent))
    end,
    restore = function(incoming, ctx)
      local trace -- only the fields known now (the ids are made when read)
      if incoming then
        trace = { trace_id = incoming.trace_id, parent_id = incoming.parent_id, flags = incoming.flags }
      else
        trace = { flags = "01" }
      end
      ctx.trace = setmetatable(trace, TRACE_MT)
    end,
  }
  context.register_builtin {
    key = "principal",
  }
  context.register_builtin {
    key = "log",
    restore = function(fields, ctx)
      local log = new_tab(0, 2) -- request_id, and the tool's name (moonmcp.methods.tools)
      log.request_id = ctx.request_id
      if type(fields) == "table" and next(fields) ~= nil then
        for k, v in pairs(fields) do
          if type(v) ~= "table" then
            log[k] = v
          end
        end
      end
      ctx.log = log -- log lines add the trace id (moonmcp.log), read from ctx.trace when needed
    end,
  }
end

return _M

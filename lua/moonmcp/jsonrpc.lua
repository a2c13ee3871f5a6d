-- moonmcp.jsonrpc — the JSON-RPC 2.0 envelope: parsing and classifying one message,
-- building responses and errors, and the protocol-error value handlers raise.
--
-- Ids are echoed exactly: they are decoded by moonmcp.json (integers up to 2^53 exact)
-- and re-encoded by the same module. A protocol failure is raised with
-- jsonrpc.raise(code, message, data) and becomes a JSON-RPC error response; any other
-- error inside dispatch is an internal error (-32603) whose details go to the log only.
local json = require "moonmcp.json"

local type, setmetatable, getmetatable, error, floor = type, setmetatable, getmetatable, error, math.floor

local _M = {}

_M.PARSE_ERROR = -32700
_M.INVALID_REQUEST = -32600
_M.METHOD_NOT_FOUND = -32601
_M.INVALID_PARAMS = -32602
_M.INTERNAL_ERROR = -32603

local ProtocolError = {}
ProtocolError.__index = ProtocolError
ProtocolError.__tostring = function(e)
  return ("JSON-RPC error %d: %s"):format(e.code, e.message)
end

--- Raises a protocol error that dispatch turns into a JSON-RPC error response.
function _M.raise(code, message, data)
  error(setmetatable({ code = code, message = message, data = data }, ProtocolError), 0)
end

--- Is v a protocol error raised with jsonrpc.raise?
function _M.is_error(v)
  return getmetatable(v) == ProtocolError
end

--- Builds a protocol error value without raising it.
function _M.error_value(code, message, data)
  return setmetatable({ code = code, message = message, data = data }, ProtocolError)
end

local function valid_id(id)
  local t = type(id)
  return t == "string" or (t == "number" and id == floor(id) and id > -2 ^ 63 and id < 2 ^ 63)
end
_M.valid_id = valid_id

--- Classifies one decoded message.
--- Returns kind ("request" | "notification" | "response"), or nil, code, message, id.
function _M.classify(msg)
  if type(msg) ~= "table" or json.is_array(msg) then
    if type(msg) == "table" then
      return nil, _M.INVALID_REQUEST, "batch requests are not supported: send one JSON-RPC message per request"
    end
    return nil, _M.INVALID_REQUEST, "a JSON-RPC message must be an object"
  end
  local id = msg.id
  if msg.jsonrpc ~= "2.0" then
    return nil, _M.INVALID_REQUEST, 'jsonrpc must be "2.0"', valid_id(id) and id or nil
  end
  local method = msg.method
  if method ~= nil then
    if type(method) ~= "string" then
      return nil, _M.INVALID_REQUEST, "method must be a string", valid_id(id) and id or nil
    end
    local params = msg.params
    if params ~= nil and (type(params) ~= "table" or json.is_array(params)) then
      return nil, _M.INVALID_REQUEST, "params must be an object", valid_id(id) and id or nil
    end
    if id == nil then
      return "notification"
    end
    if not valid_id(id) then
      return nil, _M.INVALID_REQUEST, "id must be a string or an integer"
    end
    return "request"
  end
  if valid_id(id) and (msg.result ~= nil or msg.error ~= nil) then
    return "response"
  end
  return nil, _M.INVALID_REQUEST, "not a JSON-RPC request, notification or response", valid_id(id) and id or nil
end

--- Decodes and classifies text. Returns msg, kind, or nil, code, message, id.
function _M.parse(text)
  local msg, err = json.decode(text)
  if msg == nil then
    return nil, _M.PARSE_ERROR, "parse error: " .. err
  end
  local kind, code, message, id = _M.classify(msg)
  if not kind then
    return nil, code, message, id
  end
  return msg, kind
end

function _M.result(id, result)
  return { jsonrpc = "2.0", id = id, result = result }
end

function _M.error(id, code, message, data)
  return { jsonrpc = "2.0", id = id == nil and json.null or id,
    error = { code = code, message = message, data = data } }
end

function _M.notification(method, params)
  return { jsonrpc = "2.0", method = method, params = params }
end

function _M.request(id, method, params)
  return { jsonrpc = "2.0", id = id, method = method, params = params }
end

return _M

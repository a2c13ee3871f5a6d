-- spec/helpers/peers.lua — runs spec/peers/drive.mjs (a real MCP client) with Node 22 and
-- returns its report.
--
--   local peers = require "helpers.peers"
--   local run = peers.drive{ client = "sdk1", transport = { type = "http", url = s.url },
--                            steps = { { op = "listTools" }, ... } }
--   run.ok, run.connect, run.steps, run.received, run.sent, run.notifications, run.stderr
--   peers.step(run, "label") -> the record of the step with that label (error if missing)
--   peers.stdio_transport(paths) -> a stdio transport running this build's moonmcp
--   peers.answer_to / requests_during / handled_during: server->client requests (legacy
--   era) and what the client's handlers (plan.handlers) answered
-- The plan and the report are documented at the top of spec/peers/drive.mjs. Node 22 comes
-- from `bash spec/peers/install.sh` (run once per process; it is quiet and fast when the
-- peers are installed already).
local exec = require "moonmcp.exec"
local json = require "moonmcp.json"
local server = require "helpers.server"

local _M = {}

local node

--- The Node 22 binary (installs the pinned peers on first use).
function _M.node()
  if not node then
    local res = assert(exec.run { "bash", "spec/peers/install.sh", timeout = 300 })
    if res.code ~= 0 then
      error("spec/peers/install.sh failed:\n" .. res.stderr, 2)
    end
    node = res.stdout:match("^%s*(.-)%s*$")
  end
  return node
end

--- Runs the driver with plan; returns the decoded report. Raises when the driver printed
--- no JSON (a crash), with its stderr.
function _M.drive(plan, opts)
  opts = opts or {}
  local res = assert(exec.run {
    _M.node(), "spec/peers/drive.mjs", "-",
    stdin = json.encode(plan),
    timeout = opts.timeout or 40,
  })
  local report = res.stdout ~= "" and json.decode(res.stdout)
  if type(report) ~= "table" then
    error(("drive.mjs printed no report (exit %s%s):\n%s\n%s"):format(tostring(res.code),
      res.timed_out and ", timed out" or "", res.stdout, res.stderr), 2)
  end
  report.exit_code = res.code
  report.driver_stderr = res.stderr
  return report
end

--- A stdio transport that runs this build's moonmcp serving paths.
function _M.stdio_transport(paths, extra_args)
  local args = { "serve", "--stdio" }
  for _, a in ipairs(extra_args or {}) do
    args[#args + 1] = a
  end
  for _, p in ipairs(paths) do
    args[#args + 1] = p
  end
  return { type = "stdio", command = server.bin, args = args }
end

--- The step record with that label; raises (failing the test) when the run has none,
--- e.g. because the driver stopped early.
function _M.step(report, label)
  for _, s in ipairs(report.steps or {}) do
    if s.label == label then
      return s
    end
  end
  error(("no step %q in the driver's report (fatal: %s; connect error: %s)"):format(label,
    tostring(report.fatal), report.connectError and json.encode(report.connectError) or "none"), 2)
end

--- The raw messages the server sent during a step (received[r0..r1) of the driver), in
--- order, as records { t, via, exchange, msg }. pred(msg, record) filters.
function _M.received_during(report, step, pred)
  local list = {}
  local received = report.received or {}
  for i = step.r0 + 1, step.r1 do
    local r = received[i]
    if r.msg and (not pred or pred(r.msg, r)) then
      list[#list + 1] = r
    end
  end
  return list
end

--- The raw response (result or error) to the request with JSON-RPC id, and its record.
function _M.response_to(report, id)
  for _, r in ipairs(report.received or {}) do
    local m = r.msg
    if m and m.method == nil and m.id == id then
      return m, r
    end
  end
end

--- The client's answer (a response it sent) to the server->client request with JSON-RPC
--- id, and its record { t, via, exchange, msg }.
function _M.answer_to(report, id)
  for _, s in ipairs(report.sent or {}) do
    local m = s.msg
    if m and m.method == nil and m.id == id then
      return m, s
    end
  end
end

--- The server->client requests (a method and an id) the server sent during a step, in
--- order, as records { t, via, exchange, msg }.
function _M.requests_during(report, step)
  return _M.received_during(report, step, function(m)
    return m.method ~= nil and m.id ~= nil
  end)
end

--- What the client-side handlers (plan.handlers) answered during a step: handled[h0..h1)
--- of the driver, records { t, method, key, params, answer }.
function _M.handled_during(report, step)
  local list = {}
  for i = step.h0 + 1, step.h1 do
    list[#list + 1] = report.handled[i]
  end
  return list
end

return _M

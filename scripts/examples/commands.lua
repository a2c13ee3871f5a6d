-- commands — run one of a few read-only commands in a configured directory, with a
-- timeout (moonmcp.exec: no shell, the call parks while the program runs; a cancelled or
-- timed-out call kills it).
--
-- The directory is $MOONMCP_RUN_DIR (default: the server's working directory). Only the
-- programs in ALLOWED may run, and their arguments may not name paths outside that
-- directory (no absolute paths, no ".." segments) — this example is served by default,
-- so it must not hand a client an arbitrary command line or the whole file system.
local exec = require "moonmcp.exec"

local ALLOWED = { ls = true, cat = true, head = true, tail = true, wc = true, grep = true, date = true,
  uname = true, du = true, df = true }
local DIR = os.getenv("MOONMCP_RUN_DIR") or "."

local names = {}
for name in pairs(ALLOWED) do
  names[#names + 1] = name
end
table.sort(names)

return {
  tools = {
    run_command = {
      title = "Run a command",
      description = "Run a read-only command (" .. table.concat(names, ", ") .. ") with arguments in the "
        .. "configured directory; returns its exit code, stdout and stderr.",
      input = {
        type = "object",
        properties = {
          program = { type = "string", enum = names },
          args = { type = "array", items = { type = "string", maxLength = 4096 }, maxItems = 64 },
          timeout = { type = "number", minimum = 0.1, maximum = 60, default = 10 },
        },
        required = { "program" },
        additionalProperties = false,
      },
      annotations = { readOnlyHint = true, openWorldHint = false },
      handler = function(args)
        local argv = { args.program }
        for i, a in ipairs(args.args or {}) do
          if a:find("^/") or a:find("=/") or ("/" .. a .. "/"):find("/%.%./") then
            return nil, ("argument %q leaves the directory: use paths relative to it"):format(a)
          end
          argv[i + 1] = a
        end
        argv.cwd = DIR
        argv.timeout = args.timeout or 10
        argv.max_output = 1024 * 1024
        local res, err = exec.run(argv)
        if not res then
          return nil, args.program .. ": " .. err
        end
        if res.timed_out then
          return nil, ("%s did not finish within %g s and was stopped"):format(args.program, argv.timeout)
        end
        return { code = res.code, stdout = res.stdout, stderr = res.stderr }
      end,
    },
  },
}

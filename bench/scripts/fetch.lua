-- Bench fixture for bench/httpcalls.sh: a `fetch` tool doing one HTTP GET with
-- moonmcp.http (libcurl on the event loop; the call parks while the request runs) and
-- returning the status and the body's length.
local http = require "moonmcp.http"

return {
  tools = {
    fetch = {
      description = "GETs a URL; returns its status and body length.",
      input = { type = "object", properties = { url = { type = "string" } }, required = { "url" } },
      handler = function(args)
        local res, err = http.get(args.url)
        if not res then
          return nil, "fetch failed: " .. tostring(err)
        end
        return { status = res.status, bytes = #res.body }
      end,
    },
  },
}

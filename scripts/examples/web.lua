-- web — fetch a web page and report its status and title (moonmcp.http: libcurl on the
-- event loop, so the call parks while the page downloads and others keep being served).
local http = require "moonmcp.http"

local ENTITIES = { amp = "&", lt = "<", gt = ">", quot = '"', apos = "'", nbsp = " " }

local function title_of(html)
  local t = html:match("<[Tt][Ii][Tt][Ll][Ee][^>]*>(.-)</[Tt][Ii][Tt][Ll][Ee]%s*>")
  if not t then
    return nil
  end
  t = t:gsub("&(%a+);", ENTITIES):gsub("&#(%d+);", function(n)
    n = tonumber(n)
    return n and n < 128 and string.char(n) or "?"
  end)
  return (t:gsub("%s+", " "):match("^%s*(.-)%s*$"))
end

return {
  tools = {
    fetch_title = {
      title = "Fetch a page's title",
      description = "Fetch an http(s) URL and return the HTTP status, the final URL after redirects, the "
        .. "content type and the HTML title.",
      input = {
        type = "object",
        properties = {
          url = { type = "string", format = "uri", pattern = "^https?://", description = "http or https URL" },
          timeout = { type = "number", minimum = 0.1, maximum = 60, default = 10 },
        },
        required = { "url" },
        additionalProperties = false,
      },
      annotations = { readOnlyHint = true, openWorldHint = true },
      timeout = 70,
      handler = function(args)
        local res, err = http.get(args.url, { timeout = args.timeout or 10, max_body = 2 * 1024 * 1024 })
        if not res then
          return nil, "fetching " .. args.url .. " failed: " .. err
        end
        return {
          status = res.status,
          url = res.url or args.url,
          content_type = res.headers["content-type"],
          title = title_of(res.body or "") or "(no title)",
        }
      end,
    },
  },
}

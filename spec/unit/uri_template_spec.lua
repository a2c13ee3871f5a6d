-- Specs for moonmcp.uri_template: compiling, RFC 6570 expansion (the examples of the
-- RFC's section 3.2), and matching concrete URIs back to variables.
local uri_template = require "moonmcp.uri_template"
local json = require "moonmcp.json"

local arr = json.array

local function compile(t)
  return assert(uri_template.compile(t))
end

describe("moonmcp.uri_template", function()
  describe("compile", function()
    it("lists the variables in template order, once each", function()
      assert.same({ "path", "x", "y" }, compile("file:///{+path}{?x,y}{&x}").variables)
    end)

    it("rejects an unclosed brace", function()
      local t, err = uri_template.compile("file:///{path")
      assert.is_nil(t)
      assert.matches("unclosed", err)
    end)

    it("rejects a stray closing brace", function()
      assert.is_nil((uri_template.compile("file:///path}")))
    end)

    it("rejects reserved operators", function()
      local _, err = uri_template.compile("x:{=a}")
      assert.matches("reserved", err)
    end)

    it("rejects invalid variable names and modifiers", function()
      assert.is_nil((uri_template.compile("x:{a-b}")))
      assert.is_nil((uri_template.compile("x:{a:0}")))
      assert.is_nil((uri_template.compile("x:{a:10000}")))
      assert.is_nil((uri_template.compile("x:{}")))
    end)

    it("counts the literal characters (for ordering by specificity)", function()
      assert.equal(#"file:///logs/", compile("file:///logs/{name}").literal_length)
    end)

    it("tells a template from a plain URI", function()
      assert.is_true(uri_template.is_template("file:///{x}"))
      assert.is_false(uri_template.is_template("file:///x"))
    end)
  end)

  describe("expand (RFC 6570 section 3.2 examples)", function()
    local vars = {
      count = arr { "one", "two", "three" }, dom = arr { "example", "com" }, dub = "me/too",
      hello = "Hello World!", half = "50%", var = "value", who = "fred", base = "http://example.com/home/",
      path = "/foo/bar", list = arr { "red", "green", "blue" },
      keys = { semi = ";", dot = ".", comma = "," }, v = "6", x = "1024", y = "768", empty = "",
      empty_keys = {}, undef = json.null,
    }
    local cases = {
      { "{var}", "value" }, { "{hello}", "Hello%20World%21" }, { "{half}", "50%25" },
      { "O{empty}X", "OX" }, { "O{undef}X", "OX" }, { "{x,y}", "1024,768" },
      { "{x,hello,y}", "1024,Hello%20World%21,768" },
      { "?{x,empty}", "?1024," }, { "?{x,undef}", "?1024" }, { "{var:3}", "val" }, { "{var:30}", "value" },
      { "{list}", "red,green,blue" }, { "{list*}", "red,green,blue" }, { "{keys}", "comma,%2C,dot,.,semi,%3B" },
      { "{keys*}", "comma=%2C,dot=.,semi=%3B" },
      { "{+var}", "value" }, { "{+hello}", "Hello%20World!" }, { "{+half}", "50%25" },
      { "{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex" }, { "{+base}index", "http://example.com/home/index" },
      { "{+path}/here", "/foo/bar/here" }, { "here?ref={+path}", "here?ref=/foo/bar" },
      { "{+path:6}/here", "/foo/b/here" }, { "{+list*}", "red,green,blue" },
      { "{#var}", "#value" }, { "{#hello}", "#Hello%20World!" }, { "{#path:6}/here", "#/foo/b/here" },
      { "{#keys*}", "#comma=,,dot=.,semi=;" }, { "X{.var}", "X.value" }, { "X{.x,y}", "X.1024.768" },
      { "X{.list*}", "X.red.green.blue" }, { "X{.empty_keys}", "X" }, { "{/var}", "/value" },
      { "{/var,x}/here", "/value/1024/here" }, { "{/list*,path:4}", "/red/green/blue/%2Ffoo" },
      { "{/keys*}", "/comma=%2C/dot=./semi=%3B" }, { "{;x,y}", ";x=1024;y=768" },
      { "{;x,y,empty}", ";x=1024;y=768;empty" },
      { "{;list*}", ";list=red;list=green;list=blue" }, { "{;keys*}", ";comma=%2C;dot=.;semi=%3B" },
      { "{?x,y}", "?x=1024&y=768" }, { "{?x,y,empty}", "?x=1024&y=768&empty=" }, { "{?var:3}", "?var=val" },
      { "{?list}", "?list=red,green,blue" }, { "{?list*}", "?list=red&list=green&list=blue" },
      { "{?keys*}", "?comma=%2C&dot=.&semi=%3B" }, { "?fixed=yes{&x}", "?fixed=yes&x=1024" },
      { "{&var:3}", "&var=val" }, { "{count}", "one,two,three" }, { "{dom*}", "example,com" },
      { "{dub}", "me%2Ftoo" }, { "{who}", "fred" },
    }
    for _, case in ipairs(cases) do
      it(case[1] .. " -> " .. case[2], function()
        assert.equal(case[2], uri_template.expand(case[1], vars))
      end)
    end

    it("percent-encodes UTF-8 bytes and counts a prefix in characters", function()
      assert.equal("%C3%A9t%C3%A9", uri_template.expand("{s}", { s = "été" }))
      assert.equal("%C3%A9t", uri_template.expand("{s:2}", { s = "été" }))
    end)

    it("expands numbers and booleans as text", function()
      assert.equal("x/1/true", uri_template.expand("x/{a}/{b}", { a = 1, b = true }))
    end)
  end)

  describe("match", function()
    it("matches a level-1 variable within one segment", function()
      assert.same({ id = "123" }, uri_template.match("test://template/{id}/data", "test://template/123/data"))
    end)

    it("does not let a simple variable cross a slash", function()
      assert.is_nil(uri_template.match("test://template/{id}/data", "test://template/1/2/data"))
    end)

    it("does not match an empty simple variable", function()
      assert.is_nil(uri_template.match("test://template/{id}/data", "test://template//data"))
    end)

    it("percent-decodes values", function()
      assert.same({ name = "a b/c" }, uri_template.match("x:///{name}", "x:///a%20b%2Fc"))
    end)

    it("lets a reserved variable span segments", function()
      assert.same({ path = "src/main.lua" }, uri_template.match("file:///{+path}", "file:///src/main.lua"))
    end)

    it("backtracks a reserved variable to the literal after it", function()
      assert.same({ path = "a/b", rest = "c" }, uri_template.match("x:{+path}/end/{rest}", "x:a/b/end/c"))
    end)

    it("rejects a URI with a different literal", function()
      assert.is_nil(uri_template.match("file:///logs/{name}", "file:///other/x"))
      assert.is_nil(uri_template.match("file:///logs/{name}", "file:///logs/x/"))
    end)

    it("splits several simple variables on commas", function()
      assert.same({ x = "1024", y = "768" }, uri_template.match("map:{x,y}", "map:1024,768"))
    end)

    it("matches query variables in any order, and treats them as optional", function()
      local t = compile("search:{q}{?lang,limit}")
      assert.same({ q = "lua", lang = "en", limit = "5" }, t:match("search:lua?limit=5&lang=en"))
      assert.same({ q = "lua" }, t:match("search:lua"))
    end)

    it("rejects a query name the template does not declare", function()
      assert.is_nil(uri_template.match("search:{q}{?lang}", "search:lua?debug=1"))
    end)

    it("matches a fragment", function()
      assert.same({ page = "intro", section = "a/b" }, uri_template.match("doc:{page}{#section}", "doc:intro#a/b"))
    end)

    it("matches path segments, exploded into a list", function()
      local vars = uri_template.match("repo:{name}{/path*}", "repo:moon/lua/moonmcp/init.lua")
      assert.same({ name = "moon", path = { "lua", "moonmcp", "init.lua" } }, vars)
    end)

    it("matches a label expression", function()
      assert.same({ base = "report", ext = "pdf" }, uri_template.match("doc:{base}{.ext}", "doc:report.pdf"))
    end)

    it("matches path parameters", function()
      assert.same({ x = "1", y = "" }, uri_template.match("m:{;x,y}", "m:;x=1;y"))
    end)

    it("collects undeclared query names into an exploded map", function()
      assert.same({ q = "x", opts = { a = "1", b = "2" } }, uri_template.match("s:{q}{?opts*}", "s:x?a=1&b=2"))
    end)

    it("round-trips what it expands", function()
      local t = compile("file:///logs/{name}{?lines,level}")
      local vars = { name = "app 1.log", lines = "20", level = "warn" }
      assert.same(vars, t:match(t:expand(vars)))
    end)

    it("gives up on a hostile URI without running long", function()
      local t = compile("x:{+a}{+b}{+c}{+d}z")
      local started = os.clock()
      assert.is_nil(t:match("x:" .. ("y"):rep(3000)))
      assert.is_true(os.clock() - started < 1)
    end)
  end)
end)

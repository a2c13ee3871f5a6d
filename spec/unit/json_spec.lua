-- Specs for moonmcp.json (and the C codec under it, core/ljson.c).
local json = require("moonmcp.json")

local null = json.null

-- decode(text), then encode the result.
local function echo(text)
    local value, err = json.decode(text)
    assert(err == nil, err)
    return json.encode(value)
end

-- The message decode() gives for text (which must be rejected).
local function decode_error(text)
    local value, err = json.decode(text)
    assert.is_nil(value)
    assert.is_string(err)
    return err
end

-- The message encode() raises for value.
local function encode_error(value)
    local ok, err = pcall(json.encode, value)
    assert.is_false(ok)
    return err
end

describe("json", function()
    describe("decode", function()
        it("decodes scalars", function()
            assert.same({ true, false, "x", 1.5 }, {
                json.decode("true"), json.decode("false"), json.decode('"x"'), json.decode("1.5"),
            })
        end)

        it("decodes null to the null sentinel", function()
            assert.equal(null, json.decode("null"))
        end)

        it("decodes objects to plain tables", function()
            local v = json.decode('{"a": 1, "b": {"c": [true]}}')
            assert.is_nil(getmetatable(v))
            assert.same({ a = 1, b = { c = json.array({ true }) } }, v)
        end)

        it("decodes arrays with the array metatable", function()
            local v = json.decode("[1, 2, 3]")
            assert.equal(json.array_mt, getmetatable(v))
            assert.same({ 1, 2, 3 }, v)
        end)

        it("tells an empty array from an empty object", function()
            assert.is_true(json.is_array(json.decode("[]")))
            assert.is_false(json.is_object(json.decode("[]")))
            assert.is_true(json.is_object(json.decode("{}")))
            assert.is_false(json.is_array(json.decode("{}")))
        end)

        it("keeps nulls inside arrays and objects", function()
            local v = json.decode('{"a": null, "b": [null, 1]}')
            assert.equal(null, v.a)
            assert.equal(null, v.b[1])
            assert.equal(2, #v.b)
        end)

        it("lets the last duplicate key win", function()
            assert.same({ a = 2 }, json.decode('{"a": 1, "a": 2}'))
        end)

        it("accepts whitespace around and between tokens", function()
            assert.same({ a = json.array({ 1, 2 }) }, json.decode(' \t\r\n{ "a" : [ 1 , 2 ] }\n '))
        end)

        it("decodes integers exactly up to 2^53", function()
            assert.equal(2 ^ 53, json.decode("9007199254740992"))
            assert.equal(2 ^ 53 - 1, json.decode("9007199254740991"))
            assert.equal(-(2 ^ 53), json.decode("-9007199254740992"))
        end)

        it("rounds longer numbers to the nearest double", function()
            assert.equal(2 ^ 63, json.decode("9223372036854775808"))
            assert.equal(0.1, json.decode("0.1000000000000000000000001"))
            assert.equal(1e300, json.decode("1e300"))
            assert.equal(-2.5e-8, json.decode("-25e-9"))
        end)

        it("decodes -0 as negative zero", function()
            assert.equal(-math.huge, 1 / json.decode("-0"))
        end)

        it("decodes underflowing numbers to zero", function()
            assert.equal(0, json.decode("1e-400"))
        end)

        it("decodes all simple escapes", function()
            assert.equal('"\\/\b\f\n\r\t', json.decode([["\"\\\/\b\f\n\r\t"]]))
        end)

        it("decodes \\u escapes to UTF-8", function()
            assert.equal("A\0é€", json.decode([["\u0041\u0000\u00e9\u20AC"]]))
        end)

        it("decodes surrogate pairs to one code point", function()
            assert.equal("\240\159\152\128", json.decode([["\ud83d\ude00"]])) -- U+1F600
        end)

        it("decodes lone surrogates to U+FFFD", function()
            assert.equal("\239\191\189x", json.decode([["\ud83dx"]]))
            assert.equal("\239\191\189", json.decode([["\ude00"]]))
            assert.equal("\239\191\189\239\191\189", json.decode([["\ud83d\ud83d"]]))
        end)

        it("passes valid raw UTF-8 through", function()
            assert.equal("héllo 😀 €", json.decode('"héllo 😀 €"'))
        end)

        it("accepts 1000 levels of nesting", function()
            local v = json.decode(string.rep("[", 1000) .. string.rep("]", 1000))
            assert.is_true(json.is_array(v))
        end)

        it("raises when text is not a string", function()
            assert.has_error(function() json.decode({}) end)
        end)
    end)

    describe("decode rejects malformed text", function()
        local cases = {
            { "", "unexpected end of input at offset 0" },
            { "   ", "unexpected end of input at offset 3" },
            { "[1,]", "unexpected character ']' at offset 3" },
            { '{"a":1,}', "expected a string key at offset 7" },
            { "{a:1}", "expected a string key at offset 1" },
            { '{"a" 1}', "unexpected character '1' at offset 5" },
            { "[1 2]", "unexpected character '2' at offset 3" },
            { "[1", "unexpected end of input at offset 2" },
            { '{"a":1', "unexpected end of input at offset 6" },
            { "1 x", "unexpected character 'x' at offset 2" },
            { "[] []", "unexpected character '[' at offset 3" },
            { "// c\n1", "unexpected character '/' at offset 0" },
            { "NaN", "unexpected character 'N' at offset 0" },
            { "-Infinity", "invalid number at offset 0" },
            { "01", "unexpected character '1' at offset 1" },
            { "1.", "invalid number at offset 0" },
            { ".5", "unexpected character '.' at offset 0" },
            { "1e", "invalid number at offset 0" },
            { "+1", "unexpected character '+' at offset 0" },
            { "0x10", "unexpected character 'x' at offset 1" },
            { "1e400", "number out of range at offset 0" },
            { "tru", "unexpected end of input at offset 3" },
            { "nul1", "unexpected character '1' at offset 3" },
            { "True", "unexpected character 'T' at offset 0" },
            { "'a'", "unexpected character ''' at offset 0" },
            { '"abc', "unterminated string at offset 0" },
            { '["a\\', "unexpected end of input at offset 4" },
            { '"a\\x"', "invalid escape at offset 2" },
            { '"\\u12g4"', "invalid \\u escape at offset 1" },
            { '"\\u12"', "invalid \\u escape at offset 1" },
            { '"a\nb"', "control character in string at offset 2" },
            { '"a\tb"', "control character in string at offset 2" },
            { '"\\n\1"', "control character in string at offset 3" },
            { '"\255"', "invalid UTF-8 in string at offset 1" },
            { '"\192\175"', "invalid UTF-8 in string at offset 1" }, -- overlong "/"
            { '"\237\160\128"', "invalid UTF-8 in string at offset 1" }, -- raw surrogate
            { '"\244\144\128\128"', "invalid UTF-8 in string at offset 1" }, -- > U+10FFFF
            { '"\\t\226\130"', "invalid UTF-8 in string at offset 3" }, -- truncated
            { "\1", "unexpected byte 0x01 at offset 0" },
            { "1\0", "unexpected byte 0x00 at offset 1" },
        }
        for _, case in ipairs(cases) do
            it(("rejects %q"):format(case[1]), function()
                assert.equal(case[2], decode_error(case[1]))
            end)
        end

        it("rejects nesting deeper than 1000", function()
            local text = string.rep("[", 1001) .. string.rep("]", 1001)
            assert.equal("nesting deeper than 1000 at offset 1000", decode_error(text))
        end)

        it("rejects very deep nesting without crashing", function()
            local text = string.rep('{"a":', 100000)
            assert.matches("^nesting deeper than 1000 at offset %d+$", decode_error(text))
        end)
    end)

    describe("encode", function()
        it("encodes scalars", function()
            assert.same({ "true", "false", "null", "null", '"x"' }, {
                json.encode(true), json.encode(false), json.encode(null), json.encode(nil),
                json.encode("x"),
            })
        end)

        it("encodes sequences as arrays", function()
            assert.equal('[1,"a",true]', json.encode({ 1, "a", true }))
        end)

        it("encodes an empty table as an object", function()
            assert.equal("{}", json.encode({}))
        end)

        it("encodes an empty array as []", function()
            assert.equal("[]", json.encode(json.array()))
            assert.equal('{"tools":[]}', json.encode({ tools = json.array() }))
        end)

        it("encodes string-keyed tables as objects", function()
            assert.same({ a = 1, b = "x" }, json.decode(json.encode({ a = 1, b = "x" })))
            assert.equal('{"a":{"b":[]}}', json.encode({ a = { b = json.array() } }))
        end)

        it("stringifies number keys of objects", function()
            local v = json.decode(json.encode({ a = 1, [1] = "x", [2.5] = "y", [-3] = "z" }))
            assert.same({ a = 1, ["1"] = "x", ["2.5"] = "y", ["-3"] = "z" }, v)
        end)

        it("encodes nested arrays of objects", function()
            local v = { content = { { type = "text", text = "hi" }, { type = "text", text = "there" } } }
            local text = json.encode(v)
            assert.matches('^{"content":%[{.-},{.-}%]}$', text)
            assert.same({ content = json.array({ { type = "text", text = "hi" }, { type = "text", text = "there" } }) },
                json.decode(text))
        end)

        it("ignores metatables other than the array metatable", function()
            local t = setmetatable({}, { __index = function() return 1 end })
            assert.equal("{}", json.encode(t))
        end)

        it("escapes quotes, backslashes and control characters", function()
            assert.equal([["a\"b\\c\n\r\t\b\f\u0000\u001f"]], json.encode('a"b\\c\n\r\t\b\f\0\31'))
        end)

        it("leaves slashes, DEL and non-ASCII alone", function()
            assert.equal('"a/b\127é😀"', json.encode("a/b\127é😀"))
        end)

        it("replaces invalid UTF-8 bytes with U+FFFD", function()
            assert.equal('"a\239\191\189b\239\191\189\239\191\189"', json.encode("a\255b\192\175"))
            assert.equal('"' .. ("\239\191\189"):rep(3) .. '"', json.encode("\237\160\128")) -- raw surrogate
        end)

        it("encodes integral numbers as integers", function()
            assert.same({ "0", "-1", "9007199254740992", "1000000000000000", "-9223372036854775808" }, {
                json.encode(0), json.encode(-1), json.encode(2 ^ 53), json.encode(1e15), json.encode(-2 ^ 63),
            })
        end)

        it("encodes negative zero as -0", function()
            assert.equal("-0", json.encode(-0.0))
        end)

        it("encodes huge numbers in exponent form", function()
            assert.equal("1e+300", json.encode(1e300))
            assert.equal("9.223372036854776e+18", json.encode(2 ^ 63))
        end)

        it("encodes floats in their shortest round-trip form", function()
            assert.same({ "0.1", "0.3333333333333333", "-2.5e-08", "1.7976931348623157e+308" }, {
                json.encode(0.1), json.encode(1 / 3), json.encode(-2.5e-8), json.encode(1.7976931348623157e308),
            })
        end)

        it("encodes long strings", function()
            local s = string.rep("ab\n", 100000)
            assert.equal(s, json.decode(json.encode(s)))
        end)

        it("can be called from inside a __gc finalizer during another call", function()
            local results = {}
            for _ = 1, 200 do
                local p = newproxy(true)
                getmetatable(p).__gc = function()
                    results[#results + 1] = json.encode({ x = json.decode('["\\n"]') })
                end
            end
            local big = {}
            for i = 1, 2000 do big[i] = { s = ("x\n"):rep(i % 50) } end
            for _ = 1, 20 do
                assert.same(big, json.decode(json.encode(big)))
            end
            collectgarbage()
            for _, r in ipairs(results) do assert.equal('{"x":["\\n"]}', r) end
        end)
    end)

    describe("encode raises", function()
        it("on functions, naming where", function()
            assert.matches("cannot encode a function at /result/content/1/text$",
                encode_error({ result = { content = { {}, { text = print } } } }))
        end)

        it("on a function at the top level", function()
            assert.matches("cannot encode a function at the top level$", encode_error(print))
        end)

        it("on coroutines and userdata", function()
            assert.matches("cannot encode a thread", encode_error({ coroutine.create(print) }))
            assert.matches("cannot encode a userdata", encode_error({ a = newproxy() }))
        end)

        it("on NaN and infinities", function()
            assert.matches("cannot encode NaN or infinity at /0$", encode_error({ 0 / 0 }))
            assert.matches("cannot encode NaN or infinity", encode_error(math.huge))
            assert.matches("cannot encode NaN or infinity", encode_error({ x = -math.huge }))
        end)

        it("on cycles", function()
            local t = { a = 1 }
            t.self = t
            assert.matches("cannot encode a table nested deeper than 1000 %(a cycle%?%)", encode_error(t))
        end)

        it("on nesting deeper than 1000 but not at 1000", function()
            local deep = json.array()
            for _ = 2, 1000 do deep = json.array({ deep }) end
            assert.equal(string.rep("[", 1000) .. string.rep("]", 1000), json.encode(deep))
            assert.matches("nested deeper than 1000", encode_error({ deep }))
        end)

        it("on sparse arrays", function()
            assert.matches("number keys that are not a sequence 1%.%.n at the top level$",
                encode_error({ [1] = 1, [3] = 3 }))
            assert.matches("number keys that are not a sequence", encode_error({ [2] = "x" }))
            assert.matches("number keys that are not a sequence", encode_error({ [0.5] = "x" }))
        end)

        it("on array-marked tables that are not sequences", function()
            assert.matches("an array with holes or non%-index keys at /a$",
                encode_error({ a = json.array({ 1, 2, x = 3 }) }))
            assert.matches("an array with holes", encode_error(json.array({ [2] = 1 })))
        end)

        it("on keys that are neither strings nor numbers", function()
            assert.matches("a key that is neither a string nor a number at /a$",
                encode_error({ a = { [true] = 1 } }))
            assert.matches("a key that is neither a string nor a number at the top level$",
                encode_error({ x = 1, [{}] = 1 }))
        end)

        it("on an infinite number key", function()
            assert.matches("an infinite number key", encode_error({ x = 1, [math.huge] = 1 }))
        end)

        it("on lightuserdata other than null", function()
            local lud = debug.upvalueid(encode_error, 1) -- a non-NULL lightuserdata in LuaJIT
            assert.matches("cannot encode a lightuserdata other than null at /0$", encode_error({ lud }))
        end)

        it("on cdata", function()
            assert.matches("cannot encode a cdata", encode_error({ require("ffi").new("int", 1) }))
        end)

        it("and still works afterwards", function()
            encode_error({ print })
            assert.equal('{"a":[1]}', json.encode({ a = { 1 } }))
        end)
    end)

    describe("round trips", function()
        local ids = { 0, -1, 1, 2 ^ 53, 2 ^ 53 - 1, -(2 ^ 53), 1e15, 12345678901234, 123456789012345678 }
        for _, id in ipairs(ids) do
            it(("echoes the JSON-RPC id %.17g exactly"):format(id), function()
                local text = ('{"jsonrpc":"2.0","id":%s}'):format(json.encode(id))
                assert.equal(id, json.decode(text).id)
                assert.equal(("%.0f"):format(id), json.encode(json.decode(text).id))
            end)
        end

        it("echoes id texts exactly", function()
            for _, text in ipairs({ "0", "-1", "9007199254740992", "9007199254740991", "12345678901234",
                "1000000000000000", "-9007199254740991" }) do
                assert.equal(text, echo(text))
            end
        end)

        local floats = { 0.1, 1 / 3, 1e300, -2.5e-8, 5e-324, 2.2250738585072014e-308, 123.456, -1.5, 1e21, 1e22, 1e23 }
        for _, f in ipairs(floats) do
            it(("round-trips the float %.17g"):format(f), function()
                assert.equal(f, json.decode(json.encode(f)))
            end)
        end

        it("preserves [] and {} through decode and encode", function()
            assert.same({ "[]", "{}", "[[],{},[{}]]", '{"a":[]}', '{"a":{}}' },
                { echo("[]"), echo("{}"), echo("[[],{},[{}]]"), echo('{"a":[]}'), echo('{"a":{}}') })
        end)

        it("preserves null through decode and encode", function()
            assert.equal('[null,{"a":null}]', echo('[null,{"a":null}]'))
        end)

        it("round-trips strings with escapes and unicode", function()
            local s = 'q"b\\s/\n\r\t\b\f\0\31 é € 😀 \239\191\189'
            assert.equal(s, json.decode(json.encode(s)))
            assert.equal('"é😀"', echo([["\u00e9\ud83d\ude00"]]))
        end)

        it("round-trips a tools/call request and response", function()
            local req = '{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo",'
                .. '"arguments":{"text":"hello","n":[1,2.5,null,true,{}],"tags":[]}}}'
            local v = json.decode(req)
            assert.same(v, json.decode(json.encode(v)))
            local res = json.encode({ jsonrpc = "2.0", id = v.id,
                result = { content = { { type = "text", text = "hello" } }, isError = false } })
            assert.same({ jsonrpc = "2.0", id = 42,
                result = { content = json.array({ { type = "text", text = "hello" } }), isError = false } },
                json.decode(res))
        end)
    end)

    describe("helpers", function()
        it("array() returns a new empty array", function()
            local a = json.array()
            assert.equal(json.array_mt, getmetatable(a))
            assert.equal("[]", json.encode(a))
        end)

        it("array(t) marks and returns t", function()
            local t = { 1, 2 }
            assert.equal(t, json.array(t))
            assert.equal(json.array_mt, getmetatable(t))
        end)

        it("array() raises on a non-table", function()
            assert.has_error(function() json.array(1) end, "json.array: expected a table or nil, got number")
        end)

        it("is_array recognizes marked tables and plain sequences", function()
            assert.same({ true, true, false, false, false, false },
                { json.is_array(json.array()), json.is_array({ 1 }), json.is_array({}),
                  json.is_array({ a = 1 }), json.is_array("x"), json.is_array(null) })
        end)

        it("is_object recognizes string-keyed and empty plain tables", function()
            assert.same({ true, true, false, false, false, false },
                { json.is_object({}), json.is_object({ a = 1 }), json.is_object({ 1 }),
                  json.is_object(json.array()), json.is_object(null), json.is_object({ [2] = 1 }) })
        end)

        it("kind names JSON types", function()
            assert.same({ "null", "null", "boolean", "number", "string", "array", "object", "array" },
                { json.kind(null), json.kind(nil), json.kind(true), json.kind(1), json.kind("s"),
                  json.kind({ 1 }), json.kind({}), json.kind(json.array()) })
        end)

        it("kind returns nil and a reason for unencodable values", function()
            assert.same({ nil, "a function" }, { json.kind(print) })
            assert.same({ nil, "a table with number keys that are not a sequence 1..n" },
                { json.kind({ [2] = 1 }) })
        end)

        it("null is cjson's null", function()
            assert.equal("userdata", type(null))
            local ok, cjson = pcall(require, "cjson")
            if ok then assert.equal(cjson.null, null) end
        end)

        it("array_mt is shared through the registry when the module is opened again", function()
            local loader = package.preload["moonmcp.jsonc"]
            local again = loader("moonmcp.jsonc")
            assert.equal(json.array_mt, again.array_mt)
            assert.equal("[]", again.encode(json.array()))
            assert.is_true(again.decode("[]") ~= nil and getmetatable(again.decode("[]")) == json.array_mt)
        end)
    end)

    -- Texts the host only writes out (answers) or only decodes (bodies, stdio lines) are
    -- bytes: a userdata that LuaJIT does not intern (core/bytes.c).
    describe("bytes", function()
        it("encode_bytes gives the same text as encode, as bytes", function()
            local v = { jsonrpc = "2.0", id = "s-1", result = { ok = true, list = json.array { 1, 2 } } }
            local b = json.encode_bytes(v)
            assert.equal("userdata", type(b))
            assert.equal(json.encode(v), tostring(b))
            assert.equal(#json.encode(v), #b)
        end)

        it("decode reads bytes as it reads a string", function()
            local b = json.encode_bytes { a = "\u{e9}t\u{e9}", n = 2 ^ 53, empty = json.array() }
            local v = json.decode(b)
            assert.same({ a = "\u{e9}t\u{e9}", n = 2 ^ 53, empty = json.array() }, v)
            assert.equal(json.array_mt, getmetatable(v.empty))
        end)

        it("decode refuses what is neither a string nor bytes", function()
            assert.has_error(function()
                json.decode(io.stdout)
            end)
            assert.has_error(function()
                json.decode({})
            end)
        end)
    end)
end)

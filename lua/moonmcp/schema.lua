-- moonmcp.schema: a JSON Schema 2020-12 validator for tool inputs and outputs.
--
-- API
--   schema.compile(doc)          -> validator | nil, err    (err: invalid schema)
--   validator:validate(value)    -> true | false, errors
--   schema.validate(doc, value)  -> true | false, errors | nil, err
--                                   (compiles once per doc table; weak cache)
--   schema.format_errors(errors) -> "path: message; path: message ..."
-- errors is a list of { path = <JSON Pointer into the value>, message = ... },
-- most useful first (the failing keyword closest to the top of the schema).
--
-- Design
--   compile() walks the schema once and turns every subschema into a Lua
--   closure `fn(value, st) -> boolean`; each keyword becomes a closure
--   `check(value, st, kind) -> boolean` that ignores kinds it does not apply
--   to. Validation state `st` (a path stack, a mute counter, the error list)
--   belongs to the validator and is reset per call, so a successful
--   validation allocates nothing. Errors are only built while `st.mute` is 0;
--   applicators that merely probe (anyOf, oneOf, not, if, contains,
--   propertyNames) mute their subschemas, and anyOf/oneOf re-run failing
--   branches unmuted only to explain a failure.
--   $ref is resolved at compile time (an unresolvable or remote $ref is a
--   compile error); targets compile lazily through a cell so recursive
--   schemas work. $id / $anchor (and $dynamicAnchor, as a plain anchor) are
--   honoured for locating embedded resources; $dynamicRef, vocabularies and
--   unevaluated* are not implemented (ignored, like any unknown keyword).
--   Validators never hold a reference to the root doc table, so the weak
--   cache in schema.validate() can drop them.
--
-- Value model (moonmcp.json): objects are plain tables, arrays carry
-- json.array_mt, null is json.null. Values built by Lua code are classified
-- exactly as json.encode will print them: a table with array_mt or with keys
-- 1..n is an array; any other table, including an EMPTY plain table, is an
-- object. So a handler that means an empty array must return one marked as
-- such (json.array_mt) -- what the validator checks is what the client gets.
-- In schemas, keyword values that are lists (required, enum, type, allOf,
-- prefixItems, ...) may be plain Lua sequences. `items` given as a list is
-- read as the pre-2020 tuple form: prefixItems, with additionalItems (if
-- any) applying to the rest.
--
-- Formats date-time, date, time (RFC 3339), email (RFC 5321 mailbox, ASCII),
-- uri (RFC 3986 absolute URI), uuid, ipv4 and ipv6 are asserted; any other
-- format is an annotation only. Patterns use moonmcp.regex (PCRE2 with
-- ECMA-262-like options, see core/lregex.c).

local json = require("moonmcp.json")
local regex = require("moonmcp.regex")

local type, pairs, ipairs, next, select = type, pairs, ipairs, next, select
local tostring, tonumber, pcall, error = tostring, tonumber, pcall, error
local getmetatable, setmetatable = getmetatable, setmetatable
local floor, abs, mmin = math.floor, math.abs, math.min
local byte, find, sub, match, gsub, fmt, char =
    string.byte, string.find, string.sub, string.match, string.gsub, string.format, string.char
local concat, sort, remove = table.concat, table.sort, table.remove

local null = json.null
local array_mt = json.array_mt

local _M = {}

local MAX_ERRORS = 50 -- per validation: enough to fix a call, bounded cost
local MAX_REF_DEPTH = 512 -- nested $ref evaluations (catches {"$ref": "#"})

local function pass()
    return true
end

---------------------------------------------------------------------------
-- Value classification, equality, rendering
---------------------------------------------------------------------------

-- How json.encode sees v: "null" | "boolean" | "number" | "string" |
-- "array" | "object" (other Lua types return their type() name).
local function kind_of(v)
    local t = type(v)
    if t == "table" then
        if getmetatable(v) == array_mt then
            return "array"
        end
        -- as encode(): keys 1..n make an array (next() after the border
        -- finds any other key)
        if v[1] ~= nil and next(v, #v) == nil then
            return "array"
        end
        return "object"
    end
    if v == null or v == nil then
        return "null"
    end
    return t
end

local deep_equal

local function deep_equal_tables(a, b)
    local ka, kb = kind_of(a), kind_of(b)
    if ka ~= kb then
        return false
    end
    if ka == "array" then
        local n = #a
        if #b ~= n then
            return false
        end
        for i = 1, n do
            if not deep_equal(a[i], b[i]) then
                return false
            end
        end
        return true
    end
    for key, va in pairs(a) do
        local vb = b[key]
        if vb == nil or not deep_equal(va, vb) then
            return false
        end
    end
    for key in pairs(b) do
        if a[key] == nil then
            return false
        end
    end
    return true
end

-- JSON equality: 1 == 1.0 (Lua numbers), arrays by position, objects by key.
deep_equal = function(a, b)
    if a == b then
        return true
    end
    if type(a) ~= "table" or type(b) ~= "table" then
        return false
    end
    return deep_equal_tables(a, b)
end

local function is_integer(n)
    return n == floor(n) and n - n == 0
end

-- Short JSON rendering of a value for error messages.
local function show(v)
    local ok, s = pcall(json.encode, v)
    if not ok then
        s = tostring(v)
    end
    if #s > 60 then
        s = sub(s, 1, 57) .. "..."
    end
    return s
end

local function kind_name(v, k)
    if k == "number" and is_integer(v) then
        return "integer"
    end
    return k
end

-- Number of Unicode code points in s (UTF-8): bytes that are not
-- continuation bytes. Invalid UTF-8 counts roughly, which is fine here.
local function utf8_len(s)
    local n = #s
    local count = n
    for i = 1, n do
        local b = byte(s, i)
        if b >= 0x80 and b < 0xC0 then
            count = count - 1
        end
    end
    return count
end

---------------------------------------------------------------------------
-- Validation state and error reporting
---------------------------------------------------------------------------

local function escape_token(key)
    key = tostring(key)
    if find(key, "[~/]") then
        key = gsub(gsub(key, "~", "~0"), "/", "~1")
    end
    return key
end

-- JSON Pointer of the current instance location, plus an optional extra
-- token (e.g. the name of an offending property).
local function pointer(st, extra)
    local path, d = st.path, st.depth
    local parts = {}
    for i = 1, d do
        parts[i] = escape_token(path[i])
    end
    if extra ~= nil then
        parts[d + 1] = escape_token(extra)
    end
    if #parts == 0 then
        return ""
    end
    return "/" .. concat(parts, "/")
end

-- Record an error unless muted; always returns false so checks can
-- `return fail(...)`. The message is formatted only when it is recorded.
local function fail(st, extra, msg, ...)
    if st.mute > 0 then
        return false
    end
    local errs = st.errors
    if errs == nil then
        errs = {}
        st.errors = errs
    end
    if #errs < MAX_ERRORS then
        if select("#", ...) > 0 then
            msg = fmt(msg, ...)
        end
        errs[#errs + 1] = { path = pointer(st, extra), message = msg }
    end
    return false
end

-- Run fn(v, st) on the child `key` of the current location.
local function descend(fn, v, st, key)
    local d = st.depth + 1
    st.depth = d
    st.path[d] = key
    local ok = fn(v, st)
    st.depth = d - 1
    return ok
end

local function probe(fn, v, st)
    st.mute = st.mute + 1
    local ok = fn(v, st)
    st.mute = st.mute - 1
    return ok
end

---------------------------------------------------------------------------
-- Formats
---------------------------------------------------------------------------

-- The checkers below scan bytes with string.byte and lookup tables (no
-- string.match / gmatch / pattern finds, which LuaJIT cannot compile), work
-- on index ranges instead of substrings, and so allocate nothing on the
-- common paths.

-- Byte-indexed character sets: set[b] is true for the bytes of `chars` and,
-- if `alnum`, for ASCII letters and digits.
local function byte_set(chars, alnum)
    local set = {}
    for b = 0, 255 do
        set[b] = false
    end
    if alnum then
        for b = 48, 57 do
            set[b] = true
        end
        for b = 65, 90 do
            set[b] = true
            set[b + 32] = true
        end
    end
    for i = 1, #chars do
        set[byte(chars, i)] = true
    end
    return set
end

local HEX = byte_set("abcdefABCDEF0123456789")
local DIGIT = byte_set("0123456789")
local ALPHA = byte_set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
local LABEL_CH = byte_set("-", true) -- hostname label: letters, digits, '-'
local ATEXT_DOT = byte_set("!#$%&'*+-/=?^_`{|}~.", true) -- dot-atom local part
local IPV6_CH = byte_set("abcdefABCDEF0123456789:.")
local SCHEME_CH = byte_set("+-.", true)
-- characters allowed in a URI component, besides pct-encoded triplets
local URI_USERINFO_CH = byte_set("-._~!$&'()*+,;=:%", true)
local URI_HOST_CH = byte_set("-._~!$&'()*+,;=%", true)
local URI_PATH_CH = byte_set("-._~!$&'()*+,;=:@/%", true)
local URI_QUERY_CH = byte_set("-._~!$&'()*+,;=:@/?%", true)

-- true if every byte of s[i..j] is in set (true for an empty range)
local function all_in(s, i, j, set)
    for p = i, j do
        if not set[byte(s, p)] then
            return false
        end
    end
    return true
end

-- The two decimal digits at s[i], s[i+1] as a number, or -1 (i+1 <= #s).
local function two_digits(s, i)
    local a, b = byte(s, i, i + 1)
    a, b = a - 48, b - 48
    if a < 0 or a > 9 or b < 0 or b > 9 then
        return -1
    end
    return a * 10 + b
end

local DAYS = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }

-- RFC 3339 full-date YYYY-MM-DD at s[i..i+9] (the caller checks the length).
local function date_at(s, i)
    local yh, yl, m, d = two_digits(s, i), two_digits(s, i + 2), two_digits(s, i + 5), two_digits(s, i + 8)
    if yh < 0 or yl < 0 or m < 0 or d < 0 or byte(s, i + 4) ~= 45 or byte(s, i + 7) ~= 45 then
        return false
    end
    if m < 1 or m > 12 or d < 1 then
        return false
    end
    local y = yh * 100 + yl
    local max = DAYS[m]
    if m == 2 and y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0) then
        max = 29
    end
    return d <= max
end

local function is_date(s)
    return #s == 10 and date_at(s, 1)
end

-- RFC 3339 full-time HH:MM:SS[.frac](Z|+HH:MM|-HH:MM) at s[i..#s]; a leap
-- second is only valid at 23:59:60 UTC.
local function time_at(s, i)
    local n = #s
    if n - i < 7 or byte(s, i + 2) ~= 58 or byte(s, i + 5) ~= 58 then
        return false
    end
    local h, mi, se = two_digits(s, i), two_digits(s, i + 3), two_digits(s, i + 6)
    if h < 0 or mi < 0 or se < 0 or h > 23 or mi > 59 or se > 60 then
        return false
    end
    local p = i + 8
    local b = byte(s, p)
    if b == 46 then -- '.' and at least one digit
        p = p + 1
        b = byte(s, p)
        if not b or b < 48 or b > 57 then
            return false
        end
        repeat
            p = p + 1
            b = byte(s, p)
        until not b or b < 48 or b > 57
    end
    local offset
    if (b == 90 or b == 122) and p == n then -- Z / z
        offset = 0
    else
        if n - p ~= 5 or (b ~= 43 and b ~= 45) or byte(s, p + 3) ~= 58 then
            return false
        end
        local oh, om = two_digits(s, p + 1), two_digits(s, p + 4)
        if oh < 0 or om < 0 or oh > 23 or om > 59 then
            return false
        end
        offset = (oh * 60 + om) * (b == 45 and -1 or 1)
    end
    if se == 60 then
        return (h * 60 + mi - offset) % 1440 == 23 * 60 + 59
    end
    return true
end

local function is_time(s)
    return time_at(s, 1)
end

local function is_date_time(s)
    local t = byte(s, 11)
    return (t == 84 or t == 116) and date_at(s, 1) and time_at(s, 12)
end

-- dotted-quad IPv4 address at s[i..j]: four decimal parts <= 255 without
-- leading zeros
local function ipv4_at(s, i, j)
    local dots, len, v, first = 0, 0, 0, 0
    for p = i, j do
        local b = byte(s, p)
        if b == 46 then
            if len == 0 or v > 255 or (len > 1 and first == 48) or dots == 3 then
                return false
            end
            dots, len, v = dots + 1, 0, 0
        elseif b >= 48 and b <= 57 then
            if len == 0 then
                first = b
            elseif len == 3 then
                return false
            end
            len = len + 1
            v = v * 10 + b - 48
        else
            return false
        end
    end
    return dots == 3 and len > 0 and v <= 255 and not (len > 1 and first == 48)
end

local function is_ipv4(s)
    return ipv4_at(s, 1, #s)
end

-- Count the 16-bit groups in the ':'-separated list s[i..j] (nil if
-- malformed); the last group may be a dotted IPv4 address (two groups) when
-- allowed. The caller has checked that s holds only hex digits, ':' and '.'.
local function ipv6_groups(s, i, j, v4_last)
    if i > j then
        return 0
    end
    local n, gs = 0, i
    while true do
        local p = gs
        while p <= j and HEX[byte(s, p)] do
            p = p + 1
        end
        if p <= j and byte(s, p) ~= 58 then -- a '.': only a final IPv4 part
            local colon = find(s, ":", p, true)
            if v4_last and (not colon or colon > j) and ipv4_at(s, gs, j) then
                return n + 2
            end
            return nil
        end
        local len = p - gs
        if len < 1 or len > 4 then
            return nil
        end
        n = n + 1
        if p > j then
            return n
        end
        gs = p + 1
    end
end

local function is_ipv6(s)
    local n = #s
    if n == 0 or not all_in(s, 1, n, IPV6_CH) then
        return false
    end
    local dc = find(s, "::", 1, true)
    if not dc then
        return ipv6_groups(s, 1, n, true) == 8
    end
    if find(s, "::", dc + 2, true) then
        return false
    end
    local a, b = ipv6_groups(s, 1, dc - 1, false), ipv6_groups(s, dc + 2, n, true)
    return a ~= nil and b ~= nil and a + b <= 7
end

-- hostname at s[i..j]: dot-separated labels of letters, digits and '-'
-- (not at either end), 1..63 bytes each, 253 bytes in all
local function hostname_at(s, i, j)
    local len = j - i + 1
    if len < 1 or len > 253 then
        return false
    end
    local start = i -- of the current label
    for p = i, j do
        local b = byte(s, p)
        if b == 46 then
            if p == start or p - start > 63 or byte(s, start) == 45 or byte(s, p - 1) == 45 then
                return false
            end
            start = p + 1
        elseif not LABEL_CH[b] then
            return false
        end
    end
    return start <= j and j - start < 63 and byte(s, start) ~= 45 and byte(s, j) ~= 45
end

-- RFC 5321 Mailbox: dot-atom or quoted-string local part; a hostname or an
-- address literal ([1.2.3.4], [IPv6:...]) as domain. ASCII only.
local function is_email(s)
    local n = #s
    local d -- where the domain starts
    if byte(s) == 34 then -- quoted local part
        local i = 2
        while i <= n do
            local b = byte(s, i)
            if b == 92 then
                i = i + 1
            elseif b == 34 then
                break
            elseif b < 32 or b > 126 then
                return false
            end
            i = i + 1
        end
        if byte(s, i + 1) ~= 64 then
            return false
        end
        d = i + 2
    else
        -- dot-atom: allowed bytes up to the one '@'; no dot first, last or twice
        local i, prev = 1, 46
        local b = byte(s, 1)
        while b and ATEXT_DOT[b] do
            if b == 46 and prev == 46 then
                return false
            end
            prev = b
            i = i + 1
            b = byte(s, i)
        end
        if b ~= 64 or i == 1 or prev == 46 or find(s, "@", i + 1, true) then
            return false
        end
        d = i + 1
    end
    if byte(s, d) == 91 and byte(s, n) == 93 and n > d then -- address literal
        local literal = sub(s, d + 1, n - 1)
        if sub(literal, 1, 5) == "IPv6:" then
            return is_ipv6(sub(literal, 6))
        end
        return is_ipv4(literal)
    end
    return hostname_at(s, d, n)
end

-- RFC 3986 URI (absolute: a scheme is required; a fragment is allowed).
local function is_uri(s)
    local n = #s
    if not ALPHA[byte(s, 1) or 0] then
        return false
    end
    local r = 2
    local b = byte(s, r)
    while b and SCHEME_CH[b] do
        r = r + 1
        b = byte(s, r)
    end
    if b ~= 58 then -- ':'
        return false
    end
    r = r + 1 -- the rest, s[r..n]: every '%' starts a pct-encoded triplet
    local hash, q
    for p = r, n do
        b = byte(s, p)
        if b == 37 then
            if not (HEX[byte(s, p + 1) or 0] and HEX[byte(s, p + 2) or 0]) then
                return false
            end
        elseif b == 35 then
            if not hash then
                hash = p
            end
        elseif b == 63 and not q and not hash then
            q = p
        end
    end
    local e = n -- end of the part before the fragment, then before the query
    if hash then
        if not all_in(s, hash + 1, n, URI_QUERY_CH) then
            return false
        end
        e = hash - 1
    end
    if q then
        if not all_in(s, q + 1, e, URI_QUERY_CH) then
            return false
        end
        e = q - 1
    end
    local ps = r -- where the path starts
    if e - r >= 1 and byte(s, r) == 47 and byte(s, r + 1) == 47 then -- "//" authority
        local a, ae = r + 2, e
        local slash = find(s, "/", a, true)
        if slash and slash <= e then
            ae = slash - 1
        end
        ps = ae + 1
        for p = a, ae do
            if byte(s, p) == 64 then -- '@': userinfo
                if not all_in(s, a, p - 1, URI_USERINFO_CH) then
                    return false
                end
                a = p + 1
                break
            end
        end
        local port = ae + 1 -- start of the port part (":" digits) in s[port..ae]
        if a <= ae and byte(s, a) == 91 then -- "[" IP-literal "]"
            local rb
            for p = a + 1, ae do
                if byte(s, p) == 93 then
                    rb = p
                    break
                end
            end
            if not rb then
                return false
            end
            local lit = sub(s, a + 1, rb - 1)
            if not is_ipv6(lit) and not find(lit, "^[vV]%x+%.[%w%-%._~!%$&'%(%)%*%+,;=:]+$") then
                return false
            end
            port = rb + 1
        else
            for p = a, ae do
                b = byte(s, p)
                if b == 58 then
                    port = p
                    break
                elseif not URI_HOST_CH[b] then
                    return false
                end
            end
        end
        if port <= ae and (byte(s, port) ~= 58 or not all_in(s, port + 1, ae, DIGIT)) then
            return false
        end
    end
    return all_in(s, ps, e, URI_PATH_CH)
end

local function is_uuid(s)
    if #s ~= 36 then
        return false
    end
    for p = 1, 36 do
        local b = byte(s, p)
        if p == 9 or p == 14 or p == 19 or p == 24 then
            if b ~= 45 then
                return false
            end
        elseif not HEX[b] then
            return false
        end
    end
    return true
end

local FORMATS = {
    ["date-time"] = { is_date_time, "an RFC 3339 date-time, e.g. 2024-05-01T13:45:00Z" },
    date = { is_date, "an RFC 3339 full-date, e.g. 2024-05-01" },
    time = { is_time, "an RFC 3339 full-time, e.g. 13:45:00Z" },
    email = { is_email, "an email address" },
    uri = { is_uri, "an absolute URI (RFC 3986)" },
    uuid = { is_uuid, "a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000" },
    ipv4 = { is_ipv4, "an IPv4 address" },
    ipv6 = { is_ipv6, "an IPv6 address" },
}

---------------------------------------------------------------------------
-- URIs and $ref resolution
---------------------------------------------------------------------------

local function split_fragment(uri)
    local hash = find(uri, "#", 1, true)
    if not hash then
        return uri, nil
    end
    return sub(uri, 1, hash - 1), sub(uri, hash + 1)
end

-- scheme, authority (nil when absent), path, query (nil when absent)
local function parse_uri(uri)
    local scheme, rest = match(uri, "^([%a][%w%+%-%.]*):(.*)$")
    if not scheme then
        rest = uri
    end
    local query
    local q = find(rest, "?", 1, true)
    if q then
        rest, query = sub(rest, 1, q - 1), sub(rest, q + 1)
    end
    local authority
    if sub(rest, 1, 2) == "//" then
        local slash = find(rest, "/", 3, true)
        authority = sub(rest, 3, slash and slash - 1 or #rest)
        rest = slash and sub(rest, slash) or ""
    end
    return scheme, authority, rest, query
end

local function remove_dot_segments(path)
    local out = {}
    local absolute = sub(path, 1, 1) == "/"
    local segs = {}
    for seg in (path .. "/"):gmatch("([^/]*)/") do
        segs[#segs + 1] = seg
    end
    if absolute then
        remove(segs, 1)
    end
    for i, seg in ipairs(segs) do
        if seg == ".." then
            if #out > 0 then
                out[#out] = nil
            end
            if i == #segs then
                out[#out + 1] = ""
            end
        elseif seg == "." then
            if i == #segs then
                out[#out + 1] = ""
            end
        else
            out[#out + 1] = seg
        end
    end
    return (absolute and "/" or "") .. concat(out, "/")
end

local function build_uri(scheme, authority, path, query, fragment)
    local s = (scheme and scheme .. ":" or "") .. (authority and "//" .. authority or "") .. path
    if query then
        s = s .. "?" .. query
    end
    if fragment then
        s = s .. "#" .. fragment
    end
    return s
end

-- RFC 3986 section 5.2 reference resolution.
local function resolve_uri(base, ref)
    local rnf, rfrag = split_fragment(ref)
    local bnf = split_fragment(base)
    if rnf == "" then
        return build_uri(nil, nil, bnf, nil, rfrag)
    end
    local rs, ra, rp, rq = parse_uri(rnf)
    if rs then
        return build_uri(rs, ra, remove_dot_segments(rp), rq, rfrag)
    end
    local bs, ba, bp, bq = parse_uri(bnf)
    if ra then
        return build_uri(bs, ra, remove_dot_segments(rp), rq, rfrag)
    end
    if rp == "" then
        return build_uri(bs, ba, bp, rq or bq, rfrag)
    end
    if sub(rp, 1, 1) ~= "/" then
        if ba and bp == "" then
            rp = "/" .. rp
        else
            rp = (match(bp, "^(.*/)") or "") .. rp
        end
    end
    return build_uri(bs, ba, remove_dot_segments(rp), rq, rfrag)
end

local function pct_decode(s)
    return (gsub(s, "%%(%x%x)", function(h)
        return char(tonumber(h, 16))
    end))
end

-- keywords whose value is a subschema / a map of subschemas / a list of them
local SUB_ONE = {
    "additionalProperties", "items", "contains", "not", "if", "then", "else", "propertyNames",
    "additionalItems", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
}
local SUB_MAP = { "properties", "patternProperties", "$defs", "definitions", "dependentSchemas" }
local SUB_LIST = { "prefixItems", "allOf", "anyOf", "oneOf", "items" }

-- Record the base URI of every subschema and register $id resources and
-- anchors, so $ref can be resolved lexically.
local function index_schema(c, node, base)
    if type(node) ~= "table" or c.base_of[node] then
        return
    end
    local id = node["$id"]
    if type(id) == "string" then
        base = split_fragment(resolve_uri(base, id))
        c.resources[base] = node
    end
    c.base_of[node] = base
    for _, key in ipairs({ "$anchor", "$dynamicAnchor" }) do
        local a = node[key]
        if type(a) == "string" then
            c.anchors[base .. "#" .. a] = node
        end
    end
    for _, key in ipairs(SUB_ONE) do
        index_schema(c, node[key], base)
    end
    for _, key in ipairs(SUB_MAP) do
        local m = node[key]
        if type(m) == "table" then
            for _, sub_node in pairs(m) do
                index_schema(c, sub_node, base)
            end
        end
    end
    for _, key in ipairs(SUB_LIST) do
        local l = node[key]
        if type(l) == "table" and l[1] ~= nil then
            for _, sub_node in ipairs(l) do
                index_schema(c, sub_node, base)
            end
        end
    end
end

local function schema_error(sptr, msg, ...)
    error({ schema_error = fmt("invalid schema at %s: " .. msg, sptr, ...) }, 0)
end

-- Resolve a $ref to (target node, its schema pointer) or raise a schema error.
local function resolve_ref(c, node, ref, sptr)
    local base = c.base_of[node] or c.root_base
    local uri, frag = split_fragment(resolve_uri(base, ref))
    local res = c.resources[uri]
    if res == nil then
        schema_error(sptr, "cannot resolve $ref %q (only references within the schema are supported)", ref)
    end
    if frag == nil or frag == "" then
        return res, uri .. "#"
    end
    if byte(frag) ~= 47 then -- not "/": an anchor
        local target = c.anchors[uri .. "#" .. frag]
        if target == nil then
            schema_error(sptr, "$ref %q: no $anchor %q", ref, frag)
        end
        return target, uri .. "#" .. frag
    end
    local target = res
    for token in (sub(pct_decode(frag), 2) .. "/"):gmatch("([^/]*)/") do
        token = gsub(gsub(token, "~1", "/"), "~0", "~")
        local nxt = nil
        if type(target) == "table" then
            nxt = target[token]
            if nxt == nil and find(token, "^%d+$") then
                nxt = target[tonumber(token) + 1]
            end
        end
        if nxt == nil then
            schema_error(sptr, "$ref %q: JSON Pointer does not resolve", ref)
        end
        target = nxt
    end
    return target, uri .. "#" .. frag
end

---------------------------------------------------------------------------
-- Compiler
---------------------------------------------------------------------------

local compile_node

local function is_list(t)
    return type(t) == "table" and (t[1] ~= nil or next(t) == nil)
end

local function check_count(sptr, key, v)
    if type(v) ~= "number" or v < 0 or not is_integer(v) then
        schema_error(sptr, "%s must be a non-negative integer", key)
    end
    return v
end

local function check_number(sptr, key, v)
    if type(v) ~= "number" then
        schema_error(sptr, "%s must be a number", key)
    end
    return v
end

local function compile_regex(c, sptr, pattern)
    if type(pattern) ~= "string" then
        schema_error(sptr, "pattern must be a string")
    end
    local re = c.regexes[pattern]
    if re == nil then
        local err
        re, err = regex.compile(pattern)
        if re == nil then
            schema_error(sptr, "%s", err)
        end
        c.regexes[pattern] = re
    end
    return re
end

local TYPE_NAMES = {
    null = true, boolean = true, number = true, integer = true, string = true, array = true, object = true,
}

local function type_matches(name, v, k)
    if name == k then
        return true
    end
    if name == "integer" then
        return k == "number" and is_integer(v)
    end
    return false
end

local function compile_type(t, sptr)
    if type(t) == "string" then
        if not TYPE_NAMES[t] then
            schema_error(sptr, "unknown type %q", t)
        end
        if t == "integer" then
            return function(v, st, k)
                if k == "number" and is_integer(v) then
                    return true
                end
                if st.mute > 0 then -- a probe: skip rendering the message
                    return false
                end
                return fail(st, nil, "expected integer, got %s", k == "number" and "number " .. show(v) or k)
            end
        end
        return function(v, st, k)
            if k == t then
                return true
            end
            return fail(st, nil, "expected %s, got %s", t, kind_name(v, k))
        end
    end
    if not is_list(t) then
        schema_error(sptr, "type must be a string or a list of strings")
    end
    local names = {}
    for i, name in ipairs(t) do
        if not TYPE_NAMES[name] then
            schema_error(sptr, "unknown type %q", tostring(name))
        end
        names[i] = name
    end
    local n = #names
    local expected = concat(names, " or ")
    return function(v, st, k)
        for i = 1, n do
            if type_matches(names[i], v, k) then
                return true
            end
        end
        return fail(st, nil, "expected %s, got %s", expected, kind_name(v, k))
    end
end

local function compile_enum(values, sptr)
    if not is_list(values) then
        schema_error(sptr, "enum must be a list")
    end
    -- scalars go in a set (1 and 1.0 are the same key); tables are compared
    -- one by one
    local set, tables = {}, {}
    for _, e in ipairs(values) do
        if type(e) == "table" then
            tables[#tables + 1] = e
        else
            set[e] = true
        end
    end
    local shown = {}
    for i = 1, mmin(#values, 10) do
        shown[i] = show(values[i])
    end
    local list = concat(shown, ", ") .. (#values > 10 and ", ..." or "")
    local nt = #tables
    return function(v, st)
        if v ~= nil and set[v] then
            return true
        end
        if type(v) == "table" then
            for i = 1, nt do
                if deep_equal(v, tables[i]) then
                    return true
                end
            end
        end
        if st.mute > 0 then -- a probe: skip rendering the message
            return false
        end
        return fail(st, nil, "must be one of: %s; got %s", list, show(v))
    end
end

local function compile_const(value)
    return function(v, st)
        if deep_equal(v, value) then
            return true
        end
        if st.mute > 0 then -- a probe: skip rendering the message
            return false
        end
        return fail(st, nil, "must be %s, got %s", show(value), show(v))
    end
end

-- properties + patternProperties + additionalProperties (the latter two
-- need to know which names the others matched, so they share a closure).
local function compile_object_members(c, node, sptr, checks)
    local props, pprops, addl = node.properties, node.patternProperties, node.additionalProperties
    local names, fns, known = {}, {}, {}
    if props ~= nil then
        if type(props) ~= "table" then
            schema_error(sptr, "properties must be an object")
        end
        for name in pairs(props) do
            names[#names + 1] = name
        end
        sort(names, function(a, b)
            return tostring(a) < tostring(b)
        end)
        for i, name in ipairs(names) do
            fns[i] = compile_node(c, props[name], sptr .. "/properties/" .. escape_token(name))
            known[name] = true
        end
        local n = #names
        checks[#checks + 1] = function(v, st, k)
            if k ~= "object" then
                return true
            end
            local ok = true
            for i = 1, n do
                local name = names[i]
                local pv = v[name]
                if pv ~= nil and not descend(fns[i], pv, st, name) then
                    ok = false
                    if st.mute > 0 then
                        return false
                    end
                end
            end
            return ok
        end
    end
    if pprops == nil and addl == nil then
        return
    end
    local res, pfns = {}, {}
    if pprops ~= nil then
        if type(pprops) ~= "table" then
            schema_error(sptr, "patternProperties must be an object")
        end
        local pats = {}
        for pat in pairs(pprops) do
            pats[#pats + 1] = pat
        end
        sort(pats)
        for i, pat in ipairs(pats) do
            local psptr = sptr .. "/patternProperties/" .. escape_token(pat)
            res[i] = compile_regex(c, psptr, pat)
            pfns[i] = compile_node(c, pprops[pat], psptr)
        end
    end
    local np = #res
    local afn = addl ~= nil and addl ~= true and compile_node(c, addl, sptr .. "/additionalProperties") or nil
    local allowed
    if addl == false then
        local shown = {}
        for i = 1, mmin(#names, 20) do
            shown[i] = fmt("%q", tostring(names[i]))
        end
        allowed = #names == 0 and "no properties are allowed"
            or "allowed: " .. concat(shown, ", ") .. (#names > 20 and ", ..." or "")
        if np > 0 then
            local pats = {}
            for pat in pairs(pprops) do
                pats[#pats + 1] = fmt("/%s/", pat)
            end
            sort(pats)
            allowed = (#names == 0 and "allowed: " or allowed .. ", ") .. "names matching " .. concat(pats, " or ")
        end
    end
    checks[#checks + 1] = function(v, st, k)
        if k ~= "object" then
            return true
        end
        local ok = true
        for key, pv in pairs(v) do
            local skey = type(key) == "string" and key or tostring(key)
            local matched = known[key] or false
            for i = 1, np do
                local hit, err = res[i]:test(skey)
                if hit == nil then -- not judged: report, but not as "unexpected"
                    ok = fail(st, skey, "%s", err)
                    matched = true
                elseif hit then
                    matched = true
                    if not descend(pfns[i], pv, st, skey) then
                        ok = false
                        if st.mute > 0 then
                            return false
                        end
                    end
                end
            end
            if not matched and afn then
                local r
                if addl == false then
                    r = fail(st, skey, "unexpected property %q (%s)", skey, allowed)
                else
                    r = descend(afn, pv, st, skey)
                end
                if not r then
                    ok = false
                    if st.mute > 0 then
                        return false
                    end
                end
            end
        end
        return ok
    end
end

local function compile_required(req, sptr)
    if not is_list(req) then
        schema_error(sptr, "required must be a list of strings")
    end
    local names = {}
    for i, name in ipairs(req) do
        if type(name) ~= "string" then
            schema_error(sptr, "required must be a list of strings")
        end
        names[i] = name
    end
    local n = #names
    if n == 0 then
        return nil
    end
    return function(v, st, k)
        if k ~= "object" then
            return true
        end
        local ok = true
        for i = 1, n do
            if v[names[i]] == nil then
                ok = fail(st, nil, "missing required property %q", names[i])
                if st.mute > 0 then
                    return false
                end
            end
        end
        return ok
    end
end

local function count_props(v)
    local n = 0
    for _ in pairs(v) do
        n = n + 1
    end
    return n
end

local function compile_array_items(c, node, sptr, checks)
    local prefix, items = node.prefixItems, node.items
    local items_sptr = sptr .. "/items"
    if type(items) == "table" and items[1] ~= nil then
        -- pre-2020 tuple form: items is the prefix, additionalItems the rest
        prefix, items, items_sptr = items, node.additionalItems, sptr .. "/additionalItems"
    end
    local pfns = {}
    if prefix ~= nil then
        if not is_list(prefix) then
            schema_error(sptr, "prefixItems must be a list of schemas")
        end
        for i, s in ipairs(prefix) do
            pfns[i] = compile_node(c, s, sptr .. "/prefixItems/" .. (i - 1))
        end
    end
    local np = #pfns
    local ifn = items ~= nil and items ~= true and compile_node(c, items, items_sptr) or nil
    if np == 0 and ifn == nil then
        return
    end
    checks[#checks + 1] = function(v, st, k)
        if k ~= "array" then
            return true
        end
        local ok = true
        local n = #v
        for i = 1, n do
            local fn = i <= np and pfns[i] or ifn
            if fn then
                local r
                if items == false and i > np then
                    r = fail(st, i - 1, "unexpected item: at most %d item%s allowed", np, np == 1 and " is" or "s are")
                else
                    r = descend(fn, v[i], st, i - 1)
                end
                if not r then
                    ok = false
                    if st.mute > 0 then
                        return false
                    end
                end
            end
        end
        return ok
    end
end

local function compile_contains(c, node, sptr)
    local cfn = compile_node(c, node.contains, sptr .. "/contains")
    local min = node.minContains ~= nil and check_count(sptr, "minContains", node.minContains) or 1
    local max = node.maxContains ~= nil and check_count(sptr, "maxContains", node.maxContains) or nil
    return function(v, st, k)
        if k ~= "array" then
            return true
        end
        local count = 0
        for i = 1, #v do
            if probe(cfn, v[i], st) then
                count = count + 1
            end
        end
        if count < min then
            return fail(st, nil, "must contain at least %d item%s matching the \"contains\" schema (found %d)", min,
                min == 1 and "" or "s", count)
        end
        if max and count > max then
            return fail(st, nil, "must contain at most %d item%s matching the \"contains\" schema (found %d)", max,
                max == 1 and "" or "s", count)
        end
        return true
    end
end

local function compile_unique(v_unique)
    if v_unique ~= true then
        return nil
    end
    return function(v, st, k)
        if k ~= "array" then
            return true
        end
        local n = #v
        for i = 2, n do
            local a = v[i]
            for j = 1, i - 1 do
                if deep_equal(a, v[j]) then
                    return fail(st, nil, "items must be unique, but items %d and %d are equal", j - 1, i - 1)
                end
            end
        end
        return true
    end
end

-- multipleOf for doubles: exact for integers, tolerant of binary rounding
-- (0.0075 / 0.0001 = 74.99999999999999) otherwise.
local function is_multiple(v, m)
    if is_integer(v) and is_integer(m) then
        return v % m == 0
    end
    local q = v / m
    if q - q ~= 0 then -- overflowed: still exact when 1/m is an integer
        return is_integer(v) and is_integer(1 / m)
    end
    local r = abs(q - floor(q + 0.5))
    return r < 1e-9 * (abs(q) > 1 and abs(q) or 1)
end

local function compile_numeric(node, sptr, checks)
    local min, max, xmin, xmax, mult = node.minimum, node.maximum, node.exclusiveMinimum, node.exclusiveMaximum,
        node.multipleOf
    if min ~= nil then
        check_number(sptr, "minimum", min)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "number" or v >= min then
                return true
            end
            if st.mute > 0 then -- a probe: skip rendering the message
                return false
            end
            return fail(st, nil, "must be >= %s, got %s", show(min), show(v))
        end
    end
    if max ~= nil then
        check_number(sptr, "maximum", max)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "number" or v <= max then
                return true
            end
            if st.mute > 0 then -- a probe: skip rendering the message
                return false
            end
            return fail(st, nil, "must be <= %s, got %s", show(max), show(v))
        end
    end
    if xmin ~= nil then
        check_number(sptr, "exclusiveMinimum", xmin)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "number" or v > xmin then
                return true
            end
            if st.mute > 0 then -- a probe: skip rendering the message
                return false
            end
            return fail(st, nil, "must be > %s, got %s", show(xmin), show(v))
        end
    end
    if xmax ~= nil then
        check_number(sptr, "exclusiveMaximum", xmax)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "number" or v < xmax then
                return true
            end
            if st.mute > 0 then -- a probe: skip rendering the message
                return false
            end
            return fail(st, nil, "must be < %s, got %s", show(xmax), show(v))
        end
    end
    if mult ~= nil then
        if type(mult) ~= "number" or mult <= 0 then
            schema_error(sptr, "multipleOf must be a number > 0")
        end
        checks[#checks + 1] = function(v, st, k)
            if k ~= "number" or is_multiple(v, mult) then
                return true
            end
            if st.mute > 0 then -- a probe: skip rendering the message
                return false
            end
            return fail(st, nil, "must be a multiple of %s, got %s", show(mult), show(v))
        end
    end
end

local function compile_string(c, node, sptr, checks)
    local minl, maxl, pattern, format = node.minLength, node.maxLength, node.pattern, node.format
    if minl ~= nil then
        check_count(sptr, "minLength", minl)
        checks[#checks + 1] = function(v, st, k)
            -- a code point takes at most 4 bytes: skip counting when possible
            if k ~= "string" or #v >= 4 * minl then
                return true
            end
            local n = utf8_len(v)
            if n >= minl then
                return true
            end
            return fail(st, nil, "must be at least %d character%s long, got %d", minl, minl == 1 and "" or "s", n)
        end
    end
    if maxl ~= nil then
        check_count(sptr, "maxLength", maxl)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "string" or #v <= maxl then
                return true
            end
            local n = utf8_len(v)
            if n <= maxl then
                return true
            end
            return fail(st, nil, "must be at most %d character%s long, got %d", maxl, maxl == 1 and "" or "s", n)
        end
    end
    if pattern ~= nil then
        local re = compile_regex(c, sptr .. "/pattern", pattern)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "string" then
                return true
            end
            local ok, err = re:test(v)
            if ok then
                return true
            end
            if ok == nil then
                return fail(st, nil, "%s", err)
            end
            if st.mute > 0 then -- a probe: skip rendering the message
                return false
            end
            return fail(st, nil, "must match the pattern %q, got %s", pattern, show(v))
        end
    end
    local f = type(format) == "string" and FORMATS[format]
    if f then
        local test, what = f[1], f[2]
        checks[#checks + 1] = function(v, st, k)
            if k ~= "string" or test(v) then
                return true
            end
            if st.mute > 0 then -- a probe: skip rendering the message
                return false
            end
            return fail(st, nil, "must be %s (format %q), got %s", what, format, show(v))
        end
    end
end

local function compile_list(c, list, sptr, key)
    if not is_list(list) or list[1] == nil then
        schema_error(sptr, "%s must be a non-empty list of schemas", key)
    end
    local fns = {}
    for i, s in ipairs(list) do
        fns[i] = compile_node(c, s, sptr .. "/" .. key .. "/" .. (i - 1))
    end
    return fns
end

local function compile_applicators(c, node, sptr, checks)
    if node.allOf ~= nil then
        local fns = compile_list(c, node.allOf, sptr, "allOf")
        local n = #fns
        checks[#checks + 1] = function(v, st)
            local ok = true
            for i = 1, n do
                if not fns[i](v, st) then
                    ok = false
                    if st.mute > 0 then
                        return false
                    end
                end
            end
            return ok
        end
    end
    if node.anyOf ~= nil then
        local fns = compile_list(c, node.anyOf, sptr, "anyOf")
        local n = #fns
        checks[#checks + 1] = function(v, st)
            for i = 1, n do
                if probe(fns[i], v, st) then
                    return true
                end
            end
            if st.mute == 0 then
                fail(st, nil, "must match at least one of the %d schemas in anyOf; the alternatives report:", n)
                for i = 1, n do
                    fns[i](v, st)
                end
            end
            return false
        end
    end
    if node.oneOf ~= nil then
        local fns = compile_list(c, node.oneOf, sptr, "oneOf")
        local n = #fns
        checks[#checks + 1] = function(v, st)
            local first
            for i = 1, n do
                if probe(fns[i], v, st) then
                    if first then
                        return fail(st, nil, "must match exactly one schema in oneOf, but matches #%d and #%d",
                            first - 1, i - 1)
                    end
                    first = i
                end
            end
            if first then
                return true
            end
            if st.mute == 0 then
                fail(st, nil, "must match exactly one of the %d schemas in oneOf; the alternatives report:", n)
                for i = 1, n do
                    fns[i](v, st)
                end
            end
            return false
        end
    end
    if node["not"] ~= nil then
        local fn = compile_node(c, node["not"], sptr .. "/not")
        checks[#checks + 1] = function(v, st)
            if probe(fn, v, st) then
                return fail(st, nil, "must not match the schema in \"not\"")
            end
            return true
        end
    end
    if node["if"] ~= nil then
        local iffn = compile_node(c, node["if"], sptr .. "/if")
        local thenfn = node["then"] ~= nil and compile_node(c, node["then"], sptr .. "/then") or pass
        local elsefn = node["else"] ~= nil and compile_node(c, node["else"], sptr .. "/else") or pass
        if thenfn ~= pass or elsefn ~= pass then
            checks[#checks + 1] = function(v, st)
                if probe(iffn, v, st) then
                    return thenfn(v, st)
                end
                return elsefn(v, st)
            end
        end
    end
end

local function compile_object_misc(c, node, sptr, checks)
    local minp, maxp, dreq, dsch, pnames = node.minProperties, node.maxProperties, node.dependentRequired,
        node.dependentSchemas, node.propertyNames
    if dreq ~= nil then
        if type(dreq) ~= "table" then
            schema_error(sptr, "dependentRequired must be an object")
        end
        for prop, list in pairs(dreq) do
            local req = compile_required(list, sptr .. "/dependentRequired/" .. escape_token(prop))
            if req then
                checks[#checks + 1] = function(v, st, k)
                    if k ~= "object" or v[prop] == nil then
                        return true
                    end
                    local ok = true
                    for _, name in ipairs(list) do
                        if v[name] == nil then
                            ok = fail(st, nil, "property %q is required when %q is present", name, prop)
                        end
                    end
                    return ok
                end
            end
        end
    end
    if dsch ~= nil then
        if type(dsch) ~= "table" then
            schema_error(sptr, "dependentSchemas must be an object")
        end
        for prop, s in pairs(dsch) do
            local fn = compile_node(c, s, sptr .. "/dependentSchemas/" .. escape_token(prop))
            checks[#checks + 1] = function(v, st, k)
                if k ~= "object" or v[prop] == nil then
                    return true
                end
                return fn(v, st)
            end
        end
    end
    if pnames ~= nil and pnames ~= true then
        local fn = compile_node(c, pnames, sptr .. "/propertyNames")
        checks[#checks + 1] = function(v, st, k)
            if k ~= "object" then
                return true
            end
            for key in pairs(v) do
                local skey = tostring(key)
                if not probe(fn, skey, st) then
                    return fail(st, skey, "invalid property name %q (does not match propertyNames)", skey)
                end
            end
            return true
        end
    end
    if minp ~= nil then
        check_count(sptr, "minProperties", minp)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "object" then
                return true
            end
            local n = count_props(v)
            if n >= minp then
                return true
            end
            return fail(st, nil, "must have at least %d propert%s, got %d", minp, minp == 1 and "y" or "ies", n)
        end
    end
    if maxp ~= nil then
        check_count(sptr, "maxProperties", maxp)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "object" then
                return true
            end
            local n = count_props(v)
            if n <= maxp then
                return true
            end
            return fail(st, nil, "must have at most %d propert%s, got %d", maxp, maxp == 1 and "y" or "ies", n)
        end
    end
end

local function compile_array_misc(node, sptr, checks)
    local mini, maxi = node.minItems, node.maxItems
    if mini ~= nil then
        check_count(sptr, "minItems", mini)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "array" or #v >= mini then
                return true
            end
            return fail(st, nil, "must have at least %d item%s, got %d", mini, mini == 1 and "" or "s", #v)
        end
    end
    if maxi ~= nil then
        check_count(sptr, "maxItems", maxi)
        checks[#checks + 1] = function(v, st, k)
            if k ~= "array" or #v <= maxi then
                return true
            end
            return fail(st, nil, "must have at most %d item%s, got %d", maxi, maxi == 1 and "" or "s", #v)
        end
    end
    local u = compile_unique(node.uniqueItems)
    if u then
        checks[#checks + 1] = u
    end
end

-- A cell holds the compiled function of a $ref target; it is filled after
-- the pass that created it, which is what makes recursive schemas work.
local function ref_cell(c, target, tptr)
    local cell = c.cells[target]
    if cell == nil then
        cell = {}
        c.cells[target] = cell
        c.pending[#c.pending + 1] = { target, tptr, cell }
    end
    return cell
end

local function compile_ref(c, node, sptr)
    local ref = node["$ref"]
    if type(ref) ~= "string" then
        schema_error(sptr, "$ref must be a string")
    end
    local target, tptr = resolve_ref(c, node, ref, sptr .. "/$ref")
    local cell = ref_cell(c, target, tptr)
    return function(v, st)
        local d = st.rdepth + 1
        if d > MAX_REF_DEPTH then
            return fail(st, nil, "schema recursion too deep at $ref %q", ref)
        end
        st.rdepth = d
        local ok = cell.fn(v, st)
        st.rdepth = d - 1
        return ok
    end
end

local function false_schema(v, st)
    return fail(st, nil, "no value is allowed here")
end

compile_node = function(c, node, sptr)
    if node == true then
        return pass
    elseif node == false then
        return false_schema
    elseif type(node) ~= "table" then
        schema_error(sptr, "a schema must be an object or a boolean")
    end
    local done = c.compiled[node]
    if done then
        return done
    end
    local checks = {}
    if node["$ref"] ~= nil then
        checks[1] = compile_ref(c, node, sptr)
    end
    if node.type ~= nil then
        checks[#checks + 1] = compile_type(node.type, sptr .. "/type")
    end
    if node.enum ~= nil then
        checks[#checks + 1] = compile_enum(node.enum, sptr .. "/enum")
    end
    if node.const ~= nil then
        checks[#checks + 1] = compile_const(node.const)
    end
    if node.required ~= nil then
        checks[#checks + 1] = compile_required(node.required, sptr .. "/required")
    end
    compile_object_members(c, node, sptr, checks)
    compile_object_misc(c, node, sptr, checks)
    compile_array_items(c, node, sptr, checks)
    if node.contains ~= nil then
        checks[#checks + 1] = compile_contains(c, node, sptr)
    end
    compile_array_misc(node, sptr, checks)
    compile_string(c, node, sptr, checks)
    compile_numeric(node, sptr, checks)
    compile_applicators(c, node, sptr, checks)

    local n = #checks
    local fn
    if n == 0 then
        fn = pass
    elseif n == 1 then
        local c1 = checks[1]
        fn = function(v, st)
            return c1(v, st, kind_of(v))
        end
    else
        fn = function(v, st)
            local k = kind_of(v)
            local ok = true
            for i = 1, n do
                if not checks[i](v, st, k) then
                    ok = false
                    if st.mute > 0 then
                        return false
                    end
                end
            end
            return ok
        end
    end
    c.compiled[node] = fn
    return fn
end

---------------------------------------------------------------------------
-- Public API
---------------------------------------------------------------------------

local validator_mt = {}
validator_mt.__index = validator_mt

--- Validate `value`; returns true, or false and a list of errors.
function validator_mt:validate(value)
    local st = self.st
    st.depth, st.mute, st.rdepth, st.errors = 0, 0, 0, nil
    if self.fn(value, st) then
        return true
    end
    local errs = st.errors
    st.errors = nil
    if errs == nil then -- only a muted path failed: should not happen
        errs = { { path = "", message = "value does not match the schema" } }
    end
    return false, errs
end

--- Compile a schema document (a table or a boolean).
function _M.compile(doc)
    if type(doc) ~= "table" and type(doc) ~= "boolean" then
        return nil, "invalid schema: expected an object or a boolean, got " .. type(doc)
    end
    local c = {
        base_of = {}, resources = {}, anchors = {}, compiled = {}, cells = {}, pending = {}, regexes = {},
        root_base = "",
    }
    local ok, fn = pcall(function()
        if type(doc) == "table" then
            if type(doc["$id"]) == "string" then
                c.root_base = split_fragment(resolve_uri("", doc["$id"]))
            end
            c.resources[c.root_base] = doc
            index_schema(c, doc, c.root_base)
        end
        local root = compile_node(c, doc, "#")
        local i = 1
        while c.pending[i] do
            local p = c.pending[i]
            p[3].fn = compile_node(c, p[1], p[2])
            i = i + 1
        end
        return root
    end)
    if not ok then
        if type(fn) == "table" and fn.schema_error then
            return nil, fn.schema_error
        end
        error(fn, 0)
    end
    return setmetatable({ fn = fn, st = { path = {}, depth = 0, mute = 0, rdepth = 0 } }, validator_mt)
end

local cache = setmetatable({}, { __mode = "k" })

--- Validate value against doc, compiling doc once (cached per doc table).
-- Returns true | false, errors | nil, err (invalid schema).
function _M.validate(doc, value)
    local v = type(doc) == "table" and cache[doc]
    if not v then
        local err
        v, err = _M.compile(doc)
        if not v then
            return nil, err
        end
        if type(doc) == "table" then
            cache[doc] = v
        end
    end
    return v:validate(value)
end

--- One line summarising errors: "path: message; path: message".
function _M.format_errors(errors, max)
    local out = {}
    for i = 1, mmin(#errors, max or 5) do
        local e = errors[i]
        out[i] = (e.path == "" and "(root)" or e.path) .. ": " .. e.message
    end
    if #errors > #out then
        out[#out + 1] = fmt("(%d more)", #errors - #out)
    end
    return concat(out, "; ")
end

_M.deep_equal = deep_equal

return _M

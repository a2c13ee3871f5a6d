/*
 * ljson.c - the `moonmcp.jsonc` Lua module: the only JSON code in moonmcp.
 * lua/moonmcp/json.lua is its public face; nothing else parses or prints JSON.
 *
 * Why our own codec
 *   Debian's lua-cjson (2.1.0) prints empty tables as `{}`, keeps only 14
 *   significant digits, and decodes `[]` and `{}` to the same empty table. The
 *   wire needs `[]` for empty lists, exact JSON-RPC ids, and a schema
 *   validator needs to tell an empty array from an empty object.
 *
 * Value mapping
 *   object  <-> plain Lua table (string keys). Duplicate keys: the last wins.
 *   array   <-> Lua table whose metatable is the array metatable (array_mt,
 *               shared through registry[MM_JSON_ARRAY_MT]); decode always
 *               sets it, so `[]` and `{}` stay distinguishable.
 *   null    <-> lightuserdata NULL (the same value as cjson.null).
 *   number  <-> Lua number (a double). Integers up to 2^53 are exact.
 *   string, true, false <-> themselves.
 *
 * decode(text) is strict RFC 8259: one value, optional surrounding whitespace,
 * no comments, trailing commas, NaN/Infinity, leading zeros or raw control
 * characters. Raw bytes in strings must be valid UTF-8 (overlongs, surrogates
 * and code points above U+10FFFF are rejected). A \u escape of a lone or
 * mis-paired surrogate is valid JSON grammar and decodes to U+FFFD. Numbers
 * whose magnitude overflows a double are rejected; "-0" decodes to -0.0.
 * Nesting deeper than MAX_DEPTH is rejected. Every failure returns
 * `nil, "<what> at offset <n>"` where n is the 0-based byte offset in text.
 *
 * encode(value) raises (message names a JSON Pointer to the bad value) on
 * functions, threads, full userdata, lightuserdata other than null, NaN and
 * +-Inf, nesting deeper than MAX_DEPTH (which is also how cycles end), and
 * tables that are neither arrays nor objects. Tables are classified as:
 *   - has array_mt: always an array; its keys must be exactly 1..n (empty
 *     gives `[]`); anything else raises.
 *   - otherwise empty: `{}`.
 *   - otherwise keys exactly 1..n: an array.
 *   - otherwise at least one string key and every other key a number: an
 *     object; number keys are stringified like number values ("1", "2.5").
 *   - anything else (only number keys but not 1..n, or keys that are
 *     booleans/tables/...) raises.
 * Metatables other than array_mt are ignored: all access is raw.
 * Numbers: integral values with |n| < 2^63 print as integers ("-0" for
 * negative zero, so decode/encode round-trips); others print as the shortest
 * of %.15g/%.16g/%.17g that reads back to the same double.
 * Strings: `"` `\` and bytes < 0x20 are escaped (\b \f \n \r \t, else
 * \u00XX); `/` and non-ASCII are left alone. Valid UTF-8 passes through; each
 * byte that does not begin a valid UTF-8 sequence becomes U+FFFD, so the
 * output is always valid UTF-8 (as Go's encoding/json does).
 *
 * Memory and lifetimes
 *   Each opened module owns one scratch buffer (a full userdata with __gc,
 *   kept as an upvalue of encode/decode/kind) that is reused across calls:
 *   encode builds its output there and decode uses it for strings with
 *   escapes. Being a userdata, it is never leaked when a Lua error unwinds a
 *   call. It is freed after a call once it grew beyond BUFFER_KEEP_MAX, so one
 *   huge message does not pin memory. No Lua code runs during a call (all
 *   table access is raw), except a __gc finalizer the collector may run when
 *   we allocate; should that finalizer call encode/decode, the nested call
 *   finds the buffer busy and uses a fresh one. The busy flag stays set if an
 *   allocation error unwinds a call; later calls then still work, with a
 *   fresh buffer each.
 *
 * Parsing relies on Lua strings being NUL-terminated: the NUL after the last
 * byte is a sentinel that stops every scanning loop without bounds checks.
 */
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "bytes.h"
#include "ljson.h"

#define MAX_DEPTH 1000
#define BUFFER_KEEP_MAX (1u << 20)
#define BUFFER_MIN 4096
#define BUFFER_MT "moonmcp.json.buffer"

/* Upvalues of encode, decode and kind. */
#define UPV_ARRAY_MT lua_upvalueindex(1)
#define UPV_BUFFER lua_upvalueindex(2)

/* -------------------------------------------------------------------------
 * The scratch buffer
 */

struct buffer {
    char *data; /* malloc'd, NULL until first use */
    size_t len;
    size_t cap;
    int busy; /* an encode/decode is using it */
};

static int buffer_gc(lua_State *L)
{
    struct buffer *b = luaL_checkudata(L, 1, BUFFER_MT);
    free(b->data);
    b->data = NULL;
    b->cap = b->len = 0;
    return 0;
}

/* Pushes a new, empty buffer userdata. */
static struct buffer *buffer_push_new(lua_State *L)
{
    struct buffer *b = lua_newuserdata(L, sizeof(*b));
    memset(b, 0, sizeof(*b));
    luaL_getmetatable(L, BUFFER_MT);
    lua_setmetatable(L, -2);
    return b;
}

/* Takes the module's buffer, or, when it is busy, pushes a fresh one that the
 * caller leaves on the stack for the rest of the call. */
static struct buffer *buffer_acquire(lua_State *L)
{
    struct buffer *b = lua_touserdata(L, UPV_BUFFER);
    if (b->busy) b = buffer_push_new(L);
    b->busy = 1;
    b->len = 0;
    return b;
}

static void buffer_release(struct buffer *b)
{
    b->busy = 0;
    if (b->cap > BUFFER_KEEP_MAX) {
        free(b->data);
        b->data = NULL;
        b->cap = 0;
    }
}

/* Makes room for n more bytes; returns 0, or -1 when out of memory. */
static int buffer_grow(struct buffer *b, size_t n)
{
    size_t cap = b->cap ? b->cap : BUFFER_MIN;
    char *data;
    if (n > SIZE_MAX / 2 - b->len) return -1;
    while (cap - b->len < n)
        cap *= 2;
    data = realloc(b->data, cap);
    if (!data) return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

/* -------------------------------------------------------------------------
 * Shared helpers
 */

/* Length (2..4) of the valid multi-byte UTF-8 sequence at p, or 0. p[0] is
 * >= 0x80 and the string is NUL-terminated, so the && chains never read past
 * the terminator. */
static int utf8_sequence_length(const unsigned char *p)
{
    unsigned c = p[0];
#define CONT(x) ((x) >= 0x80 && (x) <= 0xBF)
    if (c < 0xC2) return 0;
    if (c < 0xE0) return CONT(p[1]) ? 2 : 0;
    if (c < 0xF0) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi && CONT(p[2]) ? 3 : 0;
    }
    if (c < 0xF5) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi && CONT(p[2]) && CONT(p[3]) ? 4 : 0;
    }
    return 0;
#undef CONT
}

/* Writes code point cp (<= 0x10FFFF, not a surrogate) as UTF-8; returns the
 * number of bytes written. */
static int utf8_encode(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Writes the decimal digits of v; returns their count (at most 20). */
static int format_integer(char *out, int64_t v)
{
    char tmp[24];
    int n = 0, len = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) out[len++] = '-';
    while (n)
        out[len++] = tmp[--n];
    return len;
}

/* Writes number d as JSON into out (at least 32 bytes); returns the length,
 * or 0 when d is NaN or infinite. */
static int format_number(char *out, double d)
{
    int len, prec, i, j;
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        int64_t i64 = (int64_t)d;
        if ((double)i64 == d) {
            if (i64 == 0 && signbit(d)) {
                memcpy(out, "-0", 2);
                return 2;
            }
            return format_integer(out, i64);
        }
    } else if (!isfinite(d)) {
        return 0;
    }
    for (prec = 15;; prec++) {
        len = snprintf(out, 32, "%.*g", prec, d);
        if (prec == 17 || strtod(out, NULL) == d) break;
    }
    /* A locale may print the decimal point as something other than '.'. */
    for (i = j = 0; i < len; i++) {
        char c = out[i];
        if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == '.')
            out[j++] = c;
        else if (j == 0 || out[j - 1] != '.')
            out[j++] = '.';
    }
    return j;
}

/* -------------------------------------------------------------------------
 * Decoding
 */

struct decoder {
    lua_State *L;
    const unsigned char *start; /* the text; start[end - start] == '\0' */
    const unsigned char *p;     /* next byte to read */
    const unsigned char *end;
    struct buffer *buf; /* for strings with escapes */
    int depth;
    char error[96]; /* set once by fail() */
};

static int fail(struct decoder *d, const unsigned char *at, const char *what)
{
    snprintf(d->error, sizeof(d->error), "%s at offset %zu", what, (size_t)(at - d->start));
    return -1;
}

/* Fails on the byte at `at`: either the end of input or an unexpected byte. */
static int fail_unexpected(struct decoder *d, const unsigned char *at)
{
    char what[48];
    if (at >= d->end) return fail(d, at, "unexpected end of input");
    if (*at >= 0x20 && *at < 0x7F)
        snprintf(what, sizeof(what), "unexpected character '%c'", *at);
    else
        snprintf(what, sizeof(what), "unexpected byte 0x%02x", *at);
    return fail(d, at, what);
}

static void skip_whitespace(struct decoder *d)
{
    const unsigned char *p = d->p;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    d->p = p;
}

/* Bytes that end a plain run inside a string: control characters (and so
 * the NUL sentinel), '"', '\\' and every byte >= 0x80 (UTF-8 to check). */
/* clang-format off */
static const unsigned char string_special[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x00 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x10 */
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x30 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x40 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* 0x50 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x60 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x70 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x80 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x90 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xA0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xB0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xC0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xD0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xE0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xF0 */
};
/* clang-format on */

/* Value of the four hex digits at p, or -1. */
static long hex4(const unsigned char *p)
{
    long v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        unsigned c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            v |= (c | 0x20) - 'a' + 10;
        else
            return -1;
    }
    return v;
}

/* Decodes the escape at d->p (a backslash) into the buffer (which has room for
 * at least 4 bytes) and advances past it. */
static int decode_escape(struct decoder *d)
{
    static const char escaped[] = "\"\\/bfnrt", unescaped[] = "\"\\/\b\f\n\r\t";
    const unsigned char *p = d->p;
    struct buffer *b = d->buf;
    const char *k;
    long cp, lo;
    if (p[1] != 'u') {
        if (p + 1 >= d->end) return fail(d, p + 1, "unexpected end of input");
        if (p[1] == '\0' || !(k = strchr(escaped, p[1]))) return fail(d, p, "invalid escape");
        b->data[b->len++] = unescaped[k - escaped];
        d->p = p + 2;
        return 0;
    }
    cp = hex4(p + 2);
    if (cp < 0) return fail(d, p, "invalid \\u escape");
    p += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF && p[0] == '\\' && p[1] == 'u' &&
        (lo = hex4(p + 2)) >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
        cp = 0xFFFD; /* a lone surrogate: see the top of the file */
    }
    b->len += utf8_encode(b->data + b->len, (unsigned)cp);
    d->p = p;
    return 0;
}

/* Decodes the string at d->p (a '"') and pushes it. */
static int decode_string(struct decoder *d)
{
    const unsigned char *open = d->p, *s = open + 1, *p = s, *run;
    struct buffer *b = d->buf;
    int n;

    /* Fast path: no escapes, push straight from the text. */
    for (;;) {
        while (!string_special[*p])
            p++;
        if (*p < 0x80) break;
        if (!(n = utf8_sequence_length(p))) return fail(d, p, "invalid UTF-8 in string");
        p += n;
    }
    if (*p == '"') {
        lua_pushlstring(d->L, (const char *)s, p - s);
        d->p = p + 1;
        return 0;
    }
    if (*p != '\\') goto control;

    /* Slow path: copy into the buffer, decoding escapes. Escapes never
     * expand (\uXXXX is 6 bytes for at most 3 of UTF-8), but one being
     * decoded needs 4 bytes of room. */
    b->len = 0;
    run = s;
    for (;;) {
        /* Copy the run [run, p), then handle *p. */
        if (b->cap - b->len < (size_t)(p - run) + 4 && buffer_grow(b, (size_t)(p - run) + 4))
            return fail(d, p, "out of memory");
        memcpy(b->data + b->len, run, p - run);
        b->len += p - run;
        if (*p == '"') break;
        if (*p < 0x20) goto control;
        d->p = p;
        if (decode_escape(d)) return -1;
        run = p = d->p;
        for (;;) {
            while (!string_special[*p])
                p++;
            if (*p < 0x80) break;
            if (!(n = utf8_sequence_length(p))) return fail(d, p, "invalid UTF-8 in string");
            p += n;
        }
    }
    lua_pushlstring(d->L, b->data, b->len);
    d->p = p + 1;
    return 0;

control:
    if (p >= d->end) return fail(d, open, "unterminated string");
    return fail(d, p, "control character in string");
}

static const double exact_powers_of_10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int is_digit(unsigned c)
{
    return c - '0' < 10;
}

/* Decodes the number at d->p and pushes it. */
static int decode_number(struct decoder *d)
{
    const unsigned char *start = d->p, *p = start;
    uint64_t mantissa = 0;
    int negative = 0, digits = 0, exact = 1;
    long exponent = 0, frac_digits = 0;
    double v;

    if (*p == '-') {
        negative = 1;
        p++;
    }
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        for (; is_digit(*p); p++) {
            if (digits < 19)
                mantissa = mantissa * 10 + (*p - '0');
            else
                exact = 0;
            digits++;
        }
    } else {
        return fail(d, start, "invalid number");
    }
    if (*p == '.') {
        p++;
        if (!is_digit(*p)) return fail(d, start, "invalid number");
        for (; is_digit(*p); p++) {
            if (mantissa == 0 && *p == '0') {
                frac_digits++; /* leading zeros of 0.000ddd are not significant */
                continue;
            }
            if (digits < 19) {
                mantissa = mantissa * 10 + (*p - '0');
                frac_digits++;
            } else {
                exact = 0;
            }
            digits++;
        }
    }
    if (*p == 'e' || *p == 'E') {
        int exp_negative = 0;
        p++;
        if (*p == '+' || *p == '-') exp_negative = *p++ == '-';
        if (!is_digit(*p)) return fail(d, start, "invalid number");
        for (; is_digit(*p); p++)
            if (exponent < 100000) exponent = exponent * 10 + (*p - '0');
        if (exp_negative) exponent = -exponent;
    }
    exponent -= frac_digits;

    if (exact && exponent == 0) {
        v = (double)mantissa; /* correctly rounded: at most 19 digits */
    } else if (exact && digits <= 15 && exponent >= -22 && exponent <= 22) {
        /* Both operands are exact doubles, so one IEEE operation rounds
         * correctly (Clinger's fast path). */
        v = (double)mantissa;
        v = exponent < 0 ? v / exact_powers_of_10[-exponent] : v * exact_powers_of_10[exponent];
    } else {
        char small[64], *end;
        const char *from = (const char *)start;
        const char *dp = localeconv()->decimal_point;
        size_t len = p - start;
        if (dp[0] != '.' || dp[1] != '\0') {
            /* strtod follows the locale's decimal point (assumed one byte). */
            size_t i;
            if (len >= sizeof(small)) return fail(d, start, "number too long for the locale");
            memcpy(small, start, len);
            small[len] = '\0';
            for (i = 0; i < len; i++)
                if (small[i] == '.') small[i] = dp[0];
            from = small;
        }
        /* The grammar was checked above; strtod must stop where it stopped
         * (the byte after a JSON number cannot continue a C one). */
        v = strtod(from, &end);
        if ((size_t)(end - from) != len) return fail(d, start, "invalid number");
        if (!isfinite(v)) return fail(d, start, "number out of range");
        negative = 0; /* strtod saw the sign */
    }
    lua_pushnumber(d->L, negative ? -v : v);
    d->p = p;
    return 0;
}

static int decode_value(struct decoder *d);

/* Decodes the array at d->p (a '[') and pushes it. */
static int decode_array(struct decoder *d)
{
    lua_State *L = d->L;
    int i = 1;
    if (++d->depth > MAX_DEPTH) return fail(d, d->p, "nesting deeper than 1000");
    if (!lua_checkstack(L, 3)) return fail(d, d->p, "Lua stack exhausted");
    lua_newtable(L);
    lua_pushvalue(L, UPV_ARRAY_MT);
    lua_setmetatable(L, -2);
    d->p++;
    skip_whitespace(d);
    if (*d->p == ']') {
        d->p++;
        d->depth--;
        return 0;
    }
    for (;;) {
        if (decode_value(d)) return -1;
        lua_rawseti(L, -2, i++);
        skip_whitespace(d);
        if (*d->p == ',') {
            d->p++;
        } else if (*d->p == ']') {
            d->p++;
            d->depth--;
            return 0;
        } else {
            return fail_unexpected(d, d->p);
        }
    }
}

/* Decodes the object at d->p (a '{') and pushes it. */
static int decode_object(struct decoder *d)
{
    lua_State *L = d->L;
    if (++d->depth > MAX_DEPTH) return fail(d, d->p, "nesting deeper than 1000");
    if (!lua_checkstack(L, 3)) return fail(d, d->p, "Lua stack exhausted");
    lua_newtable(L);
    d->p++;
    skip_whitespace(d);
    if (*d->p == '}') {
        d->p++;
        d->depth--;
        return 0;
    }
    for (;;) {
        skip_whitespace(d);
        if (*d->p != '"') {
            if (d->p >= d->end) return fail_unexpected(d, d->p);
            return fail(d, d->p, "expected a string key");
        }
        if (decode_string(d)) return -1;
        skip_whitespace(d);
        if (*d->p != ':') return fail_unexpected(d, d->p);
        d->p++;
        if (decode_value(d)) return -1;
        lua_rawset(L, -3);
        skip_whitespace(d);
        if (*d->p == ',') {
            d->p++;
        } else if (*d->p == '}') {
            d->p++;
            d->depth--;
            return 0;
        } else {
            return fail_unexpected(d, d->p);
        }
    }
}

/* Decodes the literal `word` (true, false, null) at d->p. */
static int expect_literal(struct decoder *d, const char *word, size_t len)
{
    if ((size_t)(d->end - d->p) < len || memcmp(d->p, word, len)) {
        size_t i;
        for (i = 0; i < len && d->p + i < d->end && d->p[i] == (unsigned char)word[i]; i++)
            ;
        return fail_unexpected(d, d->p + i);
    }
    d->p += len;
    return 0;
}

/* Decodes the value at d->p (after optional whitespace) and pushes it. */
static int decode_value(struct decoder *d)
{
    skip_whitespace(d);
    switch (*d->p) {
    case '{':
        return decode_object(d);
    case '[':
        return decode_array(d);
    case '"':
        return decode_string(d);
    case 't':
        if (expect_literal(d, "true", 4)) return -1;
        lua_pushboolean(d->L, 1);
        return 0;
    case 'f':
        if (expect_literal(d, "false", 5)) return -1;
        lua_pushboolean(d->L, 0);
        return 0;
    case 'n':
        if (expect_literal(d, "null", 4)) return -1;
        lua_pushlightuserdata(d->L, NULL);
        return 0;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        return decode_number(d);
    default:
        return fail_unexpected(d, d->p);
    }
}

/* decode(text) -> value | nil, message; text is a string or bytes (bytes.c) */
static int json_decode(lua_State *L)
{
    size_t len;
    const char *text = mm_bytes_check(L, 1, &len);
    struct decoder d;
    int base, rc;

    lua_settop(L, 1);
    d.buf = buffer_acquire(L); /* may push a buffer: +0 or +1 */
    base = lua_gettop(L);
    d.L = L;
    d.start = d.p = (const unsigned char *)text;
    d.end = d.start + len;
    d.depth = 0;
    d.error[0] = '\0';
    rc = decode_value(&d);
    if (rc == 0) {
        skip_whitespace(&d);
        if (d.p != d.end) rc = fail_unexpected(&d, d.p);
    }
    buffer_release(d.buf);
    if (rc) {
        lua_settop(L, base);
        lua_pushnil(L);
        lua_pushstring(L, d.error);
        return 2;
    }
    return 1;
}

/* -------------------------------------------------------------------------
 * Encoding
 */

/* One step of the path from the root to the value being encoded, kept so an
 * error can say where the bad value is. */
struct path_step {
    const char *key; /* object key (alive on the Lua stack), or NULL */
    size_t key_len;
    double index; /* array index (0-based) or number key, when key is NULL */
};

struct encoder {
    lua_State *L;
    struct buffer *buf;
    int depth; /* tables entered; path[0 .. depth-1] lead to the current value */
    struct path_step path[MAX_DEPTH];
};

/* Appends at most n bytes of s to msg (size MESSAGE_MAX, NUL-terminated). */
#define MESSAGE_MAX 512
static void message_add(char *msg, const char *s, size_t n)
{
    size_t len = strlen(msg);
    if (n > MESSAGE_MAX - 1 - len) n = MESSAGE_MAX - 1 - len;
    memcpy(msg + len, s, n);
    msg[len + n] = '\0';
}

/* Raises "json.encode: cannot encode <what> at <JSON Pointer>". The Lua stack
 * is left alone: the path's keys live on it. Does not return. */
static int encode_fail(struct encoder *e, const char *what)
{
    char msg[MESSAGE_MAX] = "json.encode: cannot encode ", num[32];
    int i;
    size_t j;
    buffer_release(e->buf);
    message_add(msg, what, strlen(what));
    message_add(msg, " at ", 4);
    if (e->depth == 0) message_add(msg, "the top level", 13);
    for (i = 0; i < e->depth; i++) {
        const struct path_step *s = &e->path[i];
        message_add(msg, "/", 1);
        if (!s->key) {
            message_add(msg, num, format_number(num, s->index));
            continue;
        }
        for (j = 0; j < s->key_len; j++) { /* RFC 6901 escaping */
            if (s->key[j] == '~')
                message_add(msg, "~0", 2);
            else if (s->key[j] == '/')
                message_add(msg, "~1", 2);
            else
                message_add(msg, s->key + j, 1);
        }
    }
    if (strlen(msg) == MESSAGE_MAX - 1) memcpy(msg + MESSAGE_MAX - 4, "...", 3);
    return luaL_error(e->L, "%s", msg);
}

static void reserve(struct encoder *e, size_t n)
{
    struct buffer *b = e->buf;
    if (b->cap - b->len < n && buffer_grow(b, n)) encode_fail(e, "(out of memory)");
}

static void put_char(struct encoder *e, char c)
{
    reserve(e, 1);
    e->buf->data[e->buf->len++] = c;
}

static void put_raw(struct encoder *e, const char *s, size_t n)
{
    reserve(e, n);
    memcpy(e->buf->data + e->buf->len, s, n);
    e->buf->len += n;
}

/* The escape for each ASCII byte: 0 none, 'u' for \u00XX, else the letter
 * after the backslash. */
/* clang-format off */
static const char escape_letter[128] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
    0, 0, '"', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\\', 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

/* Puts the Lua string str (NUL-terminated, as all Lua strings are) quoted. */
static void put_string(struct encoder *e, const char *str, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)str, *end = p + len;
    struct buffer *b;
    /* Invariant: room for the rest of the input plus the closing quote.
     * Plain bytes copy 1:1; an escape or U+FFFD reserves its extra bytes. */
    reserve(e, len + 2);
    b = e->buf;
    b->data[b->len++] = '"';
    for (;;) {
        const unsigned char *run = p;
        int n;
        while (!string_special[*p]) /* the NUL terminator stops this */
            p++;
        memcpy(b->data + b->len, run, p - run);
        b->len += p - run;
        if (p == end) break;
        if (*p < 0x80) {
            char c = escape_letter[*p];
            reserve(e, 6 + (size_t)(end - p));
            b->data[b->len++] = '\\';
            b->data[b->len++] = c;
            if (c == 'u') {
                b->data[b->len++] = '0';
                b->data[b->len++] = '0';
                b->data[b->len++] = hex[*p >> 4];
                b->data[b->len++] = hex[*p & 15];
            }
            p++;
        } else if ((n = utf8_sequence_length(p)) != 0) {
            memcpy(b->data + b->len, p, n);
            b->len += n;
            p += n;
        } else {
            reserve(e, 3 + (size_t)(end - p));
            memcpy(b->data + b->len, "\xEF\xBF\xBD", 3); /* U+FFFD */
            b->len += 3;
            p++;
        }
    }
    b->data[b->len++] = '"';
}

static void encode_value(struct encoder *e);

/* Encodes t[1..n] of the table on top of the stack as an array. */
static void encode_array_items(struct encoder *e, size_t n)
{
    lua_State *L = e->L;
    struct path_step *step = &e->path[e->depth - 1];
    size_t i;
    step->key = NULL;
    put_char(e, '[');
    for (i = 1; i <= n; i++) {
        if (i > 1) put_char(e, ',');
        lua_rawgeti(L, -1, (int)i);
        if (lua_isnil(L, -1)) {
            e->depth--; /* blame the table, not the missing element */
            encode_fail(e, "an array with holes or non-index keys");
        }
        step->index = (double)(i - 1);
        encode_value(e);
        lua_pop(L, 1);
    }
    put_char(e, ']');
}

/* Puts the key at stack index -2 (lua_next's key; not modified, so the
 * traversal survives) as an object key, and records it in step. */
static void put_key(struct encoder *e, struct path_step *step)
{
    lua_State *L = e->L;
    if (lua_type(L, -2) == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, -2, &len);
        step->key = s;
        step->key_len = len;
        put_string(e, s, len);
    } else if (lua_type(L, -2) == LUA_TNUMBER) {
        char num[32];
        int n;
        step->key = NULL;
        step->index = lua_tonumber(L, -2);
        n = format_number(num, step->index);
        if (!n) {
            e->depth--;
            encode_fail(e, "a table with an infinite number key");
        }
        put_char(e, '"');
        put_raw(e, num, n);
        put_char(e, '"');
    } else {
        e->depth--; /* the bad key is in this table, not below it */
        encode_fail(e, "a table with a key that is neither a string nor a number");
    }
    put_char(e, ':');
}

/* Encodes all pairs of the table on top of the stack as an object. */
static void encode_object_items(struct encoder *e)
{
    lua_State *L = e->L;
    struct path_step *step = &e->path[e->depth - 1];
    int first = 1;
    put_char(e, '{');
    lua_pushnil(L);
    while (lua_next(L, -2)) { /* table, key, value */
        if (!first) put_char(e, ',');
        first = 0;
        put_key(e, step);
        encode_value(e);
        lua_pop(L, 1);
    }
    put_char(e, '}');
}

enum table_kind { TABLE_ARRAY, TABLE_OBJECT, TABLE_INVALID };

/* Classifies the table at index t (which does not have the array metatable)
 * as described at the top of the file. For an array, *n is its length; for
 * an invalid table, *why says what it is. */
static enum table_kind classify_table(lua_State *L, int t, size_t *n, const char **why)
{
    size_t count = 0;
    double max = 0;
    int only_indexes = 1, has_string = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        switch (lua_type(L, -1)) {
        case LUA_TSTRING:
            has_string = 1;
            only_indexes = 0;
            break;
        case LUA_TNUMBER: {
            double k = lua_tonumber(L, -1);
            if (k >= 1 && k == floor(k)) {
                if (k > max) max = k;
            } else {
                only_indexes = 0;
            }
            break;
        }
        default:
            lua_pop(L, 1);
            *why = "a table with a key that is neither a string nor a number";
            return TABLE_INVALID;
        }
        count++;
    }
    if (only_indexes && max == (double)count) { /* also the empty table */
        *n = count;
        return count ? TABLE_ARRAY : TABLE_OBJECT;
    }
    if (has_string) return TABLE_OBJECT;
    *why = "a table with number keys that are not a sequence 1..n";
    return TABLE_INVALID;
}

/* Counts the pairs of the table at index t. */
static size_t count_pairs(lua_State *L, int t)
{
    size_t count = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        count++;
    }
    return count;
}

/* Encodes the table on top of the stack. */
static void encode_table(struct encoder *e)
{
    lua_State *L = e->L;
    int t = lua_gettop(L), string_first;
    size_t n;
    const char *why;

    if (e->depth >= MAX_DEPTH) encode_fail(e, "a table nested deeper than 1000 (a cycle?)");
    if (!lua_checkstack(L, 4)) encode_fail(e, "a table nested too deep for the Lua stack");
    if (lua_getmetatable(L, t)) {
        int is_array = lua_rawequal(L, -1, UPV_ARRAY_MT);
        lua_pop(L, 1);
        if (is_array) {
            e->depth++;
            encode_array_items(e, count_pairs(L, t));
            e->depth--;
            return;
        }
    }
    lua_pushnil(L);
    if (!lua_next(L, t)) {
        put_raw(e, "{}", 2);
        return;
    }
    string_first = lua_type(L, -2) == LUA_TSTRING;
    lua_pop(L, 2);
    e->depth++;
    if (string_first) { /* the common case: an object, one pass */
        encode_object_items(e);
    } else {
        switch (classify_table(L, t, &n, &why)) {
        case TABLE_ARRAY:
            encode_array_items(e, n);
            break;
        case TABLE_OBJECT:
            encode_object_items(e);
            break;
        case TABLE_INVALID:
            e->depth--;
            encode_fail(e, why);
            break;
        }
    }
    e->depth--;
}

/* Encodes the value on top of the stack (and leaves it there). */
static void encode_value(struct encoder *e)
{
    lua_State *L = e->L;
    char num[32];
    size_t len;
    const char *s;
    int n;
    switch (lua_type(L, -1)) {
    case LUA_TSTRING:
        s = lua_tolstring(L, -1, &len);
        put_string(e, s, len);
        break;
    case LUA_TNUMBER:
        n = format_number(num, lua_tonumber(L, -1));
        if (!n) encode_fail(e, "NaN or infinity");
        put_raw(e, num, n);
        break;
    case LUA_TTABLE:
        encode_table(e);
        break;
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, -1))
            put_raw(e, "true", 4);
        else
            put_raw(e, "false", 5);
        break;
    case LUA_TNIL:
        put_raw(e, "null", 4);
        break;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, -1) == NULL) {
            put_raw(e, "null", 4);
            break;
        }
        encode_fail(e, "a lightuserdata other than null");
        break;
    default: {
        char what[32];
        snprintf(what, sizeof(what), "a %s", luaL_typename(L, -1));
        encode_fail(e, what);
    }
    }
}

/* Encodes the value at index 1 into a buffer and pushes the result as a string, or as
 * bytes when as_bytes is set; raises on an unencodable value. */
static int encode_to(lua_State *L, int as_bytes)
{
    struct encoder e;
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    e.L = L;
    e.depth = 0;
    e.buf = buffer_acquire(L); /* may push a buffer: +0 or +1 */
    lua_pushvalue(L, 1);
    encode_value(&e);
    if (as_bytes)
        mm_bytes_push(L, e.buf->data ? e.buf->data : "", e.buf->len);
    else
        lua_pushlstring(L, e.buf->data ? e.buf->data : "", e.buf->len);
    buffer_release(e.buf);
    return 1;
}

/* encode(value) -> string */
static int json_encode(lua_State *L)
{
    return encode_to(L, 0);
}

/* encode_bytes(value) -> bytes (bytes.c): for texts that are only written out */
static int json_encode_bytes(lua_State *L)
{
    return encode_to(L, 1);
}

/* kind(value) -> JSON type name | nil, reason */
static int json_kind(lua_State *L)
{
    size_t n;
    const char *why = NULL;
    luaL_checkany(L, 1);
    switch (lua_type(L, 1)) {
    case LUA_TNIL:
        lua_pushliteral(L, "null");
        return 1;
    case LUA_TBOOLEAN:
        lua_pushliteral(L, "boolean");
        return 1;
    case LUA_TNUMBER:
        lua_pushliteral(L, "number");
        return 1;
    case LUA_TSTRING:
        lua_pushliteral(L, "string");
        return 1;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, 1) == NULL) {
            lua_pushliteral(L, "null");
            return 1;
        }
        why = "a lightuserdata other than null";
        break;
    case LUA_TTABLE:
        if (lua_getmetatable(L, 1)) {
            int is_array = lua_rawequal(L, -1, UPV_ARRAY_MT);
            lua_pop(L, 1);
            if (is_array) {
                lua_pushliteral(L, "array");
                return 1;
            }
        }
        switch (classify_table(L, 1, &n, &why)) {
        case TABLE_ARRAY:
            lua_pushliteral(L, "array");
            return 1;
        case TABLE_OBJECT:
            lua_pushliteral(L, "object");
            return 1;
        case TABLE_INVALID:
            break;
        }
        break;
    default:
        why = lua_pushfstring(L, "a %s", luaL_typename(L, 1));
        break;
    }
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
}

/* -------------------------------------------------------------------------
 * Module
 */

int luaopen_moonmcp_jsonc(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"decode", json_decode},
        {"encode", json_encode},
        {"encode_bytes", json_encode_bytes},
        {"kind", json_kind},
        {NULL, NULL},
    };
    const luaL_Reg *f;

    if (luaL_newmetatable(L, BUFFER_MT)) {
        lua_pushcfunction(L, buffer_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);

    lua_newtable(L); /* module */
    lua_getfield(L, LUA_REGISTRYINDEX, MM_JSON_ARRAY_MT);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, MM_JSON_ARRAY_MT);
    }
    lua_setfield(L, -2, "array_mt");
    buffer_push_new(L); /* module, buffer */
    for (f = functions; f->name; f++) {
        lua_getfield(L, -2, "array_mt");
        lua_pushvalue(L, -2);
        lua_pushcclosure(L, f->func, 2);
        lua_setfield(L, -3, f->name);
    }
    lua_pop(L, 1);
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    return 1;
}

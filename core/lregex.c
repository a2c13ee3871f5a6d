/*
 * lregex.c - the `moonmcp.regex` Lua module: a small PCRE2 binding that gives
 * the JSON Schema validator (lua/moonmcp/schema.lua) ECMA-262-like regular
 * expressions for the `pattern` and `patternProperties` keywords.
 *
 * What it owns
 *   One userdata type, "moonmcp.regex", holding a compiled pcre2_code and a
 *   pcre2_match_data sized for the whole match only (we answer "does it
 *   match?", never "what matched?"). Both are created by regex.compile() and
 *   freed by __gc; nothing else holds pointers to them. The match data is
 *   reused by every re:test() call: this is safe because a Lua state runs one
 *   C function at a time and pcre2_match() never calls back into Lua.
 *
 * Dialect (JSON Schema 2020-12 says patterns are ECMA-262, "u" flag implied)
 *   PCRE2_UTF              `.` and classes work on code points, not bytes.
 *   no PCRE2_UCP           \d, \w and \b stay ASCII-only, as in ECMA-262.
 *   PCRE2_ALT_BSUX +
 *   PCRE2_EXTRA_ALT_BSUX   \uHHHH and \u{H...} escapes as in ECMAScript;
 *                          \x takes exactly two hex digits, as in ECMAScript.
 *   PCRE2_DOLLAR_ENDONLY   `$` does not match before a trailing newline.
 *   PCRE2_ALLOW_EMPTY_CLASS `[]` matches nothing, `[^]` matches anything.
 *   PCRE2_NEVER_BACKSLASH_C \C (one code unit) could split a UTF-8 sequence.
 *   Subjects must be valid UTF-8 (pcre2_match checks; decoded JSON always is,
 *   strings built by Lua handlers may not be): an invalid subject makes
 *   re:test() return `nil, message`. PCRE2_MATCH_INVALID_UTF would avoid the
 *   check, but PCRE2 10.42's JIT then fails to match \D and \W against
 *   non-ASCII characters.
 *   ECMA-262's \s also matches Unicode spaces (U+00A0, Zs, U+2028/9, U+FEFF)
 *   while PCRE2 without UCP matches only ASCII ones, so before compiling we
 *   rewrite \s and \S outside classes and \s inside classes into explicit
 *   classes (\S inside a class is left as PCRE2's ASCII version). PCRE2
 *   10.42 knows General_Category values only by their short names (\p{L}),
 *   ECMA-262 also by long names and aliases (\p{Letter}, \p{digit},
 *   \p{gc=Letter}); those are rewritten to the short names too.
 *   Known gaps: ECMA-only syntax PCRE2 rejects fails to compile (an invalid
 *   schema); PCRE2-only syntax (possessive quantifiers, \Q..\E, (?i)...) is
 *   accepted although ECMA-262 would reject it.
 *
 * Cost
 *   Patterns are JIT-compiled when PCRE2 has JIT support (silently falling
 *   back to the interpreter otherwise). The default PCRE2 match limit bounds
 *   catastrophic backtracking; hitting it makes re:test() return
 *   `nil, message` rather than raise, so a hostile input is a validation
 *   failure, not a crash.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "lregex.h"

#define REGEX_MT "moonmcp.regex"

struct regex_obj {
    pcre2_code *code;       /* NULL once collected */
    pcre2_match_data *data; /* one ovector pair; reused across tests */
};

/* ECMA-262 WhiteSpace and LineTerminator code points beyond ASCII. */
#define ECMA_EXTRA_SPACE "\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"

/* ECMA-262 General_Category long names and aliases -> PCRE2 short names. */
static const char *const gc_names[][2] = {
    {"Cased_Letter", "L&"},
    {"Close_Punctuation", "Pe"},
    {"Connector_Punctuation", "Pc"},
    {"Control", "Cc"},
    {"cntrl", "Cc"},
    {"Currency_Symbol", "Sc"},
    {"Dash_Punctuation", "Pd"},
    {"Decimal_Number", "Nd"},
    {"digit", "Nd"},
    {"Enclosing_Mark", "Me"},
    {"Final_Punctuation", "Pf"},
    {"Format", "Cf"},
    {"Initial_Punctuation", "Pi"},
    {"Letter", "L"},
    {"Letter_Number", "Nl"},
    {"Line_Separator", "Zl"},
    {"Lowercase_Letter", "Ll"},
    {"Mark", "M"},
    {"Combining_Mark", "M"},
    {"Math_Symbol", "Sm"},
    {"Modifier_Letter", "Lm"},
    {"Modifier_Symbol", "Sk"},
    {"Nonspacing_Mark", "Mn"},
    {"Number", "N"},
    {"Open_Punctuation", "Ps"},
    {"Other", "C"},
    {"Other_Letter", "Lo"},
    {"Other_Number", "No"},
    {"Other_Punctuation", "Po"},
    {"Other_Symbol", "So"},
    {"Paragraph_Separator", "Zp"},
    {"Private_Use", "Co"},
    {"Punctuation", "P"},
    {"punct", "P"},
    {"Separator", "Z"},
    {"Space_Separator", "Zs"},
    {"Spacing_Mark", "Mc"},
    {"Surrogate", "Cs"},
    {"Symbol", "S"},
    {"Titlecase_Letter", "Lt"},
    {"Unassigned", "Cn"},
    {"Uppercase_Letter", "Lu"},
};

/*
 * `name` (length n) is the text between the braces of \p{...}: if it is a
 * General_Category value, optionally prefixed by "General_Category=" or
 * "gc=", return PCRE2's short name for it, else NULL (leave it to PCRE2).
 */
static const char *gc_short_name(const char *name, size_t n)
{
    static const char *const prefixes[] = {"General_Category=", "gc="};
    size_t i;

    for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t pl = strlen(prefixes[i]);
        if (n > pl && memcmp(name, prefixes[i], pl) == 0) {
            name += pl;
            n -= pl;
            break;
        }
    }
    for (i = 0; i < sizeof gc_names / sizeof gc_names[0]; i++) {
        if (strlen(gc_names[i][0]) == n && memcmp(name, gc_names[i][0], n) == 0)
            return gc_names[i][1];
    }
    return NULL;
}

/*
 * pat[i] is the backslash of \p or \P: if a "{name}" follows and name is a
 * long General_Category name, return its short name and set *next to the
 * index after the closing brace; else return NULL.
 */
static const char *gc_rewrite(const char *pat, size_t len, size_t i, size_t *next)
{
    const char *name, *end, *sn;

    if (i + 2 >= len || pat[i + 2] != '{') return NULL;
    name = pat + i + 3;
    end = memchr(name, '}', len - (i + 3));
    if (end == NULL || (sn = gc_short_name(name, (size_t)(end - name))) == NULL) return NULL;
    *next = (size_t)(end - pat) + 1;
    return sn;
}

/*
 * Copy `pat` into the buffer on top of L's stack, rewriting \s and \S to the
 * ECMA-262 meaning and long General_Category names to short ones (see the
 * header comment). The scan only tracks escapes and whether we are inside a
 * character class, which is all the rewrite needs. Pushes the result.
 */
static void push_ecma_pattern(lua_State *L, const char *pat, size_t len)
{
    luaL_Buffer b;
    int in_class = 0;
    size_t i = 0, next;
    const char *sn;

    luaL_buffinit(L, &b);
    while (i < len) {
        char c = pat[i];
        if (c == '\\' && i + 1 < len) {
            char e = pat[i + 1];
            if (e == 's' && !in_class) {
                luaL_addstring(&b, "[\\s" ECMA_EXTRA_SPACE "]");
            } else if (e == 'S' && !in_class) {
                luaL_addstring(&b, "[^\\s" ECMA_EXTRA_SPACE "]");
            } else if (e == 's') {
                luaL_addstring(&b, "\\s" ECMA_EXTRA_SPACE);
            } else if ((e == 'p' || e == 'P') && (sn = gc_rewrite(pat, len, i, &next))) {
                luaL_addchar(&b, c);
                luaL_addchar(&b, e);
                luaL_addchar(&b, '{');
                luaL_addstring(&b, sn);
                luaL_addchar(&b, '}');
                i = next;
                continue;
            } else {
                luaL_addchar(&b, c);
                luaL_addchar(&b, e);
            }
            i += 2;
            continue;
        }
        if (!in_class && c == '[') {
            in_class = 1;
            luaL_addchar(&b, c);
            i++;
            /* a leading ^ belongs to the class opener; with
             * PCRE2_ALLOW_EMPTY_CLASS a following ']' closes the class */
            if (i < len && pat[i] == '^') {
                luaL_addchar(&b, '^');
                i++;
            }
            continue;
        }
        if (in_class && c == ']') in_class = 0;
        luaL_addchar(&b, c);
        i++;
    }
    luaL_pushresult(&b);
}

/* regex.compile(pattern) -> regex | nil, message */
static int regex_compile(lua_State *L)
{
    size_t len, plen;
    const char *pat = luaL_checklstring(L, 1, &len);
    const char *src;
    pcre2_compile_context *cctx;
    pcre2_code *code;
    pcre2_match_data *data;
    struct regex_obj *re;
    int errcode;
    PCRE2_SIZE erroff;
    PCRE2_UCHAR msg[256];
    uint32_t opts = PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS |
                    PCRE2_NEVER_BACKSLASH_C;

    push_ecma_pattern(L, pat, len); /* +1: kept on the stack until return */
    src = lua_tolstring(L, -1, &plen);

    /* the userdata is created first so that no Lua error (memory) can
     * strike between allocating PCRE2 objects and anchoring them */
    re = lua_newuserdata(L, sizeof *re); /* +1 */
    re->code = NULL;
    re->data = NULL;
    luaL_getmetatable(L, REGEX_MT);
    lua_setmetatable(L, -2);

    cctx = pcre2_compile_context_create(NULL);
    if (cctx == NULL) return luaL_error(L, "regex: out of memory");
    pcre2_set_compile_extra_options(cctx, PCRE2_EXTRA_ALT_BSUX);
    code = pcre2_compile((PCRE2_SPTR)src, plen, opts, &errcode, &erroff, cctx);
    pcre2_compile_context_free(cctx);
    if (code == NULL) {
        pcre2_get_error_message(errcode, msg, sizeof msg);
        lua_pushnil(L);
        /* the offset refers to the rewritten pattern; it equals the
         * author's offset unless \s, \S or \p{Long_Name} precede it */
        lua_pushfstring(L, "invalid regex /%s/: %s at offset %d", pat, (const char *)msg,
                        (int)erroff);
        return 2;
    }
    re->code = code;
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* optional speed-up */

    data = pcre2_match_data_create(1, NULL);
    if (data == NULL) return luaL_error(L, "regex: out of memory"); /* __gc frees code */
    re->data = data;
    return 1;
}

/* re:test(subject) -> boolean | nil, message */
static int regex_test(lua_State *L)
{
    struct regex_obj *re = luaL_checkudata(L, 1, REGEX_MT);
    size_t len;
    const char *subject = luaL_checklstring(L, 2, &len);
    PCRE2_UCHAR msg[256];
    int rc;

    if (re->code == NULL) return luaL_error(L, "regex: object already collected");
    rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0, 0, re->data, NULL);
    if (rc >= 0 || rc == PCRE2_ERROR_NOMATCH) {
        lua_pushboolean(L, rc >= 0);
        return 1;
    }
    pcre2_get_error_message(rc, msg, sizeof msg);
    lua_pushnil(L);
    lua_pushfstring(L, "regex match failed: %s", (const char *)msg);
    return 2;
}

static int regex_gc(lua_State *L)
{
    struct regex_obj *re = luaL_checkudata(L, 1, REGEX_MT);
    pcre2_match_data_free(re->data); /* both accept NULL */
    pcre2_code_free(re->code);
    re->data = NULL;
    re->code = NULL;
    return 0;
}

static int regex_tostring(lua_State *L)
{
    struct regex_obj *re = luaL_checkudata(L, 1, REGEX_MT);
    lua_pushfstring(L, "moonmcp.regex: %p", (void *)re);
    return 1;
}

static const luaL_Reg regex_methods[] = {
    {"test", regex_test}, {"__gc", regex_gc}, {"__tostring", regex_tostring}, {NULL, NULL}};

static const luaL_Reg regex_funcs[] = {{"compile", regex_compile}, {NULL, NULL}};

int luaopen_moonmcp_regex(lua_State *L)
{
    if (luaL_newmetatable(L, REGEX_MT)) {
        luaL_register(L, NULL, regex_methods);
        lua_pushvalue(L, -1);
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "moonmcp.regex");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    lua_newtable(L);
    luaL_register(L, NULL, regex_funcs);
    return 1;
}

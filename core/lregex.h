/*
 * lregex.h - the `moonmcp.regex` Lua module (PCRE2 binding for JSON Schema
 * `pattern` / `patternProperties`). See lregex.c for the design notes.
 */
#ifndef MOONMCP_LREGEX_H
#define MOONMCP_LREGEX_H

#include <lua.h>

/*
 * Open the `moonmcp.regex` module: pushes a table with one function,
 * `compile(pattern)`, which returns a regex object or `nil, message`.
 * Regex objects have one method, `re:test(subject)`, an unanchored search
 * returning a boolean (or `nil, message` if matching itself fails, e.g. the
 * backtracking limit is hit). Intended for package.preload["moonmcp.regex"].
 */
int luaopen_moonmcp_regex(lua_State *L);

#endif

/*
 * ljson.h - the `moonmcp.jsonc` Lua module: the project's one JSON codec (the
 * public face is lua/moonmcp/json.lua). See ljson.c for the design notes.
 */
#ifndef MOONMCP_LJSON_H
#define MOONMCP_LJSON_H

#include <lua.h>

/*
 * Registry key (a string) under which the array metatable is stored. C code
 * that builds JSON arrays pushes it with lua_getfield(L, LUA_REGISTRYINDEX,
 * MM_JSON_ARRAY_MT) and sets it on the table; C code that inspects values
 * compares a table's metatable with it using lua_rawequal.
 */
#define MM_JSON_ARRAY_MT "moonmcp.json.array_mt"

/*
 * Open the `moonmcp.jsonc` module: pushes a table with
 *   decode(text)  -> value | nil, message   (malformed text is not an error; text is a
 *                                            string or bytes, see bytes.h)
 *   encode(value) -> string                 (raises on an unencodable value)
 *   encode_bytes(value) -> bytes            (the same text, not interned)
 *   kind(value)   -> "null" | "boolean" | "number" | "string" | "array" |
 *                    "object" | nil, reason (how encode() would see it)
 *   null          the null sentinel: lightuserdata NULL, equal to cjson.null
 *   array_mt      the array metatable (also at registry[MM_JSON_ARRAY_MT];
 *                 opening the module twice in one state reuses it)
 * Intended for package.preload["moonmcp.jsonc"].
 */
int luaopen_moonmcp_jsonc(lua_State *L);

#endif

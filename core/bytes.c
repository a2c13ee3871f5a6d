/*
 * bytes.c — "bytes": an immutable byte buffer as a Lua full userdata.
 *
 * LuaJIT interns every string it makes: it hashes it and looks it up in one global
 * table. Its hash samples only a few bytes of a long string, so the texts a server sees
 * per request (bodies, stdio lines, encoded answers), which differ only in an id, can
 * all hash alike: each new one then walks a chain of its look-alikes (dead ones too,
 * until the collector sweeps them), and interning degrades to a linear scan — a batch of
 * calls measured 14× slower than normal on the elicitation bench, until a GC cycle
 * ended. Such texts travel as bytes instead: allocated and copied, never hashed. The
 * JSON codec decodes from them and encodes to them; the transports take them for
 * writing. tostring(bytes) gives the string, #bytes its length.
 *
 * Layout: the userdata holds the length, then the bytes and a terminating NUL (the JSON
 * decoder relies on it as a sentinel, as Lua strings have one).
 */
#include "bytes.h"

#include <lauxlib.h>
#include <string.h>

#define BYTES_MT "moonmcp.bytes"

typedef struct {
    size_t len;
    char data[];
} bytes;

static int bytes_len(lua_State *L)
{
    bytes *b = luaL_checkudata(L, 1, BYTES_MT);
    lua_pushnumber(L, (lua_Number)b->len);
    return 1;
}

static int bytes_tostring(lua_State *L)
{
    bytes *b = luaL_checkudata(L, 1, BYTES_MT);
    lua_pushlstring(L, b->data, b->len);
    return 1;
}

void mm_bytes_push(lua_State *L, const char *p, size_t n)
{
    bytes *b = lua_newuserdata(L, sizeof *b + n + 1);
    b->len = n;
    if (n) memcpy(b->data, p, n);
    b->data[n] = '\0';
    if (luaL_newmetatable(L, BYTES_MT)) {
        lua_pushcfunction(L, bytes_len);
        lua_setfield(L, -2, "__len");
        lua_pushcfunction(L, bytes_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_setmetatable(L, -2);
}

const char *mm_bytes_check(lua_State *L, int idx, size_t *len)
{
    if (lua_type(L, idx) == LUA_TSTRING) return lua_tolstring(L, idx, len);
    bytes *b = luaL_testudata(L, idx, BYTES_MT);
    if (!b) {
        luaL_typerror(L, idx, "string or bytes");
        return NULL;
    }
    *len = b->len;
    return b->data;
}

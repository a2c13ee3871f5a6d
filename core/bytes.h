/*
 * bytes.h — "bytes": an immutable byte buffer as a Lua full userdata, for the large
 * per-request texts the host never needs as Lua strings (an HTTP body, a stdio line, an
 * encoded answer). See bytes.c.
 */
#ifndef MM_BYTES_H
#define MM_BYTES_H

#include <lua.h>
#include <stddef.h>

/* Pushes a bytes value holding a copy of p[0..n) (followed by a NUL, not counted). */
void mm_bytes_push(lua_State *L, const char *p, size_t n);

/* The text of the string or bytes value at idx (NUL-terminated: text[*len] == '\0');
 * raises a type error naming argument idx when it is neither. */
const char *mm_bytes_check(lua_State *L, int idx, size_t *len);

#endif

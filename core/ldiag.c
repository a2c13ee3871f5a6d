/*
 * ldiag.c — diagnostics for specs and operators: core.handles() counts the libuv handles
 * alive on the loop (libuv's internal handles excluded), so leak specs can compare them
 * with a baseline. Owns nothing.
 */
#include "sched.h"

#include <lauxlib.h>

typedef struct {
    lua_State *L;
    int n;
} walk_state;

static void count(uv_handle_t *h, void *arg)
{
    walk_state *w = arg;
    w->n++;
    const char *name = uv_handle_type_name(uv_handle_get_type(h));
    lua_getfield(w->L, -1, name ? name : "unknown");
    lua_pushinteger(w->L, lua_tointeger(w->L, -1) + 1);
    lua_setfield(w->L, -3, name ? name : "unknown");
    lua_pop(w->L, 1);
}

/* handles() -> n, { [type name] = count } (closing handles included until they closed) */
static int l_handles(lua_State *L)
{
    walk_state w = {L, 0};
    lua_newtable(L);
    uv_walk(mm_loop, count, &w);
    lua_pushinteger(L, w.n);
    lua_insert(L, -2);
    return 2;
}

void mm_diag_open(lua_State *L)
{
    lua_pushcfunction(L, l_handles);
    lua_setfield(L, -2, "handles");
}

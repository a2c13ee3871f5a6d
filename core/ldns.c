/*
 * ldns.c — name resolution for handlers: core.dns_resolve(name, family) runs getaddrinfo
 * on libuv's thread pool and parks the call until it answers (moonmcp.dns is the Lua face).
 *
 * A lookup is one heap `dns_op` holding the uv_getaddrinfo_t; it is freed only in the
 * getaddrinfo callback. Cancelling the call detaches the op (op->call = NULL) and asks
 * libuv to cancel it: a lookup still queued gets its callback with UV_EAI_CANCELED, one
 * already running completes; either way the callback frees the op and the results.
 */
#include "sched.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uv_getaddrinfo_t req;
    mm_call *call; /* NULL once the call stopped waiting */
} dns_op;

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    dns_op *op = (dns_op *)req;
    mm_call *c = op->call;
    free(op);
    if (!c) {
        uv_freeaddrinfo(res);
        return;
    }
    lua_State *co = c->co;
    if (status != 0) {
        uv_freeaddrinfo(res);
        lua_pushnil(co);
        lua_pushstring(co, uv_strerror(status));
        mm_call_resume(c, 2);
        return;
    }
    lua_newtable(co);
    int n = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        char ip[64];
        if (a->ai_family == AF_INET)
            uv_ip4_name((struct sockaddr_in *)a->ai_addr, ip, sizeof ip);
        else if (a->ai_family == AF_INET6)
            uv_ip6_name((struct sockaddr_in6 *)a->ai_addr, ip, sizeof ip);
        else
            continue;
        int seen = 0; /* getaddrinfo may list an address once per socket type */
        for (int i = 1; i <= n && !seen; i++) {
            lua_rawgeti(co, -1, i);
            seen = strcmp(lua_tostring(co, -1), ip) == 0;
            lua_pop(co, 1);
        }
        if (!seen) {
            lua_pushstring(co, ip);
            lua_rawseti(co, -2, ++n);
        }
    }
    uv_freeaddrinfo(res);
    mm_call_resume(c, 1);
}

static void cancel_lookup(void *p)
{
    dns_op *op = p;
    op->call = NULL;
    uv_cancel((uv_req_t *)&op->req); /* fails when running; the callback frees either way */
}

/* dns_resolve(name, family) -> { "addr", ... } | nil, message
 * family: "any" (default), "inet" or "inet6" */
static int l_resolve(lua_State *L)
{
    static const char *const families[] = {"any", "inet", "inet6", NULL};
    static const int family_values[] = {AF_UNSPEC, AF_INET, AF_INET6};
    const char *name = luaL_checkstring(L, 1);
    int family = family_values[luaL_checkoption(L, 2, "any", families)];
    mm_call *c = mm_call_check(L, "dns.resolve");
    dns_op *op = malloc(sizeof *op);
    if (!op) return luaL_error(L, "dns: out of memory");
    op->call = c;
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    int r = uv_getaddrinfo(mm_loop, &op->req, on_resolved, name, NULL, &hints);
    if (r != 0) {
        free(op);
        lua_pushnil(L);
        lua_pushstring(L, uv_strerror(r));
        return 2;
    }
    return mm_call_park(L, c, cancel_lookup, op);
}

void mm_dns_open(lua_State *L)
{
    lua_pushcfunction(L, l_resolve);
    lua_setfield(L, -2, "dns_resolve");
}

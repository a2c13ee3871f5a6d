/*
 * lcore.c — the moonmcp.core module: the host's Lua API, assembled from the files that
 * own each part (scheduler, sleep, HTTP, stdio, signals), plus small utilities (clocks,
 * random ids, stderr, stop).
 *
 * core.set_hooks{...} is the loop -> runtime contract: the C side calls these Lua
 * functions (http_request, http_closed, stdio_line, stdio_eof, signal). Only
 * http_request and stdio_line run inside a fresh coroutine; the others are plain
 * protected calls that must not yield.
 */
#include "lcore.h"
#include "http.h"
#include "sched.h"
#include "stdio_transport.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

int mm_exit_code = -1;
static char HOOKS_KEY[1];
static char TRACEBACK_KEY[1];

void mm_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("moonmcp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void mm_idmap_set(void *map, double id, void *ptr)
{
    lua_State *L = mm_L;
    lua_pushlightuserdata(L, map);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_istable(L, -1)) { /* first use: create the table */
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushlightuserdata(L, map);
        lua_pushvalue(L, -2);
        lua_rawset(L, LUA_REGISTRYINDEX);
    }
    lua_pushnumber(L, id);
    if (ptr)
        lua_pushlightuserdata(L, ptr);
    else
        lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

void *mm_idmap_get(lua_State *L, void *map, double id)
{
    lua_pushlightuserdata(L, map);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    lua_pushnumber(L, id);
    lua_rawget(L, -2);
    void *ptr = lua_touserdata(L, -1);
    lua_pop(L, 2);
    return ptr;
}

int mm_hook_push(lua_State *L, const char *name)
{
    lua_pushlightuserdata(L, HOOKS_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return -1;
    }
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return -1;
    }
    return 0;
}

static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
    return 1;
}

void mm_hook_call(lua_State *L, const char *name, int nargs)
{
    if (mm_hook_push(L, name) != 0) {
        lua_pop(L, nargs);
        return;
    }
    lua_insert(L, -(nargs + 1));
    lua_pushlightuserdata(L, TRACEBACK_KEY); /* one closure for every hook call */
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushcfunction(L, traceback);
        lua_pushlightuserdata(L, TRACEBACK_KEY);
        lua_pushvalue(L, -2);
        lua_rawset(L, LUA_REGISTRYINDEX);
    }
    lua_insert(L, -(nargs + 2));
    int base = lua_gettop(L) - nargs - 1;
    if (lua_pcall(L, nargs, 0, base) != 0) {
        mm_log_error("hook %s failed: %s", name, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    lua_pop(L, 1); /* traceback */
    mm_sched_drain();
}

/* set_hooks(table) */
static int l_set_hooks(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushlightuserdata(L, HOOKS_KEY);
    lua_pushvalue(L, 1);
    lua_rawset(L, LUA_REGISTRYINDEX);
    return 0;
}

/* now() -> wall-clock seconds since the epoch, with sub-millisecond precision */
static int l_now(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    lua_pushnumber(L, (double)ts.tv_sec + ts.tv_nsec / 1e9);
    return 1;
}

/* clock() -> monotonic seconds (for durations) */
static int l_clock(lua_State *L)
{
    lua_pushnumber(L, uv_hrtime() / 1e9);
    return 1;
}

/* Random bytes from the kernel's CSPRNG, fetched 4 KiB at a time (ids are made on every
 * call: one getrandom per call would be a syscall on the hot path). */
static unsigned char pool[4096];
static size_t pool_left;

static int random_bytes(unsigned char *out, size_t n)
{
    if (pool_left < n) {
        if (getrandom(pool, sizeof pool, 0) != (ssize_t)sizeof pool) return -1;
        pool_left = sizeof pool;
    }
    memcpy(out, pool + sizeof pool - pool_left, n);
    memset(pool + sizeof pool - pool_left, 0, n); /* bytes are used once */
    pool_left -= n;
    return 0;
}

/* random_hex(nbytes) -> 2*nbytes lowercase hex digits from the kernel's CSPRNG */
static int l_random_hex(lua_State *L)
{
    int n = (int)luaL_checkinteger(L, 1);
    luaL_argcheck(L, n > 0 && n <= 64, 1, "1..64 bytes");
    unsigned char bytes[64];
    char hex[129];
    if (random_bytes(bytes, (size_t)n) != 0) return luaL_error(L, "random_hex: getrandom failed");
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < n; i++) {
        hex[2 * i] = digits[bytes[i] >> 4];
        hex[2 * i + 1] = digits[bytes[i] & 15];
    }
    lua_pushlstring(L, hex, (size_t)(2 * n));
    return 1;
}

/* stderr(text) -- writes text as is to stderr (logs never go to stdout) */
static int l_stderr(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    fwrite(s, 1, len, stderr);
    return 0;
}

/* stop(code) -- ends the process after the current loop iteration with exit status code */
static int l_stop(lua_State *L)
{
    mm_exit_code = (int)luaL_optinteger(L, 1, 0);
    uv_stop(mm_loop);
    return 0;
}

/* scandir(path) -> { names... } (unsorted, without . and ..), or nil, message.
 * Synchronous: for start-up and reload, not for handlers (they use moonmcp.fs). */
static int l_scandir(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    uv_fs_t req;
    uv_dirent_t ent;
    int r = uv_fs_scandir(NULL, &req, path, 0, NULL);
    if (r < 0) {
        uv_fs_req_cleanup(&req);
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, uv_strerror(r));
        return 2;
    }
    lua_createtable(L, r, 0);
    for (int i = 1; uv_fs_scandir_next(&req, &ent) != UV_EOF; i++) {
        lua_pushstring(L, ent.name);
        lua_rawseti(L, -2, i);
    }
    uv_fs_req_cleanup(&req);
    return 1;
}

int mm_core_open(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"set_hooks", l_set_hooks},   {"now", l_now},       {"clock", l_clock},
        {"random_hex", l_random_hex}, {"stderr", l_stderr}, {"stop", l_stop},
        {"scandir", l_scandir},       {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    mm_sched_open(L);
    mm_sleep_open(L);
    mm_http_open(L);
    mm_stdio_open(L);
    mm_signal_open(L);
    mm_seal_open(L);
    mm_diag_open(L);
    mm_exec_open(L);
    mm_watch_open(L);
    mm_tcp_open(L);
    mm_fs_open(L);
    mm_dns_open(L);
    mm_http_client_open(L);
    mm_watchdog_open(L);
    lua_pushliteral(L, MOONMCP_VERSION);
    lua_setfield(L, -2, "version");
    return 1;
}

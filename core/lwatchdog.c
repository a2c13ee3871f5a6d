/*
 * lwatchdog.c — the runaway-handler watchdog: a call that runs on the CPU for longer than
 * its budget without yielding gets the error "cpu budget exceeded" raised inside it, so a
 * handler stuck in a loop cannot freeze the host (moonmcp.watchdog is the Lua face).
 *
 * Mechanism. A Lua count hook fires every `every` VM instructions (LuaJIT's hooks are
 * global to the VM, so one hook covers every coroutine). It looks up the running call's
 * budget (a registry table, call id -> seconds; unwatched calls cost one lookup per firing).
 * The scheduler stamps each resume (mm_call.resumed_at), so the budget is CPU time since the
 * call last yielded. Past the budget, the hook raises the error — but only while a function
 * of the handler runs, never in the host's own runtime (sources whose path contains the
 * runtime marker, "/lua/moonmcp/"),
 * whose cleanup must not be interrupted. A handler that catches the error and loops on
 * gets it again at the next firing.
 *
 * Compiled traces do not run hooks: handler chunks must be loaded with the JIT off
 * (jit.off(chunk, true), done by moonmcp.watchdog.prepare).
 *
 * Owns: the hook and the budgets table. No handles, no descriptors.
 */
#include "sched.h"

#include <lauxlib.h>
#include <string.h>

static char BUDGETS_KEY[1];
static char host_prefix[1024];
static size_t host_prefix_len;

static void hook(lua_State *L, lua_Debug *ar)
{
    mm_call *c = mm_sched_current();
    if (!c) return;
    if (!lua_checkstack(L, 3)) return;
    lua_pushlightuserdata(L, BUDGETS_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    double budget = -1; /* no table yet (nothing watched), or not watched: no budget */
    if (lua_istable(L, -1)) {
        lua_rawgeti(L, -1, (int)c->id);
        if (lua_isnumber(L, -1)) budget = lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (budget < 0 || (double)(uv_hrtime() - c->resumed_at) / 1e9 <= budget) return;
    if (lua_getinfo(L, "S", ar) && ar->source &&
        (ar->source[0] != '@' || (host_prefix_len && strstr(ar->source, host_prefix))))
        return; /* the host's own code (or a C function): let it unwind cleanly */
    luaL_error(L, "cpu budget exceeded");
}

/* watchdog_start(every, marker) -- installs the count hook; sources whose path contains
 * marker are the host's own */
static int l_start(lua_State *L)
{
    int every = (int)luaL_checkinteger(L, 1);
    luaL_argcheck(L, every > 0, 1, "every must be > 0");
    size_t len;
    const char *prefix = luaL_checklstring(L, 2, &len);
    luaL_argcheck(L, len < sizeof host_prefix, 2, "prefix too long");
    memcpy(host_prefix, prefix, len + 1);
    host_prefix_len = len;
    lua_sethook(L, hook, LUA_MASKCOUNT, every);
    return 0;
}

/* watchdog_stop() */
static int l_stop(lua_State *L)
{
    lua_sethook(L, NULL, 0, 0);
    return 0;
}

/* watchdog_watch(call_id, seconds|nil) -- sets (or with nil clears) a call's budget */
static int l_watch(lua_State *L)
{
    lua_Number id = luaL_checknumber(L, 1);
    if (!lua_isnoneornil(L, 2))
        luaL_argcheck(L, luaL_checknumber(L, 2) > 0, 2, "budget must be > 0");
    lua_pushlightuserdata(L, BUDGETS_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushlightuserdata(L, BUDGETS_KEY);
        lua_pushvalue(L, -2);
        lua_rawset(L, LUA_REGISTRYINDEX);
    }
    if (lua_isnoneornil(L, 2))
        lua_pushnil(L);
    else
        lua_pushvalue(L, 2);
    lua_rawseti(L, -2, (int)id);
    return 0;
}

void mm_watchdog_open(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"watchdog_start", l_start},
        {"watchdog_stop", l_stop},
        {"watchdog_watch", l_watch},
        {NULL, NULL},
    };
    luaL_register(L, NULL, fns);
}

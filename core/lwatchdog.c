/*
 * lwatchdog.c — the runaway-handler watchdog: a call that runs on the CPU for longer than
 * its budget without yielding gets the error "cpu budget exceeded" raised inside it, so a
 * handler stuck in a loop cannot freeze the host (moonmcp.watchdog is the Lua face).
 *
 * Mechanism. Nothing runs while calls behave: the scheduler only stamps when a resume
 * begins and ends (mm_watchdog_enter/leave, two atomic stores). A watcher thread looks
 * every 10 ms; when one resume has run for longer than 50 ms, it signals the loop's
 * thread, whose handler installs a Lua count hook (lua_sethook is the documented way to
 * interrupt a running Lua state from a signal handler, as lua.c does for Ctrl-C). The
 * hook fires every `every` VM instructions (LuaJIT's hooks are global to the VM, so one
 * hook covers every coroutine) and looks up the running call's budget (a registry table,
 * call id -> seconds); it is removed when the resume ends.
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
 * Owns: the hook, the budgets table, the watcher thread and its signal. No handles, no
 * descriptors.
 */
#include "sched.h"

#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define ARM_AFTER_NS (50 * 1000 * 1000ULL)
#define LOOK_EVERY_NS (10 * 1000 * 1000L)

static _Atomic uint64_t busy_since; /* when the running resume began; 0: none runs */
static atomic_int armed;            /* the count hook is installed */
static atomic_int watching;         /* the watcher thread runs */
static int every = 10000;
static double default_budget = -1; /* seconds, for calls without their own; < 0: none */
static pthread_t loop_thread, watcher;

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
    double budget = default_budget; /* unless the call has its own */
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

static int arm_signal(void)
{
    return SIGRTMIN + 5;
}

/* In the loop's thread, between two VM instructions or inside a syscall. */
static void on_arm_signal(int sig)
{
    (void)sig;
    if (atomic_load(&busy_since) && !atomic_load(&armed)) {
        lua_sethook(mm_L, hook, LUA_MASKCOUNT, every);
        atomic_store(&armed, 1);
    }
}

static void *watch(void *arg)
{
    (void)arg;
    struct timespec pause = {0, LOOK_EVERY_NS};
    while (atomic_load(&watching)) {
        nanosleep(&pause, NULL);
        uint64_t since = atomic_load(&busy_since);
        if (since && !atomic_load(&armed) && uv_hrtime() - since > ARM_AFTER_NS)
            pthread_kill(loop_thread, arm_signal());
    }
    return NULL;
}

void mm_watchdog_enter(void)
{
    if (atomic_load_explicit(&watching, memory_order_relaxed))
        atomic_store(&busy_since, uv_hrtime());
}

void mm_watchdog_leave(void)
{
    if (!atomic_load_explicit(&watching, memory_order_relaxed)) return;
    atomic_store(&busy_since, 0);
    if (atomic_load(&armed)) {
        lua_sethook(mm_L, NULL, 0, 0);
        atomic_store(&armed, 0);
    }
}

/* watchdog_start(every, marker, budget?) -- starts watching; sources whose path contains
 * marker are the host's own; budget (seconds) applies to every call without its own */
static int l_start(lua_State *L)
{
    int n = (int)luaL_checkinteger(L, 1);
    default_budget = luaL_optnumber(L, 3, -1);
    luaL_argcheck(L, n > 0, 1, "every must be > 0");
    size_t len;
    const char *prefix = luaL_checklstring(L, 2, &len);
    luaL_argcheck(L, len < sizeof host_prefix, 2, "prefix too long");
    memcpy(host_prefix, prefix, len + 1);
    host_prefix_len = len;
    every = n;
    if (atomic_load(&watching)) return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_arm_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(arm_signal(), &sa, NULL) != 0)
        return luaL_error(L, "watchdog_start: cannot install the signal handler");
    loop_thread = pthread_self();
    atomic_store(&watching, 1);
    sigset_t all, old;
    sigfillset(&all); /* the watcher takes no signal: they stay the loop's */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int r = pthread_create(&watcher, NULL, watch, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        atomic_store(&watching, 0);
        return luaL_error(L, "watchdog_start: cannot start the watcher thread");
    }
    return 0;
}

/* watchdog_stop() */
static int l_stop(lua_State *L)
{
    if (atomic_load(&watching)) {
        atomic_store(&watching, 0);
        pthread_join(watcher, NULL);
    }
    atomic_store(&busy_since, 0);
    atomic_store(&armed, 0);
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

/*
 * sched.c — call coroutines: spawn, the single resume site, parking, cancellation.
 *
 * Lifecycle of an mm_call:
 *
 *   spawn ──> READY ──run──> RUNNING ──yield(MM_HOST_YIELD)──> PARKED
 *               ^                │  └──return / error──> freed
 *               └──resume/cancel─┴──────────────────────────────┘
 *
 * run() is the only place that calls lua_resume on a call, and it is reached only from
 * the loop: directly from a completion callback (mm_call_resume at depth 0) or from
 * mm_sched_drain. Work queued while a coroutine runs (a spawn, a wake, a cancel) waits in
 * the ready queue until the outermost resume returns, so no coroutine is ever resumed
 * from inside another. A bare coroutine.yield() at the top of a call is a cooperative
 * "let the others run": the call is resumed on the next loop iteration (idle handle), so
 * a handler that yields in a loop cannot starve the loop.
 *
 * A call's thread is anchored in the registry while the call lives, and its id is mapped
 * to the C struct in a registry table (ids are numbers; Lua never holds a pointer). Both
 * go when the coroutine ends; the struct is freed then. A pending operation is always
 * cancelled (or completed) before its call can end, because a parked call only ends after
 * being resumed, and a resume first clears the operation.
 */
#include "sched.h"
#include "lcore.h"

#include <lauxlib.h>
#include <stdlib.h>

enum { CALL_READY, CALL_RUNNING, CALL_PARKED };

char MM_HOST_YIELD[1];
char MM_CANCELLED[1];
static char LUA_PARK[1]; /* op marker: parked by Lua code (core.park), woken by core.wake */
static char IDS_KEY[1];  /* registry: id -> light userdata mm_call* */

static mm_call *ready_head, *ready_tail; /* runs at the next drain */
static mm_call *later_head, *later_tail; /* bare yields: runs on the next loop iteration */
static mm_call *current;
static int depth; /* nested run() calls: > 0 while any coroutine runs */
static int draining;
static int live;
static double next_id = 1;
static uv_idle_t idle;

static void push(mm_call **head, mm_call **tail, mm_call *c)
{
    c->next = NULL;
    if (*tail)
        (*tail)->next = c;
    else
        *head = c;
    *tail = c;
}

static void enqueue(mm_call *c, int nargs)
{
    c->state = CALL_READY;
    c->nargs = nargs;
    push(&ready_head, &ready_tail, c);
}

static void ids_set(double id, mm_call *c)
{
    mm_idmap_set(IDS_KEY, id, c);
}

mm_call *mm_sched_find(double id)
{
    return mm_idmap_get(mm_L, IDS_KEY, id);
}

static void finish(mm_call *c, int status)
{
    if (status != 0) {
        /* The Lua side catches handler errors itself; reaching here is a host bug. */
        const char *msg = lua_tostring(c->co, -1);
        luaL_traceback(mm_L, c->co, msg ? msg : "(error object is not a string)", 0);
        mm_log_error("call %.0f failed: %s", c->id, lua_tostring(mm_L, -1));
        lua_pop(mm_L, 1);
    }
    ids_set(c->id, NULL);
    luaL_unref(mm_L, LUA_REGISTRYINDEX, c->thread_ref);
    live--;
    free(c);
}

/* The single resume site. */
static void run(mm_call *c)
{
    mm_call *prev = current;
    int nargs = c->nargs;
    c->nargs = 0;
    c->state = CALL_RUNNING;
    c->cancel = NULL;
    c->op = NULL;
    current = c;
    if (depth++ == 0) mm_watchdog_enter();
    c->resumed_at = uv_hrtime();
    int status = lua_resume(c->co, nargs);
    if (--depth == 0) mm_watchdog_leave();
    current = prev;
    if (status != LUA_YIELD) {
        finish(c, status);
        return;
    }
    int host = lua_gettop(c->co) >= 1 && lua_touserdata(c->co, -1) == MM_HOST_YIELD;
    lua_settop(c->co, 0);
    if (host) {
        c->state = CALL_PARKED;
        if (c->cancelled) /* cancelled while it ran: do not stay parked */
            mm_call_cancel(c);
        return;
    }
    c->state = CALL_READY;
    push(&later_head, &later_tail, c);
    uv_idle_start(&idle, (uv_idle_cb)mm_sched_drain);
}

void mm_sched_drain(void)
{
    if (depth > 0 || draining) return;
    draining = 1;
    /* Bare yields queued before this drain run now; those made during it wait. */
    mm_call *later = later_head;
    later_head = later_tail = NULL;
    while (later) {
        mm_call *next = later->next;
        push(&ready_head, &ready_tail, later);
        later = next;
    }
    while (ready_head) {
        mm_call *c = ready_head;
        ready_head = c->next;
        if (!ready_head) ready_tail = NULL;
        run(c);
    }
    if (!later_head) uv_idle_stop(&idle);
    draining = 0;
}

mm_call *mm_sched_spawn(lua_State *L, int nargs)
{
    mm_call *c = calloc(1, sizeof *c);
    if (!c) {
        luaL_error(L, "out of memory");
        return NULL;
    }
    c->co = lua_newthread(L);
    lua_insert(L, -(nargs + 2));                    /* thread below fn and args */
    lua_xmove(L, c->co, nargs + 1);                 /* fn, args -> co */
    c->thread_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* pops the thread */
    c->id = next_id++;
    ids_set(c->id, c);
    live++;
    enqueue(c, nargs);
    return c;
}

mm_call *mm_sched_current(void)
{
    return current;
}

int mm_sched_live(void)
{
    return live;
}

mm_call *mm_call_check(lua_State *L, const char *what)
{
    if (!current) luaL_error(L, "%s: must be called inside a moonmcp call", what);
    if (current->cancelled) {
        lua_pushliteral(L, "cancelled");
        lua_error(L);
    }
    return current;
}

int mm_call_park(lua_State *L, mm_call *c, mm_cancel_fn cancel, void *op)
{
    c->cancel = cancel;
    c->op = op;
    lua_pushlightuserdata(L, MM_HOST_YIELD);
    return lua_yield(L, 1);
}

void mm_call_resume(mm_call *c, int nargs)
{
    c->cancel = NULL;
    c->op = NULL;
    enqueue(c, nargs);
    mm_sched_drain();
}

void mm_call_cancel(mm_call *c)
{
    c->cancelled = 1;
    if (c->state != CALL_PARKED) return;
    if (c->cancel) c->cancel(c->op);
    c->cancel = NULL;
    c->op = NULL;
    lua_pushlightuserdata(c->co, MM_CANCELLED);
    enqueue(c, 1);
}

/* ---- Lua API: core.spawn, cancel, park, wake, current, live ---- */

/* spawn(fn, ...) -> id */
static int l_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    mm_call *c = mm_sched_spawn(L, lua_gettop(L) - 1);
    lua_pushnumber(L, c->id);
    return 1;
}

/* cancel(id) -> true if the call was alive */
static int l_cancel(lua_State *L)
{
    mm_call *c = mm_sched_find(luaL_checknumber(L, 1));
    if (c) mm_call_cancel(c);
    lua_pushboolean(L, c != NULL);
    return 1;
}

/* park() -- yields until wake(id, ...) or cancel(id); returns the wake values or
 * the CANCELLED sentinel. */
static int l_park(lua_State *L)
{
    mm_call *c = mm_call_check(L, "park");
    return mm_call_park(L, c, NULL, LUA_PARK);
}

/* wake(id, ...) -> true if a call parked by park() was woken with the values */
static int l_wake(lua_State *L)
{
    mm_call *c = mm_sched_find(luaL_checknumber(L, 1));
    if (!c || c->state != CALL_PARKED || c->op != LUA_PARK) {
        lua_pushboolean(L, 0);
        return 1;
    }
    int n = lua_gettop(L) - 1;
    luaL_checkstack(c->co, n, "wake");
    lua_xmove(L, c->co, n);
    c->cancel = NULL;
    c->op = NULL;
    enqueue(c, n);
    mm_sched_drain(); /* no-op inside a coroutine; runs it now from a plain callback */
    lua_pushboolean(L, 1);
    return 1;
}

/* current() -> id of the running call, or nil */
static int l_current(lua_State *L)
{
    if (!current) return 0;
    lua_pushnumber(L, current->id);
    return 1;
}

/* cancelled([id]) -> whether the call (default: the running one) was cancelled */
static int l_cancelled(lua_State *L)
{
    mm_call *c = lua_isnoneornil(L, 1) ? current : mm_sched_find(luaL_checknumber(L, 1));
    lua_pushboolean(L, c && c->cancelled);
    return 1;
}

static int l_live(lua_State *L)
{
    lua_pushinteger(L, live);
    return 1;
}

void mm_sched_open(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"spawn", l_spawn},     {"cancel", l_cancel},       {"park", l_park}, {"wake", l_wake},
        {"current", l_current}, {"cancelled", l_cancelled}, {"live", l_live}, {NULL, NULL},
    };
    luaL_register(L, NULL, fns);
    lua_pushlightuserdata(L, MM_HOST_YIELD);
    lua_setfield(L, -2, "HOST_YIELD");
    lua_pushlightuserdata(L, MM_CANCELLED);
    lua_setfield(L, -2, "CANCELLED");
}

void mm_sched_init(void)
{
    uv_idle_init(mm_loop, &idle);
}

void mm_sched_close(void)
{
    uv_idle_stop(&idle);
    uv_close((uv_handle_t *)&idle, NULL);
}

/*
 * lsleep.c — core.sleep(seconds): the first yielding primitive, and the template every
 * other one follows (see sched.h).
 *
 * core.alarm(seconds, fn) is the other timer here: the host's single alarm clock, one
 * uv_timer_t for the whole process, on which moonmcp.timers multiplexes every timeout
 * that needs no coroutine of its own (question timeouts, call deadlines). Ringing calls
 * fn in a protected call from the loop (never inside a coroutine).
 *
 * A sleep owns one heap-allocated uv_timer_t. It is freed only in its close callback,
 * whichever way the sleep ends: the timer fires (completion closes it, then resumes the
 * call) or the call is cancelled (cancel stops and closes it; the timer callback can no
 * longer run, so the call is resumed exactly once, by the scheduler).
 */
#include "sched.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>

typedef struct {
    uv_timer_t timer;
    mm_call *call;
} sleep_op;

static void on_close(uv_handle_t *h)
{
    free(h->data);
}

static void on_timer(uv_timer_t *t)
{
    sleep_op *op = t->data;
    mm_call *c = op->call;
    uv_close((uv_handle_t *)t, on_close);
    lua_pushboolean(c->co, 1);
    mm_call_resume(c, 1);
}

static void cancel_sleep(void *p)
{
    sleep_op *op = p;
    uv_timer_stop(&op->timer);
    uv_close((uv_handle_t *)&op->timer, on_close);
}

/* sleep(seconds) -> true; yields the calling coroutine only. */
static int l_sleep(lua_State *L)
{
    double s = luaL_checknumber(L, 1);
    luaL_argcheck(L, s >= 0 && isfinite(s), 1, "seconds must be a finite number >= 0");
    mm_call *c = mm_call_check(L, "sleep");
    sleep_op *op = malloc(sizeof *op);
    if (!op) return luaL_error(L, "sleep: out of memory");
    op->call = c;
    op->timer.data = op;
    uv_timer_init(mm_loop, &op->timer);
    uv_timer_start(&op->timer, on_timer, (uint64_t)llround(s * 1000.0), 0);
    return mm_call_park(L, c, cancel_sleep, op);
}

static uv_timer_t alarm_timer;
static int alarm_ready;
static int alarm_ref = LUA_NOREF;

static void on_alarm(uv_timer_t *t)
{
    (void)t;
    lua_State *L = mm_L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, alarm_ref);
    if (lua_pcall(L, 0, 0, 0) != 0) {
        mm_log_error("alarm callback failed: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    mm_sched_drain();
}

/* alarm(seconds, fn) -- rings once after seconds, calling fn; alarm(nil) disarms.
 * Re-arming replaces the previous alarm. */
static int l_alarm(lua_State *L)
{
    if (!alarm_ready) {
        uv_timer_init(mm_loop, &alarm_timer);
        alarm_ready = 1;
    }
    if (lua_isnoneornil(L, 1)) {
        uv_timer_stop(&alarm_timer);
        return 0;
    }
    double s = luaL_checknumber(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    luaL_argcheck(L, isfinite(s), 1, "seconds must be finite");
    luaL_unref(L, LUA_REGISTRYINDEX, alarm_ref);
    lua_pushvalue(L, 2);
    alarm_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    uv_timer_start(&alarm_timer, on_alarm, s > 0 ? (uint64_t)ceil(s * 1000.0) : 0, 0);
    return 0;
}

void mm_sleep_open(lua_State *L)
{
    lua_pushcfunction(L, l_alarm);
    lua_setfield(L, -2, "alarm");
    lua_pushcfunction(L, l_sleep);
    lua_setfield(L, -2, "sleep");
}

/*
 * lsleep.c — core.sleep(seconds): the first yielding primitive, and the template every
 * other one follows (see sched.h).
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

void mm_sleep_open(lua_State *L)
{
    lua_pushcfunction(L, l_sleep);
    lua_setfield(L, -2, "sleep");
}

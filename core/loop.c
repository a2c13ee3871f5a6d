/*
 * loop.c — the event loop's life: signals in, orderly shutdown out.
 *
 * Signals (SIGINT, SIGTERM, SIGHUP) are delivered to the runtime's `signal` hook; the
 * runtime decides what they mean (drain and stop, reload). The signal handles do not
 * keep the loop alive. Shutdown closes every handle — stdout last, after its pending
 * writes drained — and runs the loop until all close callbacks ran.
 */
#include "http.h"
#include "lcore.h"
#include "loop.h"
#include "sched.h"
#include "stdio_transport.h"

#include <lauxlib.h>
#include <signal.h>

static uv_signal_t signals[3];
static const int signums[3] = {SIGINT, SIGTERM, SIGHUP};
static const char *const signames[3] = {"SIGINT", "SIGTERM", "SIGHUP"};
static int watching;

static void on_signal(uv_signal_t *h, int signum)
{
    (void)signum;
    lua_pushstring(mm_L, signames[h - signals]);
    mm_hook_call(mm_L, "signal", 1);
}

/* watch_signals() -- from now on SIGINT, SIGTERM, SIGHUP go to the signal hook */
static int l_watch_signals(lua_State *L)
{
    (void)L;
    if (watching) return 0;
    watching = 1;
    for (int i = 0; i < 3; i++) {
        uv_signal_init(mm_loop, &signals[i]);
        uv_signal_start(&signals[i], on_signal, signums[i]);
        uv_unref((uv_handle_t *)&signals[i]);
    }
    return 0;
}

void mm_signal_open(lua_State *L)
{
    lua_pushcfunction(L, l_watch_signals);
    lua_setfield(L, -2, "watch_signals");
}

static void close_rest(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h) && !mm_stdio_is_out(h)) uv_close(h, NULL);
}

void mm_loop_shutdown(void)
{
    mm_http_close();
    mm_stdio_close();
    mm_sched_close();
    uv_walk(mm_loop, close_rest, NULL);
    uv_run(mm_loop, UV_RUN_DEFAULT);
}

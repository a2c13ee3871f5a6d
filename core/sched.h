/*
 * sched.h — call coroutines: spawn, the single resume site, parking, cancellation.
 *
 * Every JSON-RPC call (and every request phase, and every child task) runs in its own
 * Lua coroutine, an mm_call. Only this scheduler resumes those coroutines, and only from
 * the event loop (never from inside another coroutine). A yielding primitive follows one
 * template (see lsleep.c):
 *
 *   1. check its arguments (misuse raises);
 *   2. mm_call *c = mm_call_check(L, "name")   -- raises outside a call or once cancelled;
 *   3. start the libuv operation, remembering c in the operation;
 *   4. return mm_call_park(L, c, cancel_fn, op) -- records how to cancel, then yields;
 *   5. on completion: push the results onto c->co, then mm_call_resume(c, nresults).
 *
 * Cancellation (client cancel, disconnect, deadline) calls cancel_fn(op) — which must stop
 * the operation so that its completion never fires, and free it in its close callback —
 * and resumes the coroutine with the CANCELLED sentinel, which the Lua wrapper of the
 * primitive turns into the error "cancelled".
 *
 * Host yields pass a sentinel (MM_HOST_YIELD) up through coroutines the handler made
 * itself; the Lua side (moonmcp.host) replaces coroutine.resume/wrap to forward it.
 */
#ifndef MM_SCHED_H
#define MM_SCHED_H

#include "mm.h"

typedef void (*mm_cancel_fn)(void *op);

typedef struct mm_call mm_call;

struct mm_call {
    lua_State *co;       /* the call's coroutine; results are pushed here before a resume */
    int thread_ref;      /* registry reference that keeps co alive while the call lives */
    double id;           /* unique per process; how Lua names the call */
    int state;           /* CALL_READY, CALL_RUNNING, CALL_PARKED */
    int nargs;           /* values on co's stack for the next resume */
    int cancelled;       /* set once; every later park raises "cancelled" */
    mm_cancel_fn cancel; /* how to cancel the pending operation, or NULL */
    void *op;            /* the pending operation */
    mm_call *next;       /* ready queue */
    uint64_t resumed_at; /* uv_hrtime() when its current resume began (watchdog) */
};

/* Sentinels, as light userdata values. */
extern char MM_HOST_YIELD[1]; /* yielded by primitives: "this is a host yield" */
extern char MM_CANCELLED[1];  /* resumed into a parked call that was cancelled */

void mm_sched_init(void);
void mm_sched_close(void);

/* Spawns a call running the function at L's stack top - nargs with the nargs values above
 * it (both popped). It first runs at the next drain. Returns the call. */
mm_call *mm_sched_spawn(lua_State *L, int nargs);

/* Runs every ready call now. Entry points from the loop call it after they queued work;
 * it does nothing when called from inside a coroutine. */
void mm_sched_drain(void);

/* The call being resumed right now, or NULL. */
mm_call *mm_sched_current(void);

/* Number of calls alive (spawned and not finished). */
int mm_sched_live(void);

/* Finds a live call by id, or NULL. */
mm_call *mm_sched_find(double id);

/* The primitive template (see above). mm_call_check raises a Lua error when there is no
 * current call or the current call was cancelled. */
mm_call *mm_call_check(lua_State *L, const char *what);
int mm_call_park(lua_State *L, mm_call *c, mm_cancel_fn cancel, void *op);
void mm_call_resume(mm_call *c, int nargs);

/* Cancels a call: cancels its pending operation and resumes it with MM_CANCELLED.
 * A call that is running or ready only gets the flag; its next park raises. */
void mm_call_cancel(mm_call *c);

/* The watchdog's view of the scheduler (lwatchdog.c): an outermost resume begins, ends. */
void mm_watchdog_enter(void);
void mm_watchdog_leave(void);

/* Registers the scheduler's functions in the table at the top of L. */
void mm_sched_open(lua_State *L);

#endif

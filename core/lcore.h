/*
 * lcore.h — the moonmcp.core module (the host's Lua API, used only by lua/moonmcp/)
 * and the hooks through which the loop calls into the runtime.
 */
#ifndef MM_LCORE_H
#define MM_LCORE_H

#include "mm.h"

int mm_core_open(lua_State *L);

/* Pushes the runtime's hook function `name` (set with core.set_hooks) onto L; returns 0,
 * or -1 with nothing pushed when the runtime did not set it. */
int mm_hook_push(lua_State *L, const char *name);

/* Calls hook `name` with the nargs values on top of L (popped) in protected mode, outside
 * any coroutine, then drains the scheduler. Errors are logged with their traceback. */
void mm_hook_call(lua_State *L, const char *name, int nargs);

/* The parts of core.* owned by other files: each registers its functions in the table at
 * the top of L. */
void mm_sleep_open(lua_State *L);  /* lsleep.c: sleep */
void mm_signal_open(lua_State *L); /* loop.c: watch_signals */

/* Exit status requested with core.stop(code); -1 while running. */
extern int mm_exit_code;

#endif

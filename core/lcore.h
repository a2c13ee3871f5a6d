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
void mm_sleep_open(lua_State *L);       /* lsleep.c: sleep */
void mm_signal_open(lua_State *L);      /* loop.c: watch_signals */
void mm_seal_open(lua_State *L);        /* lseal.c: seal, unseal, sha256, random_bytes */
void mm_diag_open(lua_State *L);        /* ldiag.c: handles */
void mm_exec_open(lua_State *L);        /* lexec.c: exec_spawn and process objects */
void mm_watch_open(lua_State *L);       /* lwatch.c: watch, file_stamp */
void mm_tcp_open(lua_State *L);         /* ltcp.c: tcp_connect, tcp_listen and sockets */
void mm_fs_open(lua_State *L);          /* lfs.c: fs (thread-pool file operations) */
void mm_dns_open(lua_State *L);         /* ldns.c: dns_resolve */
void mm_http_client_open(lua_State *L); /* lhttp_client.c: http_request (libcurl) */
void mm_watchdog_open(lua_State *L);    /* lwatchdog.c: CPU budgets of calls */

/* Id maps: a registry table (keyed by the address `map`) from numeric ids to C pointers,
 * so Lua names host objects by number and never holds a pointer. mm_idmap_set with ptr
 * NULL removes the entry; mm_idmap_get returns NULL for an unknown id. */
void mm_idmap_set(void *map, double id, void *ptr);
void *mm_idmap_get(lua_State *L, void *map, double id);

/* Exit status requested with core.stop(code); -1 while running. */
extern int mm_exit_code;

#endif

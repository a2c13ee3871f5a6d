/*
 * mm.h — the few definitions every file of the C host shares: the version, the
 * process-wide loop and Lua state, and the host's diagnostics on stderr.
 *
 * The host is single-threaded: one libuv loop, one Lua state, touched only from the
 * loop's thread (libuv's thread pool runs plain C work and never touches Lua).
 */
#ifndef MM_H
#define MM_H

#include <lua.h>
#include <uv.h>

#ifndef MOONMCP_VERSION
#define MOONMCP_VERSION "0.0.0"
#endif

/* The loop and the Lua state; set once by main.c before anything else runs. */
extern uv_loop_t *mm_loop;
extern lua_State *mm_L;

/* Writes one diagnostic line ("moonmcp: ...") to stderr. stdout belongs to the protocol. */
void mm_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

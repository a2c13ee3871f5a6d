/*
 * stdio_transport.h — newline-delimited JSON-RPC on stdin/stdout.
 */
#ifndef MM_STDIO_TRANSPORT_H
#define MM_STDIO_TRANSPORT_H

#include "mm.h"

/* Registers core.stdio_start, stdio_write, stdio_flush in the table at the top of L. */
void mm_stdio_open(lua_State *L);

/* Closes stdin and flushes stdout (used at shutdown). */
void mm_stdio_close(void);

/* Is h the stdout stream (which shutdown must let drain instead of closing)? */
int mm_stdio_is_out(uv_handle_t *h);

#endif

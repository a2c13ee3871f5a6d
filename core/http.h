/*
 * http.h — HTTP/1.1 connections on llhttp: limits, keep-alive, responses, SSE framing.
 */
#ifndef MM_HTTP_H
#define MM_HTTP_H

#include "mm.h"

/* Registers core.http_listen, http_respond, http_stream_open, http_sse, http_stream_close
 * in the table at the top of L. */
void mm_http_open(lua_State *L);

/* Stops accepting and closes idle connections; requests in flight finish. */
void mm_http_close(void);

#endif

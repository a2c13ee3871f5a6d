/*
 * stdio.c — newline-delimited JSON-RPC on stdin/stdout.
 *
 * Every complete line of stdin is handed to the runtime's `stdio_line` hook (a protected
 * call; the runtime spawns a coroutine per request), so lines are served concurrently and
 * answers may leave out of order. A line
 * longer than the configured limit is not buffered further: the hook receives
 * (nil, "line too long") once and the rest of that line is skipped. End of input calls
 * the `stdio_eof` hook (plain call); the runtime stops the process when the calls in
 * flight have finished.
 *
 * stdout carries only protocol messages, written asynchronously in order (a pipe or a
 * terminal is a libuv stream; a regular file is written synchronously). stdin may be a
 * pipe, a terminal or a regular file (read on the thread pool).
 */
#include "stdio_transport.h"
#include "bytes.h"
#include "lcore.h"
#include "sched.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char *data;
    size_t len, cap;
} line_buf;

static union {
    uv_pipe_t pipe;
    uv_tty_t tty;
} in, out;
static int in_stream, out_stream; /* 1 when in/out are libuv streams */
static int started, eof, skipping, out_closing;
static size_t max_line = 4 * 1024 * 1024;
static line_buf line;
static uv_fs_t file_req;
static char file_buf[65536];

static void deliver(const char *p, size_t n)
{
    if (n && p[n - 1] == '\r') n--;
    if (n == 0) return;
    mm_bytes_push(mm_L, p, n); /* not interned: see bytes.c */
    mm_hook_call(mm_L, "stdio_line", 1);
}

static void too_long(void)
{
    lua_pushnil(mm_L);
    lua_pushliteral(mm_L, "line too long");
    mm_hook_call(mm_L, "stdio_line", 2);
}

static void feed(const char *p, size_t n)
{
    const char *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t chunk = (size_t)((nl ? nl : end) - p);
        if (skipping) {
            if (nl) skipping = 0;
        } else if (line.len + chunk > max_line) {
            too_long();
            line.len = 0;
            skipping = nl == NULL;
        } else if (nl && line.len == 0) {
            deliver(p, chunk); /* whole line in this read: no copy */
        } else {
            if (line.len + chunk > line.cap) {
                size_t cap = line.cap ? line.cap : 4096;
                while (cap < line.len + chunk)
                    cap *= 2;
                char *d = realloc(line.data, cap);
                if (!d) {
                    too_long();
                    line.len = 0;
                    skipping = nl == NULL;
                    p = nl ? nl + 1 : end;
                    continue;
                }
                line.data = d;
                line.cap = cap;
            }
            memcpy(line.data + line.len, p, chunk);
            line.len += chunk;
            if (nl) {
                deliver(line.data, line.len);
                line.len = 0;
            }
        }
        p = nl ? nl + 1 : end;
    }
    mm_sched_drain();
}

static void at_eof(void)
{
    if (eof) return;
    eof = 1;
    if (line.len && !skipping) deliver(line.data, line.len);
    line.len = 0;
    mm_sched_drain();
    mm_hook_call(mm_L, "stdio_eof", 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)h;
    (void)suggested;
    *b = uv_buf_init(file_buf, sizeof file_buf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    if (n > 0)
        feed(b->base, (size_t)n);
    else if (n < 0) {
        uv_read_stop(s);
        uv_close((uv_handle_t *)s, NULL);
        at_eof();
    }
}

static void on_file_read(uv_fs_t *req)
{
    ssize_t n = req->result;
    uv_fs_req_cleanup(req);
    if (n > 0) {
        feed(file_buf, (size_t)n);
        uv_buf_t b = uv_buf_init(file_buf, sizeof file_buf);
        uv_fs_read(mm_loop, &file_req, 0, &b, 1, -1, on_file_read);
    } else {
        at_eof();
    }
}

static int open_stream(int fd, void *h, int readable)
{
    uv_handle_type t = uv_guess_handle(fd);
    if (t == UV_TTY) return uv_tty_init(mm_loop, h, fd, readable) == 0;
    if (t == UV_NAMED_PIPE || t == UV_TCP)
        return uv_pipe_init(mm_loop, h, 0) == 0 && uv_pipe_open(h, fd) == 0;
    return 0;
}

/* stdio_start{ max_line_bytes = n } -- starts reading stdin */
static int l_stdio_start(lua_State *L)
{
    if (started) return luaL_error(L, "stdio_start: already started");
    if (lua_istable(L, 1)) {
        lua_getfield(L, 1, "max_line_bytes");
        if (lua_isnumber(L, -1)) max_line = (size_t)lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    started = 1;
    out_stream = open_stream(1, &out, 0);
    in_stream = open_stream(0, &in, 1);
    if (in_stream) {
        uv_read_start((uv_stream_t *)&in, on_alloc, on_read);
    } else {
        uv_buf_t b = uv_buf_init(file_buf, sizeof file_buf);
        uv_fs_read(mm_loop, &file_req, 0, &b, 1, -1, on_file_read);
    }
    return 0;
}

typedef struct {
    uv_write_t req;
    char data[];
} write_req;

static void on_write(uv_write_t *req, int status)
{
    (void)status;
    free(req);
}

/* stdio_write(message) -- writes message (a string or bytes) and a newline to stdout */
static int l_stdio_write(lua_State *L)
{
    size_t len;
    const char *s = mm_bytes_check(L, 1, &len);
    if (!out_stream) {
        for (size_t off = 0; off < len;) { /* stdout is a file (or not open yet) */
            ssize_t w = write(1, s + off, len - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        if (write(1, "\n", 1) < 0) {
            /* nothing more to do: the reader is gone */
        }
        return 0;
    }
    if (out_closing) return 0;
    uv_buf_t bufs[2] = {uv_buf_init((char *)s, (unsigned)len), uv_buf_init("\n", 1)};
    uv_stream_t *st = (uv_stream_t *)&out;
    int done = 0;
    if (st->write_queue_size == 0) {
        int r = uv_try_write(st, bufs, 2);
        done = r > 0 ? r : 0;
    }
    if ((size_t)done == len + 1) return 0;
    size_t rest = len + 1 - (size_t)done;
    write_req *w = malloc(sizeof *w + rest);
    if (!w) return luaL_error(L, "stdio_write: out of memory");
    if ((size_t)done < len) {
        memcpy(w->data, s + done, len - (size_t)done);
        w->data[rest - 1] = '\n';
    } else {
        w->data[0] = '\n';
    }
    uv_buf_t b = uv_buf_init(w->data, (unsigned)rest);
    if (uv_write(&w->req, st, &b, 1, on_write) != 0) free(w);
    return 0;
}

void mm_stdio_open(lua_State *L)
{
    lua_pushcfunction(L, l_stdio_start);
    lua_setfield(L, -2, "stdio_start");
    lua_pushcfunction(L, l_stdio_write);
    lua_setfield(L, -2, "stdio_write");
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    uv_close((uv_handle_t *)req->handle, NULL);
    free(req);
}

void mm_stdio_close(void)
{
    if (!started) return;
    if (in_stream && !uv_is_closing((uv_handle_t *)&in)) uv_close((uv_handle_t *)&in, NULL);
    if (out_stream && !out_closing) {
        out_closing = 1;
        uv_shutdown_t *req = malloc(sizeof *req);
        if (!req || uv_shutdown(req, (uv_stream_t *)&out, on_shutdown) != 0) {
            free(req);
            uv_close((uv_handle_t *)&out, NULL);
        }
    }
    free(line.data);
    line = (line_buf){0};
}

int mm_stdio_is_out(uv_handle_t *h)
{
    return started && out_stream && h == (uv_handle_t *)&out;
}

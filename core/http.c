/*
 * http.c — HTTP/1.1 connections on llhttp: limits, keep-alive, responses, SSE framing.
 *
 * A connection parses one request at a time. When a request is complete it is checked
 * here (path, method, Host/Origin allowlist, Content-Type, Accept) and only then handed to
 * the runtime's `http_request` hook, as (rid, method, headers, body, remote). The parser is
 * paused until the runtime answers that rid; bytes of pipelined requests that arrive
 * meanwhile wait in `pending` and are parsed after the answer, so answers go out in
 * order. Limits (header bytes, header count, body bytes) are enforced while parsing, so
 * untrusted bytes are bounded before Lua sees any; the header-read timeout runs from the
 * first byte of a request to the end of its headers, the idle timeout whenever the
 * connection waits for the client.
 *
 * rid: every dispatched request gets a number, mapped to its connection in a registry
 * table until the answer is complete or the connection closes. The runtime answers with
 * http_respond (one JSON body) or http_stream_open / http_sse / http_stream_close (an
 * SSE stream in chunked encoding). A stale rid (connection gone) makes those return false.
 * Answer bytes are flushed to the sockets once per loop iteration (see "writing").
 *
 * Lifetimes: a connection owns a uv_tcp_t and a uv_timer_t and is freed when both close
 * callbacks ran. The runtime learns that a connection with an answer pending went away
 * (http_closed hook) from the close callback, i.e. always from the loop, never from inside
 * a coroutine.
 */
#include "http.h"
#include "bytes.h"
#include "lcore.h"
#include "sched.h"

#include <lauxlib.h>
#include <llhttp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_ALLOW 16

typedef struct {
    char endpoint[256];
    size_t max_header_bytes;
    int max_headers;
    size_t max_body_bytes;
    uint64_t header_timeout_ms;
    uint64_t idle_timeout_ms;
    int allow_any_host;
    int nhosts;
    char hosts[MAX_ALLOW][128]; /* allowed Host/Origin host names */
} http_config;

typedef struct {
    char *data;
    size_t len, cap;
} buf;

typedef struct {
    size_t name, name_len, value, value_len; /* offsets into conn.hbuf */
} header;

typedef struct conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    llhttp_t parser;
    int handles; /* open handles; freed at 0 */
    int closing;
    int close_after_write;
    int streaming;    /* an SSE answer is open */
    int keep_alive;   /* of the request being answered */
    double rid;       /* request being answered, 0 when none */
    int error_status; /* set by a parser callback that rejects the request */
    const char *error_text;
    size_t header_bytes;
    int in_field;       /* inside a header name */
    int in_headers;     /* between the first byte of a request and the end of its headers */
    int read_stopped;   /* reading paused: too many pipelined bytes wait */
    int pumping;        /* inside pump(): it must not re-enter itself */
    int dispatch;       /* the parser paused on a complete request to hand to Lua */
    int failed;         /* the parser failed: nothing more is parsed on this connection */
    size_t pending_off; /* bytes of pending already parsed */
    buf url, hbuf, body, pending;
    buf out; /* answer bytes not yet handed to the socket (see "writing") */
    struct conn *dirty_prev, *dirty_next;
    int dirty; /* on the dirty list: out waits for the end of the loop iteration */
    header *headers;
    int nheaders, headers_cap;
    char remote[64];
} conn;

static uv_tcp_t server;
static int listening;
static http_config cfg;
static llhttp_settings_t settings;
static char RIDS_KEY[1];
static double next_rid = 1;

static void conn_close(conn *c);
static void pump(conn *c);

/* ---- small buffers ---- */

static int buf_append(buf *b, const char *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) return UV_ENOMEM;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static void buf_free(buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ---- rid map ---- */

static void rid_set(double rid, conn *c)
{
    mm_idmap_set(RIDS_KEY, rid, c);
}

static conn *rid_get(lua_State *L, double rid)
{
    conn *c = mm_idmap_get(L, RIDS_KEY, rid);
    if (c && (c->closing || c->rid != rid)) return NULL;
    return c;
}

/* ---- writing ----
 *
 * Answers are not written when they are made: conn_write appends them to the
 * connection's `out` buffer and puts the connection on the dirty list, which is flushed
 * once per loop iteration, after the I/O callbacks (a check handle) and, should anything
 * write later in the iteration, before the loop blocks again (a prepare handle). The
 * answers to everything one poll returned then go out back to back: a client that waits
 * in epoll is woken once per batch instead of once per answer, and pipelined answers on
 * one connection share a syscall. Order on a connection is kept: out is only ever
 * appended to, and flushed behind any write libuv still has queued. */

typedef struct {
    uv_write_t req;
    conn *c;
    char data[];
} write_req;

#define OUT_KEEP_MAX 16384 /* a bigger out buffer is freed once flushed */

static conn *dirty_head;
static uv_check_t flush_check;
static uv_prepare_t flush_prepare;
static int flush_handles_ready;

static void on_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    conn *c = w->c;
    free(w);
    if (status < 0 || (c->close_after_write && c->tcp.write_queue_size == 0 && c->out.len == 0))
        conn_close(c);
}

static void dirty_unlink(conn *c)
{
    if (!c->dirty) return;
    if (c->dirty_prev)
        c->dirty_prev->dirty_next = c->dirty_next;
    else
        dirty_head = c->dirty_next;
    if (c->dirty_next) c->dirty_next->dirty_prev = c->dirty_prev;
    c->dirty_prev = c->dirty_next = NULL;
    c->dirty = 0;
}

/* Hands out to the socket: what it does not take at once is copied and queued. A client
 * that stops reading (a stalled SSE stream) is dropped once MAX_WRITE_QUEUE bytes wait for
 * it, rather than holding the server's memory. */
#define MAX_WRITE_QUEUE (16u * 1024 * 1024)

static void conn_flush(conn *c)
{
    size_t total = c->out.len, done = 0;
    dirty_unlink(c);
    if (c->closing || total == 0) return;
    c->out.len = 0;
    if (c->tcp.write_queue_size == 0) {
        uv_buf_t b = uv_buf_init(c->out.data, (unsigned)total);
        int r = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
        if (r < 0 && r != UV_EAGAIN) {
            conn_close(c);
            return;
        }
        done = r > 0 ? (size_t)r : 0;
    }
    if (done < total) {
        write_req *w = malloc(sizeof *w + (total - done));
        if (!w) {
            conn_close(c);
            return;
        }
        w->c = c;
        memcpy(w->data, c->out.data + done, total - done);
        uv_buf_t b = uv_buf_init(w->data, (unsigned)(total - done));
        if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_write) < 0) {
            free(w);
            conn_close(c);
            return;
        }
    }
    if (c->out.cap > OUT_KEEP_MAX) buf_free(&c->out);
    if (c->close_after_write && c->tcp.write_queue_size == 0) conn_close(c);
}

/* Flushes every dirty connection (the check and prepare handles' callback). */
static void flush_all(void)
{
    while (dirty_head)
        conn_flush(dirty_head);
    if (!flush_handles_ready) return;
    uv_check_stop(&flush_check);
    uv_prepare_stop(&flush_prepare);
}

static void on_flush_check(uv_check_t *h)
{
    (void)h;
    flush_all();
}

static void on_flush_prepare(uv_prepare_t *h)
{
    (void)h;
    flush_all();
}

/* Queues bufs for the connection (written at the end of this loop iteration). */
static void conn_write(conn *c, uv_buf_t *bufs, int n)
{
    if (c->closing) return;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += bufs[i].len;
    if (c->tcp.write_queue_size + c->out.len + total > MAX_WRITE_QUEUE) {
        conn_close(c);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (buf_append(&c->out, bufs[i].base, bufs[i].len) != 0) {
            conn_close(c);
            return;
        }
    }
    if (c->dirty) return;
    if (!flush_handles_ready) {
        uv_check_init(mm_loop, &flush_check);
        uv_prepare_init(mm_loop, &flush_prepare);
        flush_handles_ready = 1;
    }
    if (!dirty_head) {
        uv_check_start(&flush_check, on_flush_check);
        uv_prepare_start(&flush_prepare, on_flush_prepare);
    }
    c->dirty = 1;
    c->dirty_prev = NULL;
    c->dirty_next = dirty_head;
    if (dirty_head) dirty_head->dirty_prev = c;
    dirty_head = c;
}

static const char *status_text(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 408:
        return "Request Timeout";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

/* A response head being built: on the stack while it fits, on the heap beyond. */
typedef struct {
    char *p;
    size_t len, cap;
    int oom;
    char stack[512];
} head_buf;

static void hb_init(head_buf *h)
{
    h->p = h->stack;
    h->len = 0;
    h->cap = sizeof h->stack;
    h->oom = 0;
}

static void hb_add(head_buf *h, const char *s, size_t n)
{
    if (h->len + n > h->cap) {
        size_t cap = h->cap * 2;
        while (cap < h->len + n)
            cap *= 2;
        char *p = h->p == h->stack ? malloc(cap) : realloc(h->p, cap);
        if (!p) {
            h->oom = 1;
            return;
        }
        if (h->p == h->stack) memcpy(p, h->stack, h->len);
        h->p = p;
        h->cap = cap;
    }
    memcpy(h->p + h->len, s, n);
    h->len += n;
}

#define HB_LIT(h, lit) hb_add((h), (lit), sizeof(lit) - 1)

static void hb_str(head_buf *h, const char *s)
{
    hb_add(h, s, strlen(s));
}

static void hb_num(head_buf *h, unsigned long long v)
{
    char digits[24];
    int i = sizeof digits;
    do {
        digits[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    hb_add(h, digits + i, sizeof digits - (size_t)i);
}

static void hb_free(head_buf *h)
{
    if (h->p != h->stack) free(h->p);
}

/* Appends the status line and the fixed headers (length < 0: chunked). */
static void format_head(conn *c, head_buf *h, int status, const char *type, long long length)
{
    HB_LIT(h, "HTTP/1.1 ");
    hb_num(h, (unsigned long long)status);
    HB_LIT(h, " ");
    hb_str(h, status_text(status));
    HB_LIT(h, "\r\n");
    if (type) {
        HB_LIT(h, "Content-Type: ");
        hb_str(h, type);
        HB_LIT(h, "\r\n");
    }
    if (length >= 0) {
        HB_LIT(h, "Content-Length: ");
        hb_num(h, (unsigned long long)length);
        HB_LIT(h, "\r\n");
    } else {
        HB_LIT(h, "Transfer-Encoding: chunked\r\n");
    }
    if (!c->keep_alive) HB_LIT(h, "Connection: close\r\n");
}

/* Appends "Name: value\r\n" for every string pair of the table at index idx (header
 * names and values with CR or LF are skipped: no response splitting). */
static void format_headers(lua_State *L, int idx, head_buf *h)
{
    if (!lua_istable(L, idx)) return;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        size_t nl, vl;
        const char *n = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &nl) : NULL;
        const char *v = lua_isstring(L, -1) ? lua_tolstring(L, -1, &vl) : NULL;
        if (n && v && !strpbrk(n, "\r\n:") && !memchr(v, '\r', vl) && !memchr(v, '\n', vl)) {
            hb_add(h, n, nl);
            HB_LIT(h, ": ");
            hb_add(h, v, vl);
            HB_LIT(h, "\r\n");
        }
        lua_pop(L, 1);
    }
}

/* An answer the C side makes itself (errors found before Lua). */
static void respond_error(conn *c, int status, const char *message, const char *extra)
{
    char body[512];
    int code = status == 404 ? -32601 : -32600;
    int blen =
        snprintf(body, sizeof body,
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":%d,\"message\":\"%s\"}}",
                 code, message);
    head_buf h;
    hb_init(&h);
    format_head(c, &h, status, "application/json", blen);
    if (extra) hb_str(&h, extra);
    HB_LIT(&h, "\r\n");
    uv_buf_t bufs[2] = {uv_buf_init(h.p, (unsigned)h.len), uv_buf_init(body, (unsigned)blen)};
    if (!c->keep_alive) c->close_after_write = 1;
    conn_write(c, bufs, 2);
    hb_free(&h);
}

/* ---- the request cycle ---- */

static void timer_idle(conn *c);
static void on_pump_timer(uv_timer_t *t);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b);
static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

static void on_timeout(uv_timer_t *t)
{
    conn *c = t->data;
    if (c->rid) return;
    if (llhttp_get_errno(&c->parser) == HPE_OK && c->header_bytes > 0) {
        c->keep_alive = 0;
        respond_error(c, 408, "request headers not received in time", NULL);
    } else {
        conn_close(c);
    }
}

static void timer_idle(conn *c)
{
    if (cfg.idle_timeout_ms) uv_timer_start(&c->timer, on_timeout, cfg.idle_timeout_ms, 0);
}

static void request_reset(conn *c)
{
    c->url.len = c->hbuf.len = c->body.len = 0;
    c->nheaders = 0;
    c->header_bytes = 0;
    c->in_field = 0;
    c->error_status = 0;
}

/* Finishes the answer to the current request and goes on with the next one. */
static void request_done(conn *c)
{
    rid_set(c->rid, NULL);
    c->rid = 0;
    c->streaming = 0;
    if (!c->keep_alive) {
        if (c->out.len == 0 && c->tcp.write_queue_size == 0)
            conn_close(c);
        else
            c->close_after_write = 1; /* once out is flushed and the socket took it all */
        return;
    }
    request_reset(c);
    timer_idle(c);
    llhttp_resume(&c->parser);
    if (c->read_stopped && !c->closing) {
        c->read_stopped = 0;
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
    if (c->pending.len > c->pending_off) {
        /* Pipelined bytes wait. Parse them now, unless a coroutine is answering: then on
         * the next loop iteration, so that Lua is never entered from inside a coroutine. */
        if (mm_sched_current())
            uv_timer_start(&c->timer, on_pump_timer, 0, 0);
        else
            pump(c);
    }
}

static int reject(conn *c, int status, const char *text)
{
    c->error_status = status;
    c->error_text = text;
    return -1;
}

static int on_message_begin(llhttp_t *p)
{
    conn *c = p->data;
    request_reset(c);
    c->in_headers = 1;
    if (cfg.header_timeout_ms) uv_timer_start(&c->timer, on_timeout, cfg.header_timeout_ms, 0);
    return 0;
}

static int count_header_bytes(conn *c, size_t n)
{
    c->header_bytes += n;
    if (c->header_bytes > cfg.max_header_bytes) return reject(c, 431, "request headers too large");
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t n)
{
    conn *c = p->data;
    if (count_header_bytes(c, n)) return -1;
    return buf_append(&c->url, at, n) ? reject(c, 500, "out of memory") : 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t n)
{
    conn *c = p->data;
    if (count_header_bytes(c, n)) return -1;
    if (!c->in_field) { /* a new header starts */
        if (c->nheaders >= cfg.max_headers) return reject(c, 431, "too many request headers");
        if (c->nheaders == c->headers_cap) {
            int cap = c->headers_cap ? c->headers_cap * 2 : 16;
            header *h = realloc(c->headers, (size_t)cap * sizeof *h);
            if (!h) return reject(c, 500, "out of memory");
            c->headers = h;
            c->headers_cap = cap;
        }
        header *h = &c->headers[c->nheaders++];
        h->name = c->hbuf.len;
        h->name_len = h->value = h->value_len = 0;
        c->in_field = 1;
    }
    if (buf_append(&c->hbuf, at, n)) return reject(c, 500, "out of memory");
    c->headers[c->nheaders - 1].name_len += n;
    return 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    conn *c = p->data;
    c->in_field = 0;
    c->headers[c->nheaders - 1].value = c->hbuf.len;
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t n)
{
    conn *c = p->data;
    if (count_header_bytes(c, n)) return -1;
    if (buf_append(&c->hbuf, at, n)) return reject(c, 500, "out of memory");
    c->headers[c->nheaders - 1].value_len += n;
    return 0;
}

static int on_headers_complete(llhttp_t *p)
{
    conn *c = p->data;
    c->in_headers = 0;
    timer_idle(c); /* headers are in: the body is bounded by the idle timeout */
    c->keep_alive = llhttp_should_keep_alive(p);
    if (p->method == HTTP_POST && !(p->flags & (F_CHUNKED | F_CONTENT_LENGTH)))
        return reject(c, 411, "a POST needs Content-Length or chunked Transfer-Encoding");
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > cfg.max_body_bytes)
        return reject(c, 413, "request body too large");
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > 0) {
        size_t want = (size_t)p->content_length;
        if (want > c->body.cap) {
            char *d = realloc(c->body.data, want);
            if (!d) return reject(c, 500, "out of memory");
            c->body.data = d;
            c->body.cap = want;
        }
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t n)
{
    conn *c = p->data;
    if (c->body.len + n > cfg.max_body_bytes) return reject(c, 413, "request body too large");
    return buf_append(&c->body, at, n) ? reject(c, 500, "out of memory") : 0;
}

static const char *find_header(conn *c, const char *name, size_t *len)
{
    size_t nlen = strlen(name);
    for (int i = 0; i < c->nheaders; i++) {
        header *h = &c->headers[i];
        if (h->name_len == nlen && strncasecmp(c->hbuf.data + h->name, name, nlen) == 0) {
            *len = h->value_len;
            return c->hbuf.data + h->value;
        }
    }
    return NULL;
}

/* Is the host part of "host[:port]" (or "[v6]:port") in the allowlist? */
static int host_allowed(const char *s, size_t len)
{
    if (cfg.allow_any_host) return 1;
    size_t hl = len;
    if (len && s[0] == '[') {
        const char *end = memchr(s, ']', len);
        hl = end ? (size_t)(end - s) + 1 : len;
    } else {
        const char *colon = memchr(s, ':', len);
        if (colon) hl = (size_t)(colon - s);
    }
    for (int i = 0; i < cfg.nhosts; i++)
        if (strlen(cfg.hosts[i]) == hl && strncasecmp(cfg.hosts[i], s, hl) == 0) return 1;
    return 0;
}

static int origin_allowed(const char *s, size_t len)
{
    if (len == 4 && memcmp(s, "null", 4) == 0) return 0;
    const char *scheme = memchr(s, ':', len);
    if (!scheme || (size_t)(scheme - s) + 3 > len || memcmp(scheme, "://", 3) != 0) return 0;
    const char *host = scheme + 3;
    size_t hl = len - (size_t)(host - s);
    const char *slash = memchr(host, '/', hl);
    if (slash) hl = (size_t)(slash - host);
    return host_allowed(host, hl);
}

static int media_type_is(const char *v, size_t len, const char *type)
{
    size_t tl = strlen(type);
    while (len && (*v == ' ' || *v == '\t'))
        v++, len--;
    return len >= tl && strncasecmp(v, type, tl) == 0 &&
           (len == tl || v[tl] == ';' || v[tl] == ' ');
}

/* Does an Accept header value admit the media type (listed, or via a wildcard)? */
static int accepts(const char *v, size_t len, const char *type)
{
    char lower[1024];
    if (len >= sizeof lower) len = sizeof lower - 1;
    for (size_t i = 0; i < len; i++)
        lower[i] = (char)((v[i] >= 'A' && v[i] <= 'Z') ? v[i] + 32 : v[i]);
    lower[len] = '\0';
    if (strstr(lower, type) || strstr(lower, "*/*")) return 1;
    char major[32];
    const char *slash = strchr(type, '/');
    size_t ml = (size_t)(slash - type);
    if (ml + 3 > sizeof major) return 0;
    memcpy(major, type, ml);
    memcpy(major + ml, "/*", 3);
    return strstr(lower, major) != NULL;
}

/* Pushes the request's headers as a Lua table (lower-case names, repeated ones joined
 * with ", "). */
static void push_headers(lua_State *L, conn *c)
{
    lua_createtable(L, 0, c->nheaders);
    for (int i = 0; i < c->nheaders; i++) {
        header *h = &c->headers[i];
        char name[256];
        size_t n = h->name_len < sizeof name ? h->name_len : sizeof name - 1;
        for (size_t k = 0; k < n; k++) {
            char ch = c->hbuf.data[h->name + k];
            name[k] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
        }
        lua_pushlstring(L, name, n);
        lua_pushvalue(L, -1);
        lua_rawget(L, -3);
        if (lua_isstring(L, -1)) {
            lua_pushliteral(L, ", ");
            lua_pushlstring(L, c->hbuf.data + h->value, h->value_len);
            lua_concat(L, 3);
        } else {
            lua_pop(L, 1);
            lua_pushlstring(L, c->hbuf.data + h->value, h->value_len);
        }
        lua_rawset(L, -3);
    }
}

static int on_message_complete(llhttp_t *p)
{
    conn *c = p->data;
    size_t len;
    const char *v;
    if (c->url.len < strlen(cfg.endpoint) ||
        strncmp(c->url.data, cfg.endpoint, strlen(cfg.endpoint)) != 0 ||
        (c->url.len > strlen(cfg.endpoint) && c->url.data[strlen(cfg.endpoint)] != '?')) {
        respond_error(c, 404, "not found: MCP is served at the endpoint path only", NULL);
        return 0;
    }
    if (p->method != HTTP_POST && p->method != HTTP_GET && p->method != HTTP_DELETE) {
        respond_error(c, 405, "method not allowed", "Allow: GET, POST, DELETE\r\n");
        return 0;
    }
    v = find_header(c, "host", &len);
    if (!v || !host_allowed(v, len)) {
        respond_error(c, 403, "forbidden: Host not allowed", NULL);
        return 0;
    }
    v = find_header(c, "origin", &len);
    if (v && !origin_allowed(v, len)) {
        respond_error(c, 403, "forbidden: Origin not allowed", NULL);
        return 0;
    }
    if (p->method == HTTP_POST) {
        v = find_header(c, "content-type", &len);
        if (!v || !media_type_is(v, len, "application/json")) {
            respond_error(c, 415, "unsupported media type: POST a body of application/json", NULL);
            return 0;
        }
        v = find_header(c, "accept", &len);
        if (!v || !(accepts(v, len, "application/json") && accepts(v, len, "text/event-stream"))) {
            respond_error(c, 406,
                          "not acceptable: Accept must list application/json and text/event-stream",
                          NULL);
            return 0;
        }
    }
    lua_State *L = mm_L;
    if (mm_hook_push(L, "http_request") != 0) {
        respond_error(c, 500, "the runtime has no HTTP handler", NULL);
        return 0;
    }
    lua_pop(L, 1);
    c->dispatch = 1;
    return HPE_PAUSED; /* parse nothing more: pump() hands it to Lua, outside the parser */
}

/* Hands the complete request to the runtime's http_request hook as (rid, method,
 * headers, body, remote) — a protected call, not a coroutine: the runtime spawns the
 * call's coroutine itself. The path was checked here and is not passed. */
static void dispatch(conn *c)
{
    lua_State *L = mm_L;
    uv_timer_stop(&c->timer);
    c->rid = next_rid++;
    rid_set(c->rid, c);
    lua_pushnumber(L, c->rid);
    lua_pushstring(L, llhttp_method_name(c->parser.method));
    push_headers(L, c);
    mm_bytes_push(L, c->body.data ? c->body.data : "", c->body.len); /* not interned */
    lua_pushstring(L, c->remote);
    mm_hook_call(L, "http_request", 5);
}

/* Parses what waits in pending, one request at a time: each complete request is
 * dispatched; parsing stops while its answer is outstanding (c->rid) and goes on when it
 * is complete (request_done). */
static void pump(conn *c)
{
    if (c->pumping) return; /* an outer pump() goes on with the loop */
    c->pumping = 1;
    while (!c->rid && !c->closing && !c->failed && c->pending.len > c->pending_off) {
        const char *data = c->pending.data + c->pending_off;
        size_t len = c->pending.len - c->pending_off;
        llhttp_errno_t err = llhttp_execute(&c->parser, data, len);
        size_t used = len;
        if (err == HPE_PAUSED) {
            const char *pos = llhttp_get_error_pos(&c->parser);
            used = pos ? (size_t)(pos - data) : len;
        }
        c->pending_off += used;
        if (c->pending_off == c->pending.len) c->pending.len = c->pending_off = 0;
        if (err == HPE_PAUSED && c->dispatch) {
            c->dispatch = 0;
            dispatch(c);
        } else if (err != HPE_OK && err != HPE_PAUSED) {
            c->failed = 1;
            c->keep_alive = 0;
            if (c->error_status)
                respond_error(c, c->error_status, c->error_text, NULL);
            else
                respond_error(c, 400, "malformed HTTP request", NULL);
        }
    }
    c->pumping = 0;
    mm_sched_drain();
}

static void on_pump_timer(uv_timer_t *t)
{
    conn *c = t->data;
    if (!c->rid) timer_idle(c);
    pump(c);
}

/* ---- connection handling ---- */

static void on_handle_close(uv_handle_t *h)
{
    conn *c = h->data;
    if (--c->handles > 0) return;
    if (c->rid) {
        double rid = c->rid;
        rid_set(rid, NULL);
        c->rid = 0;
        lua_pushnumber(mm_L, rid);
        mm_hook_call(mm_L, "http_closed", 1);
    }
    buf_free(&c->url);
    buf_free(&c->hbuf);
    buf_free(&c->body);
    buf_free(&c->pending);
    dirty_unlink(c);
    buf_free(&c->out);
    free(c->headers);
    free(c);
}

static void conn_close(conn *c)
{
    if (c->closing) return;
    c->closing = 1;
    uv_close((uv_handle_t *)&c->tcp, on_handle_close);
    uv_close((uv_handle_t *)&c->timer, on_handle_close);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)h;
    (void)suggested;
    static char slab[65536]; /* single-threaded: one read at a time */
    *b = uv_buf_init(slab, sizeof slab);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    conn *c = s->data;
    if (n < 0) {
        conn_close(c); /* EOF or error: a pending call is cancelled in the close callback */
        return;
    }
    if (n > 0) {
        if (!c->rid && !c->in_headers) timer_idle(c);
        if (buf_append(&c->pending, b->base, (size_t)n) != 0) {
            conn_close(c);
            return;
        }
        if (c->rid && c->pending.len - c->pending_off > cfg.max_body_bytes + 65536) {
            uv_read_stop(s); /* back-pressure a client that pipelines too much */
            c->read_stopped = 1;
        }
        pump(c);
    }
}

static void on_connection(uv_stream_t *srv, int status)
{
    if (status < 0) return;
    conn *c = calloc(1, sizeof *c);
    if (!c) return;
    uv_tcp_init(mm_loop, &c->tcp);
    uv_timer_init(mm_loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles = 2;
    c->keep_alive = 1;
    if (uv_accept(srv, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    struct sockaddr_storage sa;
    int salen = sizeof sa;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &salen) == 0) {
        char ip[48] = "?";
        int port = 0;
        if (sa.ss_family == AF_INET6) {
            uv_ip6_name((struct sockaddr_in6 *)&sa, ip, sizeof ip);
            port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
        } else {
            uv_ip4_name((struct sockaddr_in *)&sa, ip, sizeof ip);
            port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
        }
        snprintf(c->remote, sizeof c->remote, "%s:%d", ip, port);
    }
    llhttp_init(&c->parser, HTTP_REQUEST, &settings);
    c->parser.data = c;
    timer_idle(c);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* ---- Lua API ---- */

static size_t opt_size(lua_State *L, const char *key, size_t def)
{
    lua_getfield(L, 1, key);
    size_t v = lua_isnumber(L, -1) ? (size_t)lua_tonumber(L, -1) : def;
    lua_pop(L, 1);
    return v;
}

/* http_listen{ host=, port=, endpoint=, max_header_bytes=, max_headers=, max_body_bytes=,
 *              header_timeout=, idle_timeout= (seconds), allowed_hosts = {...} | "*" }
 * -> port, or nil, message */
static int l_http_listen(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (listening) return luaL_error(L, "http_listen: already listening");
    lua_getfield(L, 1, "host");
    const char *host = luaL_optstring(L, -1, "127.0.0.1");
    lua_getfield(L, 1, "port");
    int port = (int)luaL_optinteger(L, -1, 8080);
    lua_getfield(L, 1, "endpoint");
    snprintf(cfg.endpoint, sizeof cfg.endpoint, "%s", luaL_optstring(L, -1, "/mcp"));
    lua_pop(L, 1);
    cfg.max_header_bytes = opt_size(L, "max_header_bytes", 16384);
    cfg.max_headers = (int)opt_size(L, "max_headers", 64);
    cfg.max_body_bytes = opt_size(L, "max_body_bytes", 4 * 1024 * 1024);
    lua_getfield(L, 1, "header_timeout");
    cfg.header_timeout_ms = (uint64_t)(luaL_optnumber(L, -1, 10) * 1000);
    lua_getfield(L, 1, "idle_timeout");
    cfg.idle_timeout_ms = (uint64_t)(luaL_optnumber(L, -1, 60) * 1000);
    lua_pop(L, 2);
    cfg.nhosts = 0;
    cfg.allow_any_host = 0;
    lua_getfield(L, 1, "allowed_hosts");
    if (lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "*") == 0) {
        cfg.allow_any_host = 1;
    } else if (lua_istable(L, -1)) {
        for (int i = 1; cfg.nhosts < MAX_ALLOW; i++) {
            lua_rawgeti(L, -1, i);
            if (!lua_isstring(L, -1)) {
                lua_pop(L, 1);
                break;
            }
            snprintf(cfg.hosts[cfg.nhosts++], sizeof cfg.hosts[0], "%s", lua_tostring(L, -1));
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);

    struct sockaddr_storage sa;
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)&sa) != 0 &&
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)&sa) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "invalid listen address '%s' (use an IP address)", host);
        return 2;
    }
    uv_tcp_init(mm_loop, &server);
    int r = uv_tcp_bind(&server, (struct sockaddr *)&sa, 0);
    if (r == 0) r = uv_listen((uv_stream_t *)&server, 1024, on_connection);
    if (r != 0) {
        uv_close((uv_handle_t *)&server, NULL);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot listen on %s:%d: %s", host, port, uv_strerror(r));
        return 2;
    }
    listening = 1;
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    uv_tcp_getsockname(&server, (struct sockaddr *)&bound, &blen);
    port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                             : ((struct sockaddr_in *)&bound)->sin_port);
    lua_pushinteger(L, port);
    return 1;
}

/* http_respond(rid, status, body?, content_type?, headers?) -> true, or false if gone;
 * body is a string or bytes (bytes.c) */
static int l_http_respond(lua_State *L)
{
    double rid = luaL_checknumber(L, 1);
    int status = (int)luaL_checkinteger(L, 2);
    size_t blen = 0;
    const char *body = "";
    if (!lua_isnoneornil(L, 3)) body = mm_bytes_check(L, 3, &blen); /* a string or bytes */
    const char *type = luaL_optstring(L, 4, blen ? "application/json" : NULL);
    conn *c = rid_get(L, rid);
    if (!c || c->streaming) {
        lua_pushboolean(L, 0);
        return 1;
    }
    head_buf h;
    hb_init(&h);
    format_head(c, &h, status, type, (long long)blen);
    format_headers(L, 5, &h);
    HB_LIT(&h, "\r\n");
    if (h.oom) {
        hb_free(&h);
        return luaL_error(L, "http_respond: out of memory");
    }
    uv_buf_t bufs[2] = {uv_buf_init(h.p, (unsigned)h.len),
                        uv_buf_init((char *)body, (unsigned)blen)};
    conn_write(c, bufs, blen ? 2 : 1);
    hb_free(&h);
    request_done(c);
    lua_pushboolean(L, 1);
    return 1;
}

/* http_stream_open(rid, status, content_type, headers?) -> true, or false if gone */
static int l_http_stream_open(lua_State *L)
{
    double rid = luaL_checknumber(L, 1);
    int status = (int)luaL_checkinteger(L, 2);
    const char *type = luaL_checkstring(L, 3);
    conn *c = rid_get(L, rid);
    if (!c || c->streaming) {
        lua_pushboolean(L, 0);
        return 1;
    }
    head_buf h;
    hb_init(&h);
    format_head(c, &h, status, type, -1);
    format_headers(L, 4, &h);
    HB_LIT(&h, "\r\n");
    if (h.oom) {
        hb_free(&h);
        return luaL_error(L, "http_stream_open: out of memory");
    }
    uv_buf_t buf = uv_buf_init(h.p, (unsigned)h.len);
    conn_write(c, &buf, 1);
    hb_free(&h);
    c->streaming = 1;
    lua_pushboolean(L, 1);
    return 1;
}

/* http_sse(rid, data, id?) -> true, or false if gone: one SSE "message" event, sent as
 * one chunk; data is a string or bytes. It should hold no newline (our JSON never does);
 * if it does, it is split into several data: lines. */
static int l_http_sse(lua_State *L)
{
    double rid = luaL_checknumber(L, 1);
    size_t dlen;
    const char *data = mm_bytes_check(L, 2, &dlen);
    const char *id = luaL_optstring(L, 3, NULL);
    conn *c = rid_get(L, rid);
    if (!c || !c->streaming) {
        lua_pushboolean(L, 0);
        return 1;
    }
    /* The event is written straight into the connection's output, never made a Lua
     * string (see bytes.c): its size first, for the chunk header, then its pieces. */
    static const char EVENT[] = "event: message\n", DATA[] = "data: ";
    size_t elen = (id ? 4 + strlen(id) + 1 : 0) + sizeof EVENT - 1 + 1;
    const char *p = data, *end = data + dlen, *nl;
    do {
        nl = memchr(p, '\n', (size_t)(end - p));
        elen += sizeof DATA - 1 + (size_t)((nl ? nl : end) - p) + 1;
        p = nl ? nl + 1 : end;
    } while (p < end);
    char size[32];
    int slen = snprintf(size, sizeof size, "%zx\r\n", elen);
    uv_buf_t head[4] = {uv_buf_init(size, (unsigned)slen), uv_buf_init("id: ", 4),
                        uv_buf_init((char *)(id ? id : ""), (unsigned)(id ? strlen(id) : 0)),
                        uv_buf_init("\n", 1)};
    if (id)
        conn_write(c, head, 4);
    else
        conn_write(c, head, 1);
    uv_buf_t event = uv_buf_init((char *)EVENT, sizeof EVENT - 1);
    conn_write(c, &event, 1);
    p = data;
    do {
        nl = memchr(p, '\n', (size_t)(end - p));
        uv_buf_t line[3] = {uv_buf_init((char *)DATA, sizeof DATA - 1),
                            uv_buf_init((char *)p, (unsigned)((nl ? nl : end) - p)),
                            uv_buf_init("\n", 1)};
        conn_write(c, line, 3);
        p = nl ? nl + 1 : end;
    } while (p < end);
    uv_buf_t tail = uv_buf_init("\n\r\n", 3);
    conn_write(c, &tail, 1);
    lua_pushboolean(L, 1);
    return 1;
}

/* http_stream_close(rid) -> true, or false if gone */
static int l_http_stream_close(lua_State *L)
{
    double rid = luaL_checknumber(L, 1);
    conn *c = rid_get(L, rid);
    if (!c || !c->streaming) {
        lua_pushboolean(L, 0);
        return 1;
    }
    uv_buf_t buf = uv_buf_init("0\r\n\r\n", 5);
    conn_write(c, &buf, 1);
    request_done(c);
    lua_pushboolean(L, 1);
    return 1;
}

/* http_close() -- stops accepting; idle connections close, busy ones after their answer */
static int l_http_close(lua_State *L)
{
    (void)L;
    mm_http_close();
    return 0;
}

void mm_http_open(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"http_close", l_http_close},
        {"http_listen", l_http_listen},
        {"http_respond", l_http_respond},
        {"http_stream_open", l_http_stream_open},
        {"http_sse", l_http_sse},
        {"http_stream_close", l_http_stream_close},
        {NULL, NULL},
    };
    luaL_register(L, NULL, fns);
    llhttp_settings_init(&settings);
    settings.on_message_begin = on_message_begin;
    settings.on_url = on_url;
    settings.on_header_field = on_header_field;
    settings.on_header_value = on_header_value;
    settings.on_header_field_complete = on_header_field_complete;
    settings.on_headers_complete = on_headers_complete;
    settings.on_body = on_body;
    settings.on_message_complete = on_message_complete;
}

static void close_idle(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (h->type == UV_TCP && h != (uv_handle_t *)&server && h->data) {
        conn *c = h->data;
        if (!c->rid)
            conn_close(c);
        else
            c->keep_alive = 0; /* close once the answer is out */
    }
}

void mm_http_close(void)
{
    if (!listening) return;
    listening = 0;
    flush_all(); /* answers made so far go out before idle connections close */
    uv_close((uv_handle_t *)&server, NULL);
    uv_walk(mm_loop, close_idle, NULL);
}

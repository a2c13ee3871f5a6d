/*
 * ltcp.c — TCP for handlers and specs: core.tcp_connect, core.tcp_listen and the methods
 * of a socket (moonmcp.tcp is the Lua face).
 *
 * Ownership. A socket is a heap `sock` owning three handles: a heap uv_tcp_t (separate,
 * because a connect that fails is retried on the next address with a fresh handle while
 * the old one closes) and two timers (the reader's and the writer's timeouts). Lua holds a
 * userdata box pointing at the sock; the box is created only once the socket is connected
 * (until then the connect operation owns the sock, and cancelling it releases the sock).
 * release() — sock:close(), the box's __gc, a cancelled connect, a write timeout — closes
 * every handle and detaches the box; the sock is freed after the last close callback.
 * Write and connect requests are separate allocations freed in their callbacks; libuv
 * runs those callbacks (with UV_ECANCELED) before the handle's close callback, so a sock
 * outlives its requests. A getaddrinfo request is freed in its callback; it points at
 * its sock until the sock is released, and at nothing afterwards.
 *
 * Reading. A socket reads continuously into its buffer until it holds HIGH_WATER bytes,
 * and again while a reader waits for more. One reader and one writer may wait at a time
 * (a second raises "busy"); each has its own timer. Reads that cannot be satisfied
 * because the peer closed return nil, "closed", partial — the bytes that were left.
 *
 * Listening. A server owns its uv_tcp_t and a registry reference to its Lua handler; the
 * server is anchored in the registry until closed (a listener must not vanish with a
 * garbage collection). Each accepted connection becomes a sock passed to the handler in a
 * fresh call (mm_sched_spawn).
 *
 * Descriptors: libuv creates and accepts sockets close-on-exec.
 */
#include "sched.h"

#include <lauxlib.h>
#include <math.h>
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOCK_MT "moonmcp.tcp"
#define SERVER_MT "moonmcp.tcp_server"
#define HIGH_WATER 65536
#define READ_CHUNK 65536

enum { R_NONE, R_N, R_LINE, R_ALL, R_SOME };
enum { W_NONE, W_WRITE, W_CONNECT };

typedef struct sock sock;
typedef struct {
    sock *s;
} sbox;

typedef struct {
    uv_getaddrinfo_t req;
    sock *s; /* NULL once the sock no longer waits for it */
} gai_req;

struct sock {
    uv_tcp_t *tcp;
    uv_timer_t rtimer, wtimer;
    int handles;
    int released;
    sbox *box;
    char *buf;
    size_t len, cap;
    int reading, eof, err, connected;
    mm_call *rcall;
    int rkind;
    size_t rn;
    mm_call *wcall;
    int wkind;
    /* connecting */
    gai_req *gai;
    struct addrinfo *ai, *next_ai;
    int last_err;
};

static void on_close(uv_handle_t *h)
{
    sock *s = h->data;
    if ((uv_handle_t *)s->tcp == h) s->tcp = NULL;
    if (h->type == UV_TCP) free(h);
    if (--s->handles == 0 && s->released) {
        free(s->buf);
        free(s);
    }
}

static void close_tcp(sock *s)
{
    if (s->tcp && !uv_is_closing((uv_handle_t *)s->tcp)) uv_close((uv_handle_t *)s->tcp, on_close);
}

static sock *sock_new(void)
{
    sock *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->tcp = malloc(sizeof *s->tcp);
    if (!s->tcp) {
        free(s);
        return NULL;
    }
    uv_tcp_init(mm_loop, s->tcp);
    uv_timer_init(mm_loop, &s->rtimer);
    uv_timer_init(mm_loop, &s->wtimer);
    s->tcp->data = s->rtimer.data = s->wtimer.data = s;
    s->handles = 3;
    return s;
}

static void resume_with(mm_call *c, const char *err)
{
    lua_pushnil(c->co);
    lua_pushstring(c->co, err);
    mm_call_resume(c, 2);
}

/* Closes everything; waiters still parked get nil, "closed". Idempotent. */
static void release(sock *s)
{
    if (s->released) return;
    s->released = 1;
    if (s->box) {
        s->box->s = NULL;
        s->box = NULL;
    }
    if (s->gai) {
        s->gai->s = NULL; /* its callback frees it */
        s->gai = NULL;
    }
    if (s->ai) {
        uv_freeaddrinfo(s->ai);
        s->ai = NULL;
    }
    uv_timer_stop(&s->rtimer);
    uv_timer_stop(&s->wtimer);
    mm_call *r = s->rcall, *w = s->wcall;
    s->rcall = s->wcall = NULL;
    close_tcp(s);
    uv_close((uv_handle_t *)&s->rtimer, on_close);
    uv_close((uv_handle_t *)&s->wtimer, on_close);
    if (r) resume_with(r, "closed");
    if (w) resume_with(w, "closed");
}

/* ---- reading ---- */

static void consume(sock *s, size_t n)
{
    memmove(s->buf, s->buf + n, s->len - n);
    s->len -= n;
}

/* Pushes the reader's results onto co when its read can complete; else returns -1. */
static int satisfy(sock *s, lua_State *co)
{
    const char *b = s->buf ? s->buf : "";
    switch (s->rkind) {
    case R_N:
        if (s->len >= s->rn) {
            lua_pushlstring(co, b, s->rn);
            consume(s, s->rn);
            return 1;
        }
        break;
    case R_LINE: {
        char *nl = s->len ? memchr(s->buf, '\n', s->len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - s->buf), keep = n;
            if (keep > 0 && s->buf[keep - 1] == '\r') keep--;
            lua_pushlstring(co, b, keep);
            consume(s, n + 1);
            return 1;
        }
        break;
    }
    case R_ALL:
        if (s->eof && !s->err) {
            lua_pushlstring(co, b, s->len);
            s->len = 0;
            return 1;
        }
        break;
    case R_SOME:
        if (s->len > 0) {
            lua_pushlstring(co, b, s->len);
            s->len = 0;
            return 1;
        }
        break;
    default:
        return -1;
    }
    if (!s->eof) return -1;
    lua_pushnil(co);
    if (s->err) {
        lua_pushstring(co, uv_strerror(s->err));
        return 2;
    }
    lua_pushliteral(co, "closed");
    if (s->rkind == R_SOME) return 2;
    lua_pushlstring(co, b, s->len);
    s->len = 0;
    return 3;
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    sock *s = h->data;
    if (s->cap - s->len < READ_CHUNK) {
        size_t cap = s->cap ? s->cap * 2 : READ_CHUNK * 2;
        while (cap - s->len < READ_CHUNK)
            cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b) {
            *buf = uv_buf_init(NULL, 0);
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    *buf = uv_buf_init(s->buf + s->len, (unsigned)(s->cap - s->len));
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

/* Reads while below the high-water mark or while a reader waits; stops otherwise. */
static void flow(sock *s)
{
    if (s->released || !s->connected || !s->tcp) return;
    int want = !s->eof && (s->len < HIGH_WATER || s->rcall);
    if (want && !s->reading) {
        if (uv_read_start((uv_stream_t *)s->tcp, alloc_cb, read_cb) == 0) s->reading = 1;
    } else if (!want && s->reading) {
        uv_read_stop((uv_stream_t *)s->tcp);
        s->reading = 0;
    }
}

static void check_reader(sock *s)
{
    if (!s->rcall) return;
    int n = satisfy(s, s->rcall->co);
    if (n < 0) return;
    mm_call *c = s->rcall;
    s->rcall = NULL;
    s->rkind = R_NONE;
    uv_timer_stop(&s->rtimer);
    flow(s);
    mm_call_resume(c, n);
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    sock *s = st->data;
    if (nread > 0) {
        s->len += (size_t)nread;
    } else if (nread < 0) {
        s->eof = 1;
        s->err = nread == UV_EOF ? 0 : (int)nread;
    }
    check_reader(s);
    flow(s);
}

static void cancel_read(void *op)
{
    sock *s = op;
    s->rcall = NULL;
    s->rkind = R_NONE;
    uv_timer_stop(&s->rtimer);
    flow(s);
}

static void on_read_timeout(uv_timer_t *t)
{
    sock *s = t->data;
    mm_call *c = s->rcall;
    if (!c) return;
    s->rcall = NULL;
    s->rkind = R_NONE;
    flow(s);
    resume_with(c, "timeout");
}

static sock *check_sock(lua_State *L)
{
    sbox *b = luaL_checkudata(L, 1, SOCK_MT);
    if (!b->s) luaL_error(L, "tcp: socket is closed");
    return b->s;
}

static double opt_timeout(lua_State *L, int arg)
{
    if (lua_isnoneornil(L, arg)) return -1;
    double t = luaL_checknumber(L, arg);
    luaL_argcheck(L, t >= 0 && isfinite(t), arg, "timeout must be a finite number >= 0");
    return t;
}

static int start_read(lua_State *L, int kind, size_t n, double timeout)
{
    sock *s = check_sock(L);
    if (s->rcall) return luaL_error(L, "tcp: busy (another call is reading this socket)");
    mm_call *c = mm_call_check(L, "tcp read");
    s->rkind = kind;
    s->rn = n;
    int k = satisfy(s, L);
    if (k >= 0) {
        s->rkind = R_NONE;
        flow(s);
        return k;
    }
    s->rcall = c;
    flow(s);
    if (timeout >= 0)
        uv_timer_start(&s->rtimer, on_read_timeout, (uint64_t)llround(timeout * 1000.0), 0);
    return mm_call_park(L, c, cancel_read, s);
}

/* sock:read(n, timeout) -> exactly n bytes | nil, "closed", partial | nil, "timeout" */
static int l_read(lua_State *L)
{
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_argcheck(L, n >= 0, 2, "n must be >= 0");
    return start_read(L, R_N, (size_t)n, opt_timeout(L, 3));
}

/* sock:read_line(timeout) -> line without "\n" (and "\r") | nil, "closed", partial | ... */
static int l_read_line(lua_State *L)
{
    return start_read(L, R_LINE, 0, opt_timeout(L, 2));
}

/* sock:read_all(timeout) -> everything until the peer closes | nil, "timeout" | ... */
static int l_read_all(lua_State *L)
{
    return start_read(L, R_ALL, 0, opt_timeout(L, 2));
}

/* sock:read_some(timeout) -> whatever arrived (at least a byte) | nil, "closed" | ... */
static int l_read_some(lua_State *L)
{
    return start_read(L, R_SOME, 0, opt_timeout(L, 2));
}

/* ---- writing ---- */

typedef struct {
    uv_write_t req;
    sock *s;
    char data[];
} write_req;

static void on_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    sock *s = w->s;
    free(w);
    if (s->wcall && s->wkind == W_WRITE) {
        mm_call *c = s->wcall;
        s->wcall = NULL;
        s->wkind = W_NONE;
        uv_timer_stop(&s->wtimer);
        if (status == 0) {
            lua_pushboolean(c->co, 1);
            mm_call_resume(c, 1);
        } else {
            resume_with(c, uv_strerror(status));
        }
    }
}

static void cancel_write(void *op)
{
    sock *s = op;
    s->wcall = NULL;
    s->wkind = W_NONE;
    uv_timer_stop(&s->wtimer);
}

/* A write cannot be taken back: on timeout the socket is closed. */
static void on_write_timeout(uv_timer_t *t)
{
    sock *s = t->data;
    mm_call *c = s->wcall;
    if (!c) return;
    s->wcall = NULL;
    s->wkind = W_NONE;
    release(s);
    resume_with(c, "timeout");
}

/* sock:write(data, timeout) -> true | nil, message (a timeout closes the socket) */
static int l_write(lua_State *L)
{
    sock *s = check_sock(L);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    double timeout = opt_timeout(L, 3);
    if (s->wcall) return luaL_error(L, "tcp: busy (another call is writing to this socket)");
    mm_call *c = mm_call_check(L, "tcp write");
    write_req *w = malloc(sizeof *w + len);
    if (!w) return luaL_error(L, "tcp: out of memory");
    w->s = s;
    memcpy(w->data, data, len);
    uv_buf_t buf = uv_buf_init(w->data, (unsigned)len);
    int r = uv_write(&w->req, (uv_stream_t *)s->tcp, &buf, 1, on_write);
    if (r != 0) {
        free(w);
        lua_pushnil(L);
        lua_pushstring(L, uv_strerror(r));
        return 2;
    }
    s->wcall = c;
    s->wkind = W_WRITE;
    if (timeout >= 0)
        uv_timer_start(&s->wtimer, on_write_timeout, (uint64_t)llround(timeout * 1000.0), 0);
    return mm_call_park(L, c, cancel_write, s);
}

/* ---- connecting ---- */

static void push_sock(lua_State *L, sock *s)
{
    sbox *b = lua_newuserdata(L, sizeof *b);
    b->s = s;
    s->box = b;
    luaL_getmetatable(L, SOCK_MT);
    lua_setmetatable(L, -2);
}

static void connect_done(sock *s, int status)
{
    mm_call *c = s->wcall;
    s->wcall = NULL;
    s->wkind = W_NONE;
    uv_timer_stop(&s->wtimer);
    if (s->ai) {
        uv_freeaddrinfo(s->ai);
        s->ai = s->next_ai = NULL;
    }
    if (status != 0) {
        release(s);
        resume_with(c, uv_strerror(status));
        return;
    }
    s->connected = 1;
    push_sock(c->co, s);
    flow(s);
    mm_call_resume(c, 1);
}

static int try_next(sock *s);

typedef struct {
    uv_connect_t req;
    sock *s;
} connect_req;

static void on_connect(uv_connect_t *req, int status)
{
    connect_req *cr = (connect_req *)req;
    sock *s = cr->s;
    free(cr);
    if (s->released || s->wkind != W_CONNECT)
        return; /* cancelled or timed out: the handle is closing */
    if (status == 0) {
        connect_done(s, 0);
        return;
    }
    s->last_err = status;
    if (!s->next_ai) {
        connect_done(s, status);
        return;
    }
    /* Next address, with a fresh handle; the failed one closes on its own. */
    close_tcp(s);
    s->tcp = malloc(sizeof *s->tcp);
    if (!s->tcp) {
        connect_done(s, UV_ENOMEM);
        return;
    }
    uv_tcp_init(mm_loop, s->tcp);
    s->tcp->data = s;
    s->handles++;
    int r = try_next(s);
    if (r != 0) connect_done(s, r);
}

/* Starts a connect to s->next_ai (advancing it). Returns 0 or an error (no callback). */
static int try_next(sock *s)
{
    struct addrinfo *a = s->next_ai;
    s->next_ai = a->ai_next;
    connect_req *cr = malloc(sizeof *cr);
    if (!cr) return UV_ENOMEM;
    cr->s = s;
    int r = uv_tcp_connect(&cr->req, s->tcp, a->ai_addr, on_connect);
    if (r != 0) free(cr);
    return r;
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    gai_req *g = (gai_req *)req;
    sock *s = g->s;
    free(g);
    if (!s) {
        uv_freeaddrinfo(res);
        return;
    }
    s->gai = NULL;
    if (status != 0) {
        uv_freeaddrinfo(res);
        connect_done(s, status);
        return;
    }
    s->ai = s->next_ai = res;
    int r = try_next(s);
    while (r != 0 && s->next_ai)
        r = try_next(s);
    if (r != 0) connect_done(s, r);
}

static void cancel_connect(void *op)
{
    sock *s = op;
    s->wcall = NULL;
    s->wkind = W_NONE;
    if (s->gai) /* fails when the lookup already runs; its callback then sees no sock */
        uv_cancel((uv_req_t *)&s->gai->req);
    release(s);
}

static void on_connect_timeout(uv_timer_t *t)
{
    sock *s = t->data;
    mm_call *c = s->wcall;
    if (!c) return;
    s->wcall = NULL;
    s->wkind = W_NONE;
    release(s);
    resume_with(c, "timeout");
}

/* tcp_connect(host, port, timeout) -> sock | nil, message */
static int l_connect(lua_State *L)
{
    const char *host = luaL_checkstring(L, 1);
    lua_Integer port = luaL_checkinteger(L, 2);
    luaL_argcheck(L, port > 0 && port < 65536, 2, "port must be 1..65535");
    double timeout = opt_timeout(L, 3);
    mm_call *c = mm_call_check(L, "tcp.connect");
    char service[8];
    snprintf(service, sizeof service, "%d", (int)port);

    sock *s = sock_new();
    gai_req *g = malloc(sizeof *g);
    if (!s || !g) {
        free(g);
        if (s) {
            s->released = 1;
            close_tcp(s);
            uv_close((uv_handle_t *)&s->rtimer, on_close);
            uv_close((uv_handle_t *)&s->wtimer, on_close);
        }
        return luaL_error(L, "tcp: out of memory");
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    g->s = s;
    int r = uv_getaddrinfo(mm_loop, &g->req, on_resolved, host, service, &hints);
    if (r != 0) {
        free(g);
        release(s);
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", host, uv_strerror(r));
        return 2;
    }
    s->gai = g;
    s->wcall = c;
    s->wkind = W_CONNECT;
    if (timeout >= 0)
        uv_timer_start(&s->wtimer, on_connect_timeout, (uint64_t)llround(timeout * 1000.0), 0);
    return mm_call_park(L, c, cancel_connect, s);
}

/* sock:close() -- closes the connection (twice is fine); parked readers/writers get
 * nil, "closed". */
static int l_close(lua_State *L)
{
    sbox *b = luaL_checkudata(L, 1, SOCK_MT);
    if (b->s) release(b->s);
    return 0;
}

static int l_gc(lua_State *L)
{
    sbox *b = luaL_checkudata(L, 1, SOCK_MT);
    if (b->s) release(b->s);
    return 0;
}

static int push_addr(lua_State *L, const struct sockaddr_storage *ss)
{
    char ip[64];
    int port;
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(a, ip, sizeof ip);
        port = ntohs(a->sin6_port);
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        uv_ip4_name(a, ip, sizeof ip);
        port = ntohs(a->sin_port);
    }
    lua_pushstring(L, ip);
    lua_pushinteger(L, port);
    return 2;
}

/* sock:peer() -> ip, port | nil, message */
static int l_peer(lua_State *L)
{
    sock *s = check_sock(L);
    struct sockaddr_storage ss;
    int n = sizeof ss;
    int r = uv_tcp_getpeername(s->tcp, (struct sockaddr *)&ss, &n);
    if (r != 0) {
        lua_pushnil(L);
        lua_pushstring(L, uv_strerror(r));
        return 2;
    }
    return push_addr(L, &ss);
}

/* ---- listening ---- */

typedef struct {
    uv_tcp_t tcp;
    int handler_ref;
    int self_ref;
    int closed;
} server;

static void server_on_close(uv_handle_t *h)
{
    free(h->data);
}

static void on_connection(uv_stream_t *ls, int status)
{
    server *srv = ls->data;
    if (status != 0 || srv->closed) return;
    sock *s = sock_new();
    if (!s) return;
    if (uv_accept(ls, (uv_stream_t *)s->tcp) != 0) {
        release(s);
        return;
    }
    s->connected = 1;
    flow(s);
    lua_State *L = mm_L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, srv->handler_ref);
    push_sock(L, s);
    mm_sched_spawn(L, 1);
    mm_sched_drain();
}

static server *check_server(lua_State *L)
{
    server **b = luaL_checkudata(L, 1, SERVER_MT);
    if (!*b) luaL_error(L, "tcp: server is closed");
    return *b;
}

/* tcp_listen(host, port, handler) -> server | nil, message
 * host: an IPv4 or IPv6 address ("localhost" means 127.0.0.1); port 0 picks one. */
static int l_listen(lua_State *L)
{
    const char *host = luaL_checkstring(L, 1);
    lua_Integer port = luaL_checkinteger(L, 2);
    luaL_argcheck(L, port >= 0 && port < 65536, 2, "port must be 0..65535");
    luaL_checktype(L, 3, LUA_TFUNCTION);
    if (strcmp(host, "localhost") == 0) host = "127.0.0.1";
    struct sockaddr_storage ss;
    if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)&ss) != 0)
        return luaL_argerror(L, 1, "an IP address is required");
    server **b = lua_newuserdata(L, sizeof *b);
    *b = NULL;
    luaL_getmetatable(L, SERVER_MT);
    lua_setmetatable(L, -2);
    server *srv = calloc(1, sizeof *srv);
    if (!srv) return luaL_error(L, "tcp: out of memory");
    uv_tcp_init(mm_loop, &srv->tcp);
    srv->tcp.data = srv;
    int r = uv_tcp_bind(&srv->tcp, (struct sockaddr *)&ss, 0);
    if (r == 0) r = uv_listen((uv_stream_t *)&srv->tcp, 511, on_connection);
    if (r != 0) {
        uv_close((uv_handle_t *)&srv->tcp, server_on_close);
        lua_pushnil(L);
        lua_pushfstring(L, "%s:%d: %s", host, (int)port, uv_strerror(r));
        return 2;
    }
    lua_pushvalue(L, 3);
    srv->handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -1);
    srv->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    *b = srv;
    return 1;
}

/* server:address() -> ip, port */
static int l_server_address(lua_State *L)
{
    server *srv = check_server(L);
    struct sockaddr_storage ss;
    int n = sizeof ss;
    int r = uv_tcp_getsockname(&srv->tcp, (struct sockaddr *)&ss, &n);
    if (r != 0) return luaL_error(L, "tcp: getsockname: %s", uv_strerror(r));
    return push_addr(L, &ss);
}

/* server:close() -- stops listening (connections already accepted go on) */
static int l_server_close(lua_State *L)
{
    server **b = luaL_checkudata(L, 1, SERVER_MT);
    server *srv = *b;
    if (!srv) return 0;
    *b = NULL;
    srv->closed = 1;
    luaL_unref(L, LUA_REGISTRYINDEX, srv->handler_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, srv->self_ref);
    uv_close((uv_handle_t *)&srv->tcp, server_on_close);
    return 0;
}

void mm_tcp_open(lua_State *L)
{
    static const luaL_Reg sock_methods[] = {
        {"read", l_read},         {"read_line", l_read_line},
        {"read_all", l_read_all}, {"read_some", l_read_some},
        {"write", l_write},       {"close", l_close},
        {"peer", l_peer},         {NULL, NULL},
    };
    static const luaL_Reg server_methods[] = {
        {"address", l_server_address},
        {"close", l_server_close},
        {NULL, NULL},
    };
    luaL_newmetatable(L, SOCK_MT);
    lua_newtable(L);
    luaL_register(L, NULL, sock_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, SERVER_MT);
    lua_newtable(L);
    luaL_register(L, NULL, server_methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_connect);
    lua_setfield(L, -2, "tcp_connect");
    lua_pushcfunction(L, l_listen);
    lua_setfield(L, -2, "tcp_listen");
}

/*
 * lhttp_client.c — the HTTP client for handlers: core.http_request(opts) runs one request
 * with libcurl's multi-socket interface, driven by the libuv loop (moonmcp.http is the
 * Lua face). HTTPS goes through curl and OpenSSL.
 *
 * The driver. One process-wide CURLM and one uv_timer_t. curl tells us which sockets to
 * watch (CURLMOPT_SOCKETFUNCTION): each watched socket gets a heap `poll_ctx` holding a
 * uv_poll_t, attached to the socket with curl_multi_assign and freed in the poll's close
 * callback when curl says CURL_POLL_REMOVE. curl tells us when to call it back
 * (CURLMOPT_TIMERFUNCTION): that is the timer. Readiness and timer expiry call
 * curl_multi_socket_action, then finished transfers are collected (curl_multi_info_read).
 * curl is never re-entered from its own callbacks: those only record or (un)watch.
 *
 * A request is one heap `req`: its easy handle, request headers and body (copied out of
 * Lua), and the response being collected (body, header lines). It belongs to the multi
 * from curl_multi_add_handle until finish() removes it and frees it, which happens exactly
 * once: when curl reports it done (results pushed onto the call, which is resumed), or
 * when the call is cancelled (removed from the multi; nothing is pushed).
 *
 * Idle connections stay in curl's connection cache for reuse; they hold descriptors but
 * no libuv handle. http_close_idle() (and an idle timer, unreferenced so it never keeps
 * the loop alive) drops the whole multi once no request is in flight.
 *
 * Descriptors: curl's sockets are opened close-on-exec (CURLOPT_OPENSOCKETFUNCTION). The
 * threaded resolver's internal socket pair, alive only during a name lookup, is curl's.
 */
#include "sched.h"

#include <curl/curl.h>
#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define IDLE_MS 30000

typedef struct {
    uv_poll_t poll;
    curl_socket_t fd;
} poll_ctx;

typedef struct {
    CURL *easy;
    mm_call *call;
    struct curl_slist *headers;
    char *body_in;
    char *body;
    size_t len, cap, max_body;
    int overflow;
    char *hdr; /* header lines of the last response, "\r\n" separated */
    size_t hlen, hcap;
    char errbuf[CURL_ERROR_SIZE];
} req;

static CURLM *multi;
static uv_timer_t timer, idle_timer;
static int timers_ready;
static int in_flight;
static int driving; /* inside curl_multi_socket_action or collect(): the multi must stay */

static void on_idle(uv_timer_t *t);

/* ---- growable buffers ---- */

static int append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n + 1)
            c *= 2;
        char *b = realloc(*buf, c);
        if (!b) return -1;
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    req *r = ud;
    size_t total = size * n;
    if (r->len + total > r->max_body) {
        r->overflow = 1;
        return 0; /* aborts the transfer (CURLE_WRITE_ERROR) */
    }
    return append(&r->body, &r->len, &r->cap, data, total) == 0 ? total : 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    req *r = ud;
    size_t total = size * n;
    if (total >= 5 && memcmp(data, "HTTP/", 5) == 0)
        r->hlen = 0; /* a new response (redirect, 100 Continue): forget the last one */
    return append(&r->hdr, &r->hlen, &r->hcap, data, total) == 0 ? total : 0;
}

static curl_socket_t open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
    (void)ud;
    (void)purpose;
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* ---- the driver ---- */

static void finish(req *r)
{
    curl_multi_remove_handle(multi, r->easy);
    curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->headers);
    free(r->body_in);
    free(r->body);
    free(r->hdr);
    free(r);
    if (--in_flight == 0) uv_timer_start(&idle_timer, on_idle, IDLE_MS, 0);
}

static void push_headers(lua_State *co, req *r)
{
    lua_newtable(co);
    char *p = r->hdr, *end = r->hdr + r->hlen;
    while (p && p < end) {
        char *eol = memchr(p, '\n', (size_t)(end - p));
        char *next = eol ? eol + 1 : end;
        char *line_end = eol ? eol : end;
        if (line_end > p && line_end[-1] == '\r') line_end--;
        char *colon = memchr(p, ':', (size_t)(line_end - p));
        if (colon && colon > p) {
            for (char *q = p; q < colon; q++)
                if (*q >= 'A' && *q <= 'Z') *q = (char)(*q - 'A' + 'a');
            char *v = colon + 1;
            while (v < line_end && (*v == ' ' || *v == '\t'))
                v++;
            char *ve = line_end;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            lua_pushlstring(co, p, (size_t)(colon - p));
            lua_pushvalue(co, -1);
            lua_rawget(co, -3);
            if (lua_isstring(co, -1)) { /* repeated: join with ", " */
                lua_pushliteral(co, ", ");
                lua_pushlstring(co, v, (size_t)(ve - v));
                lua_concat(co, 3);
            } else {
                lua_pop(co, 1);
                lua_pushlstring(co, v, (size_t)(ve - v));
            }
            lua_rawset(co, -3);
        }
        p = next;
    }
}

static void complete(req *r, CURLcode code)
{
    mm_call *c = r->call;
    lua_State *co = c->co;
    int n;
    if (code == CURLE_OK) {
        long status = 0;
        curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
        lua_createtable(co, 0, 3);
        lua_pushinteger(co, status);
        lua_setfield(co, -2, "status");
        push_headers(co, r);
        lua_setfield(co, -2, "headers");
        lua_pushlstring(co, r->body ? r->body : "", r->len);
        lua_setfield(co, -2, "body");
        n = 1;
    } else {
        lua_pushnil(co);
        if (r->overflow)
            lua_pushfstring(co, "response body exceeds max_body (%d bytes)", (int)r->max_body);
        else if (code == CURLE_OPERATION_TIMEDOUT)
            lua_pushliteral(co, "timeout");
        else
            lua_pushstring(co, r->errbuf[0] ? r->errbuf : curl_easy_strerror(code));
        n = 2;
    }
    finish(r);
    mm_call_resume(c, n);
}

static void collect(void)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE) continue;
        req *r = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        complete(r, m->data.result);
    }
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    poll_ctx *p = h->data;
    int flags = 0;
    if (status < 0) flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    int running;
    driving++;
    curl_multi_socket_action(multi, p->fd, flags, &running);
    collect();
    driving--;
}

static void on_timer(uv_timer_t *t)
{
    (void)t;
    int running;
    driving++;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    collect();
    driving--;
}

static void poll_closed(uv_handle_t *h)
{
    free(h->data);
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *ud, void *socketp)
{
    (void)easy;
    (void)ud;
    poll_ctx *p = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (p) {
            uv_poll_stop(&p->poll);
            uv_close((uv_handle_t *)&p->poll, poll_closed);
            curl_multi_assign(multi, fd, NULL);
        }
        return 0;
    }
    if (!p) {
        p = malloc(sizeof *p);
        if (!p || uv_poll_init_socket(mm_loop, &p->poll, fd) != 0) {
            free(p);
            return -1;
        }
        p->fd = fd;
        p->poll.data = p;
        curl_multi_assign(multi, fd, p);
    }
    int events = 0;
    if (what & CURL_POLL_IN) events |= UV_READABLE;
    if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
    uv_poll_start(&p->poll, events, on_poll);
    return 0;
}

static int on_timer_change(CURLM *m, long ms, void *ud)
{
    (void)m;
    (void)ud;
    if (ms < 0)
        uv_timer_stop(&timer);
    else
        uv_timer_start(&timer, on_timer, (uint64_t)ms, 0);
    return 0;
}

static int ensure_multi(void)
{
    if (multi) return 0;
    if (!timers_ready) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return -1;
        uv_timer_init(mm_loop, &timer);
        uv_timer_init(mm_loop, &idle_timer);
        uv_unref((uv_handle_t *)&idle_timer);
        timers_ready = 1;
    }
    multi = curl_multi_init();
    if (!multi) return -1;
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer_change);
    return 0;
}

/* Drops the multi (and with it every idle cached connection) when nothing is in flight. */
static void close_idle(void)
{
    if (!multi || in_flight > 0 || driving) return;
    curl_multi_cleanup(multi);
    multi = NULL;
    uv_timer_stop(&timer);
    uv_timer_stop(&idle_timer);
}

static void on_idle(uv_timer_t *t)
{
    (void)t;
    close_idle();
}

static void cancel_request(void *op)
{
    finish(op);
}

/* ---- Lua ---- */

static const char *opt_string(lua_State *L, const char *field)
{
    lua_getfield(L, 1, field);
    const char *s = NULL;
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "http: %s must be a string", field);
        s = lua_tostring(L, -1);
    }
    lua_pop(L, 1); /* the string stays referenced by the options table */
    return s;
}

static double opt_number(lua_State *L, const char *field, double def)
{
    lua_getfield(L, 1, field);
    double v = def;
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TNUMBER) luaL_error(L, "http: %s must be a number", field);
        v = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

static int opt_bool(lua_State *L, const char *field, int def)
{
    lua_getfield(L, 1, field);
    int v = lua_isnil(L, -1) ? def : lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

/* http_request{ url, method, headers = { "Name: value", ... }, body, timeout,
 *               follow_redirects, max_redirects, insecure, cainfo, max_body }
 *   -> { status, headers, body } | nil, message */
static int l_request(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *url = opt_string(L, "url");
    if (!url) return luaL_error(L, "http: url is required");
    const char *method = opt_string(L, "method");
    const char *cainfo = opt_string(L, "cainfo");
    lua_getfield(L, 1, "body");
    size_t body_len = 0;
    const char *body = NULL;
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "http: body must be a string");
        body = lua_tolstring(L, -1, &body_len);
    }
    lua_pop(L, 1);
    double timeout = opt_number(L, "timeout", 0);
    double max_redirects = opt_number(L, "max_redirects", 10);
    double max_body = opt_number(L, "max_body", 64.0 * 1024 * 1024);
    int follow = opt_bool(L, "follow_redirects", 1);
    int insecure = opt_bool(L, "insecure", 0);
    if (!(timeout >= 0 && isfinite(timeout)) || !(max_redirects >= 0) || !(max_body >= 0))
        return luaL_error(L, "http: timeout, max_redirects and max_body must be >= 0");
    lua_getfield(L, 1, "headers");
    int has_headers = lua_istable(L, -1);
    if (!has_headers && !lua_isnil(L, -1))
        return luaL_error(L, "http: headers must be a list of \"Name: value\" strings");
    int nheaders = has_headers ? (int)lua_objlen(L, -1) : 0;
    for (int i = 1; i <= nheaders; i++) {
        lua_rawgeti(L, -1, i);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "http: headers must be a list of \"Name: value\" strings");
        lua_pop(L, 1);
    }
    mm_call *c = mm_call_check(L, "http.request");

    if (ensure_multi() != 0) return luaL_error(L, "http: cannot initialize libcurl");
    req *r = calloc(1, sizeof *r);
    if (!r || !(r->easy = curl_easy_init())) {
        free(r);
        return luaL_error(L, "http: out of memory");
    }
    int oom = 0;
    for (int i = 1; i <= nheaders; i++) {
        lua_rawgeti(L, -1, i);
        struct curl_slist *h = curl_slist_append(r->headers, lua_tostring(L, -1));
        lua_pop(L, 1);
        if (!h) {
            oom = 1;
            break;
        }
        r->headers = h;
    }
    lua_pop(L, 1); /* headers */
    if (body && !oom) {
        r->body_in = malloc(body_len ? body_len : 1);
        if (r->body_in)
            memcpy(r->body_in, body, body_len);
        else
            oom = 1;
    }
    if (oom) {
        curl_slist_free_all(r->headers);
        curl_easy_cleanup(r->easy);
        free(r->body_in);
        free(r);
        return luaL_error(L, "http: out of memory");
    }
    r->call = c;
    r->max_body = (size_t)max_body;
    CURL *e = r->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, follow ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, (long)max_redirects);
    if (timeout > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)llround(timeout * 1000.0));
    if (insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (cainfo) curl_easy_setopt(e, CURLOPT_CAINFO, cainfo);
    if (r->headers) curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
    if (body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body_in);
    }
    if (method) {
        if (strcmp(method, "HEAD") == 0)
            curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
        else if (strcmp(method, "GET") == 0 && !body)
            curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
        else
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    }
    CURLMcode mc = curl_multi_add_handle(multi, e);
    if (mc != CURLM_OK) {
        curl_slist_free_all(r->headers);
        curl_easy_cleanup(e);
        free(r->body_in);
        free(r);
        lua_pushnil(L);
        lua_pushstring(L, curl_multi_strerror(mc));
        return 2;
    }
    in_flight++;
    uv_timer_stop(&idle_timer);
    return mm_call_park(L, c, cancel_request, r);
}

/* http_close_idle() -- closes curl's idle cached connections (when nothing is in flight) */
static int l_close_idle(lua_State *L)
{
    (void)L;
    close_idle();
    return 0;
}

void mm_http_client_open(lua_State *L)
{
    lua_pushcfunction(L, l_request);
    lua_setfield(L, -2, "http_request");
    lua_pushcfunction(L, l_close_idle);
    lua_setfield(L, -2, "http_close_idle");
}

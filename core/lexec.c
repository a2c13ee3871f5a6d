/*
 * lexec.c — child processes for handlers and specs: core.exec_spawn and the methods of a
 * process object (moonmcp.exec is the Lua face: exec.run, exec.spawn).
 *
 * Ownership. A process is a heap `proc` that owns up to six libuv handles: the process
 * handle, the stdin/stdout/stderr pipes (when piped) and five timers (the timeouts of
 * the four waiter slots, and the SIGTERM -> SIGKILL grace). Lua holds a small userdata box pointing
 * at the proc. The owner releases the proc exactly once — proc:close(), the box's __gc, or the
 * cancellation of a call that runs it with exec.run — and release kills a child that is
 * still running (SIGKILL) and closes every handle but the process handle. The process
 * handle is closed only from the exit callback, so a child is always reaped (closing it
 * earlier would leave a zombie). The proc is freed when it was released and the last of
 * its handles ran its close callback. Release detaches the box, so a box never points at
 * freed memory; a box whose proc was released makes every method raise.
 *
 * Streams. stdout and stderr are read as soon as the child starts, into one buffer each.
 * A stream whose buffer holds more than HIGH_WATER bytes stops reading until a reader
 * consumes it (the child then blocks on its writes), except in collect mode (exec.run),
 * which reads everything up to max_output. A pipe is closed as soon as it reports EOF or
 * an error, which frees its descriptor early.
 *
 * Waiting. A proc has four waiter slots — a stdout line, a stderr line, the exit (or, in
 * collect mode, the end of everything) and a write — so one call may read stderr while
 * another waits for the exit; a second call on a busy slot raises "busy". check() runs
 * after every event and resumes each waiter whose condition holds. A waiter's optional
 * timeout is its slot's timer, stopped whenever the waiter goes. Cancelling a waiting call
 * clears its slot; when the call was collecting (exec.run) it also releases the proc,
 * which kills the child. Releasing a proc resumes its remaining waiters with nil, "closed".
 *
 * Descriptors: libuv creates the pipes and the exec-error pipe close-on-exec; we open no
 * other descriptor here.
 */
#include "sched.h"

#include <lauxlib.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PROC_MT "moonmcp.proc"
#define HIGH_WATER (1u << 20)
#define READ_CHUNK 65536

enum { W_NONE, W_LINE, W_EXIT, W_WRITE, W_COLLECT };
enum { SLOT_OUT, SLOT_ERR, SLOT_EXIT, SLOT_WRITE, NSLOTS };
enum { IN_NONE, IN_OPEN, IN_SHUT, IN_CLOSED };

typedef struct proc proc;

typedef struct {
    uv_pipe_t pipe;
    proc *owner;
    char *buf;
    size_t len, cap;
    int open;    /* initialized and not yet closed */
    int reading; /* uv_read_start is in effect */
    int eof;     /* EOF or error seen; no more data */
    int err;     /* the read error (negative), 0 at a clean EOF */
} stream;

typedef struct {
    proc *p;
} box;

typedef struct {
    uv_timer_t timer; /* the timeout */
    proc *p;
    mm_call *call; /* NULL when nobody waits */
    int kind;
} waiter;

struct proc {
    uv_process_t process;
    uv_pipe_t in;
    stream s[2];
    waiter w[NSLOTS];
    uv_timer_t kill_timer; /* SIGTERM -> SIGKILL grace in collect mode */
    int handles;           /* handles initialized and not yet closed */
    int released;
    box *box;
    int pid;
    int exited;
    int64_t status;
    int termsig;
    int in_state;
    /* collect mode */
    int collecting;
    int timed_out;
    int overflow;
    double grace;
    size_t max_output;
};

/* ---- signal names ---- */

static const struct {
    const char *name;
    int num;
} SIGNALS[] = {
    {"SIGHUP", SIGHUP},   {"SIGINT", SIGINT},   {"SIGQUIT", SIGQUIT}, {"SIGILL", SIGILL},
    {"SIGTRAP", SIGTRAP}, {"SIGABRT", SIGABRT}, {"SIGBUS", SIGBUS},   {"SIGFPE", SIGFPE},
    {"SIGKILL", SIGKILL}, {"SIGUSR1", SIGUSR1}, {"SIGSEGV", SIGSEGV}, {"SIGUSR2", SIGUSR2},
    {"SIGPIPE", SIGPIPE}, {"SIGALRM", SIGALRM}, {"SIGTERM", SIGTERM}, {"SIGCHLD", SIGCHLD},
    {"SIGCONT", SIGCONT}, {"SIGSTOP", SIGSTOP}, {"SIGTSTP", SIGTSTP}, {"SIGTTIN", SIGTTIN},
    {"SIGTTOU", SIGTTOU}, {"SIGXCPU", SIGXCPU}, {"SIGXFSZ", SIGXFSZ}, {"SIGSYS", SIGSYS},
};

static const char *signal_name(int num)
{
    for (size_t i = 0; i < sizeof SIGNALS / sizeof SIGNALS[0]; i++)
        if (SIGNALS[i].num == num) return SIGNALS[i].name;
    return NULL;
}

/* Accepts a number, "TERM" or "SIGTERM"; raises on anything else. */
static int check_signal(lua_State *L, int arg)
{
    if (lua_type(L, arg) == LUA_TNUMBER) {
        int n = (int)lua_tointeger(L, arg);
        luaL_argcheck(L, n >= 0 && n < 65, arg, "bad signal number");
        return n;
    }
    const char *s = luaL_optstring(L, arg, "SIGTERM");
    for (size_t i = 0; i < sizeof SIGNALS / sizeof SIGNALS[0]; i++)
        if (strcmp(SIGNALS[i].name, s) == 0 || strcmp(SIGNALS[i].name + 3, s) == 0)
            return SIGNALS[i].num;
    return luaL_argerror(L, arg, lua_pushfstring(L, "unknown signal %s", s));
}

/* ---- lifetime ---- */

static void closed(proc *p)
{
    if (--p->handles == 0 && p->released) {
        free(p->s[0].buf);
        free(p->s[1].buf);
        free(p);
    }
}

static void on_close(uv_handle_t *h)
{
    closed(h->data);
}

static void on_timer_close(uv_handle_t *h) /* a waiter's timer points at its waiter */
{
    closed(((waiter *)h->data)->p);
}

static void close_handle(proc *p, uv_handle_t *h)
{
    (void)p;
    if (!uv_is_closing(h)) uv_close(h, on_close);
}

static void close_stream(stream *st)
{
    if (st->open) {
        st->open = 0;
        st->reading = 0;
        close_handle(st->owner, (uv_handle_t *)&st->pipe);
    }
}

static void close_in(proc *p)
{
    if (p->in_state == IN_OPEN || p->in_state == IN_SHUT) {
        p->in_state = IN_CLOSED;
        close_handle(p, (uv_handle_t *)&p->in);
    }
}

static void clear_waiter(waiter *w)
{
    w->call = NULL;
    w->kind = W_NONE;
    uv_timer_stop(&w->timer);
}

/* The owner is done with p: kill a running child, close every handle but the process
 * handle (closed by the exit callback). Idempotent. */
static void release(proc *p)
{
    if (p->released) return;
    p->released = 1;
    if (p->box) {
        p->box->p = NULL;
        p->box = NULL;
    }
    mm_call *parked[NSLOTS];
    for (int i = 0; i < NSLOTS; i++) {
        parked[i] = p->w[i].call;
        clear_waiter(&p->w[i]);
        uv_close((uv_handle_t *)&p->w[i].timer, on_timer_close);
    }
    if (!p->exited) uv_process_kill(&p->process, SIGKILL);
    close_in(p);
    close_stream(&p->s[0]);
    close_stream(&p->s[1]);
    close_handle(p, (uv_handle_t *)&p->kill_timer);
    for (int i = 0; i < NSLOTS; i++) {
        if (parked[i]) {
            lua_pushnil(parked[i]->co);
            lua_pushliteral(parked[i]->co, "closed");
            mm_call_resume(parked[i], 2);
        }
    }
}

/* ---- the waiter ---- */

static int exit_code(proc *p)
{
    return p->termsig ? 128 + p->termsig : (int)p->status;
}

static int push_stream_error(lua_State *co, stream *st)
{
    lua_pushnil(co);
    if (st->err) {
        lua_pushstring(co, uv_strerror(st->err));
        return 2;
    }
    lua_pushliteral(co, "closed");
    lua_pushlstring(co, st->buf ? st->buf : "", st->len);
    st->len = 0;
    return 3;
}

static void consume(stream *st, size_t n);

/* Pushes the waiter's results onto co when its condition holds; returns the number of
 * results, or -1 (nothing pushed) when it must keep waiting. */
static int satisfy(proc *p, int slot, lua_State *co)
{
    switch (p->w[slot].kind) {
    case W_LINE: {
        stream *st = &p->s[slot];
        char *nl = st->len ? memchr(st->buf, '\n', st->len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - st->buf);
            size_t keep = n;
            if (keep > 0 && st->buf[keep - 1] == '\r') keep--;
            lua_pushlstring(co, st->buf, keep);
            consume(st, n + 1);
            return 1;
        }
        if (st->eof) return push_stream_error(co, st);
        return -1;
    }
    case W_EXIT:
        if (!p->exited) return -1;
        lua_pushinteger(co, exit_code(p));
        if (p->termsig && signal_name(p->termsig))
            lua_pushstring(co, signal_name(p->termsig));
        else
            lua_pushnil(co);
        return 2;
    case W_COLLECT:
        if (!p->exited || (!p->timed_out && !p->overflow && (!p->s[0].eof || !p->s[1].eof)))
            return -1;
        if (p->overflow) {
            lua_pushnil(co);
            lua_pushfstring(co, "output exceeds max_output (%d bytes)", (int)p->max_output);
            return 2;
        }
        lua_createtable(co, 0, 5);
        lua_pushinteger(co, exit_code(p));
        lua_setfield(co, -2, "code");
        if (p->termsig && signal_name(p->termsig)) {
            lua_pushstring(co, signal_name(p->termsig));
            lua_setfield(co, -2, "signal");
        }
        lua_pushlstring(co, p->s[0].buf ? p->s[0].buf : "", p->s[0].len);
        lua_setfield(co, -2, "stdout");
        lua_pushlstring(co, p->s[1].buf ? p->s[1].buf : "", p->s[1].len);
        lua_setfield(co, -2, "stderr");
        if (p->timed_out) {
            lua_pushboolean(co, 1);
            lua_setfield(co, -2, "timed_out");
        }
        return 1;
    default:
        return -1;
    }
}

static void check(proc *p)
{
    for (int i = 0; i < NSLOTS; i++) {
        waiter *w = &p->w[i];
        if (!w->call || w->kind == W_WRITE) continue;
        int n = satisfy(p, i, w->call->co);
        if (n < 0) continue;
        mm_call *c = w->call;
        clear_waiter(w);
        mm_call_resume(c, n);
    }
}

static void cancel_wait(void *op)
{
    waiter *w = op;
    int collecting = w->kind == W_COLLECT;
    clear_waiter(w);
    if (collecting) release(w->p);
}

static void on_wait_timeout(uv_timer_t *t)
{
    waiter *w = t->data;
    mm_call *c = w->call;
    if (!c) return;
    clear_waiter(w);
    lua_pushnil(c->co);
    lua_pushliteral(c->co, "timeout");
    mm_call_resume(c, 2);
}

static void on_kill_timer(uv_timer_t *t)
{
    proc *p = t->data;
    if (!p->exited) uv_process_kill(&p->process, SIGKILL);
}

static void on_collect_timeout(uv_timer_t *t)
{
    proc *p = ((waiter *)t->data)->p;
    p->timed_out = 1;
    if (!p->exited) {
        uv_process_kill(&p->process, SIGTERM);
        uv_timer_start(&p->kill_timer, on_kill_timer, (uint64_t)llround(p->grace * 1000.0), 0);
    }
    check(p);
}

/* Parks c on the slot, or returns the results at once when they are there already. */
static int start_wait(lua_State *L, proc *p, int slot, mm_call *c, int kind, double timeout,
                      uv_timer_cb on_timeout)
{
    waiter *w = &p->w[slot];
    w->kind = kind;
    int n = satisfy(p, slot, L);
    if (n >= 0) {
        w->kind = W_NONE;
        return n;
    }
    w->call = c;
    if (timeout >= 0) uv_timer_start(&w->timer, on_timeout, (uint64_t)llround(timeout * 1000.0), 0);
    return mm_call_park(L, c, cancel_wait, w);
}

/* ---- streams ---- */

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    stream *st = (stream *)((char *)h - offsetof(stream, pipe));
    if (st->cap - st->len < READ_CHUNK) {
        size_t cap = st->cap ? st->cap * 2 : READ_CHUNK * 2;
        while (cap - st->len < READ_CHUNK)
            cap *= 2;
        char *b = realloc(st->buf, cap);
        if (!b) {
            *buf = uv_buf_init(NULL, 0); /* libuv reports UV_ENOBUFS */
            return;
        }
        st->buf = b;
        st->cap = cap;
    }
    *buf = uv_buf_init(st->buf + st->len, (unsigned)(st->cap - st->len));
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    stream *st = (stream *)((char *)s - offsetof(stream, pipe));
    proc *p = st->owner;
    if (nread > 0) {
        st->len += (size_t)nread;
        if (p->collecting && st->len > p->max_output) {
            p->overflow = 1;
            if (!p->exited) uv_process_kill(&p->process, SIGKILL);
            close_stream(st);
        } else if (!p->collecting && st->len > HIGH_WATER) {
            uv_read_stop(s);
            st->reading = 0;
        }
    } else if (nread < 0) {
        st->eof = 1;
        st->err = nread == UV_EOF ? 0 : (int)nread;
        close_stream(st);
    }
    check(p);
}

static void consume(stream *st, size_t n)
{
    memmove(st->buf, st->buf + n, st->len - n);
    st->len -= n;
    if (st->open && !st->reading && st->len < HIGH_WATER) {
        if (uv_read_start((uv_stream_t *)&st->pipe, alloc_cb, read_cb) == 0) st->reading = 1;
    }
}

/* ---- process ---- */

static void on_child_exit(uv_process_t *h, int64_t status, int termsig)
{
    proc *p = h->data;
    p->exited = 1;
    p->status = status;
    p->termsig = termsig;
    uv_timer_stop(&p->kill_timer);
    uv_close((uv_handle_t *)h, on_close);
    check(p);
}

static proc *check_proc(lua_State *L)
{
    box *b = luaL_checkudata(L, 1, PROC_MT);
    if (!b->p) luaL_error(L, "process: already closed");
    return b->p;
}

static void check_idle(lua_State *L, proc *p, int slot)
{
    if (p->w[slot].call) luaL_error(L, "process: busy (another call is waiting on it)");
}

/* optional timeout argument: -1 for none */
static double opt_timeout(lua_State *L, int arg)
{
    if (lua_isnoneornil(L, arg)) return -1;
    double t = luaL_checknumber(L, arg);
    luaL_argcheck(L, t >= 0 && isfinite(t), arg, "timeout must be a finite number >= 0");
    return t;
}

static int stdio_mode(lua_State *L, int arg)
{
    static const char *const modes[] = {"pipe", "inherit", "null", NULL};
    return luaL_checkoption(L, arg, "pipe", modes);
}

/* exec_spawn(argv, env|nil, cwd|nil, stdin_mode, stdout_mode, stderr_mode)
 *   -> proc, pid | nil, message
 * argv: a list of strings (argv[1] is the program, looked up in PATH); env: a list of
 * "NAME=value" strings replacing the environment; modes: "pipe" | "inherit" | "null". */
static int l_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int argc = (int)lua_objlen(L, 1);
    luaL_argcheck(L, argc >= 1, 1, "argv must list at least the program");
    for (int i = 1; i <= argc; i++) {
        lua_rawgeti(L, 1, i);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 1, "argv must be a list of strings");
        lua_pop(L, 1);
    }
    int envc = -1;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        envc = (int)lua_objlen(L, 2);
        for (int i = 1; i <= envc; i++) {
            lua_rawgeti(L, 2, i);
            if (lua_type(L, -1) != LUA_TSTRING)
                return luaL_argerror(L, 2, "env must be a list of NAME=value strings");
            lua_pop(L, 1);
        }
    }
    const char *cwd = luaL_optstring(L, 3, NULL);
    int modes[3] = {stdio_mode(L, 4), stdio_mode(L, 5), stdio_mode(L, 6)};

    /* Strings stay referenced by the argument tables for the duration of uv_spawn. */
    const char **argv = calloc((size_t)argc + 1, sizeof *argv);
    const char **envp = envc >= 0 ? calloc((size_t)envc + 1, sizeof *envp) : NULL;
    proc *p = calloc(1, sizeof *p);
    box *b = lua_newuserdata(L, sizeof *b); /* may raise: allocate before anything opens */
    b->p = NULL;
    luaL_getmetatable(L, PROC_MT);
    lua_setmetatable(L, -2);
    if (!argv || !p || (envc >= 0 && !envp)) {
        free(argv);
        free(envp);
        free(p);
        return luaL_error(L, "exec: out of memory");
    }
    for (int i = 0; i < argc; i++) {
        lua_rawgeti(L, 1, i + 1);
        argv[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    for (int i = 0; i < envc; i++) {
        lua_rawgeti(L, 2, i + 1);
        envp[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }

    uv_stdio_container_t stdio[3];
    uv_pipe_t *pipes[3] = {&p->in, &p->s[0].pipe, &p->s[1].pipe};
    for (int i = 0; i < 3; i++) {
        if (modes[i] == 0) {
            uv_pipe_init(mm_loop, pipes[i], 0);
            pipes[i]->data = p;
            p->handles++;
            stdio[i].flags = UV_CREATE_PIPE | (i == 0 ? UV_READABLE_PIPE : UV_WRITABLE_PIPE);
            stdio[i].data.stream = (uv_stream_t *)pipes[i];
        } else if (modes[i] == 1) {
            stdio[i].flags = UV_INHERIT_FD;
            stdio[i].data.fd = i;
        } else {
            stdio[i].flags = UV_IGNORE;
        }
    }
    p->in_state = modes[0] == 0 ? IN_OPEN : IN_NONE;
    for (int i = 0; i < 2; i++) {
        p->s[i].owner = p;
        p->s[i].open = modes[i + 1] == 0;
        p->s[i].eof = !p->s[i].open;
    }
    for (int i = 0; i < NSLOTS; i++) {
        uv_timer_init(mm_loop, &p->w[i].timer);
        p->w[i].timer.data = &p->w[i];
        p->w[i].p = p;
    }
    uv_timer_init(mm_loop, &p->kill_timer);
    p->kill_timer.data = p->process.data = p;
    p->handles += NSLOTS + 2; /* the timers and the process handle */

    uv_process_options_t opts;
    memset(&opts, 0, sizeof opts);
    opts.exit_cb = on_child_exit;
    opts.file = argv[0];
    opts.args = (char **)argv;
    opts.env = (char **)envp;
    opts.cwd = cwd;
    opts.stdio_count = 3;
    opts.stdio = stdio;
    int r = uv_spawn(mm_loop, &p->process, &opts);
    p->process.data = p;
    free(argv);
    free(envp);
    if (r != 0) {
        /* No exit callback will come: close everything, the process handle included. */
        p->exited = 1;
        release(p);
        uv_close((uv_handle_t *)&p->process, on_close);
        lua_pushnil(L);
        lua_rawgeti(L, 1, 1);
        lua_pushfstring(L, "%s: %s", lua_tostring(L, -1), uv_strerror(r));
        lua_remove(L, -2);
        return 2;
    }
    p->pid = p->process.pid;
    for (int i = 0; i < 2; i++) {
        if (p->s[i].open && uv_read_start((uv_stream_t *)&p->s[i].pipe, alloc_cb, read_cb) == 0)
            p->s[i].reading = 1;
    }
    b->p = p;
    p->box = b;
    lua_pushinteger(L, p->pid);
    return 2;
}

/* proc:read_line(stream, timeout) -> line | nil, "closed", partial | nil, "timeout" |
 * nil, message.  stream: 1 = stdout, 2 = stderr */
static int l_read_line(lua_State *L)
{
    proc *p = check_proc(L);
    int which = (int)luaL_checkinteger(L, 2);
    luaL_argcheck(L, which == 1 || which == 2, 2, "stream must be 1 (stdout) or 2 (stderr)");
    double timeout = opt_timeout(L, 3);
    check_idle(L, p, which - 1);
    mm_call *c = mm_call_check(L, "process:read_line");
    return start_wait(L, p, which - 1, c, W_LINE, timeout, on_wait_timeout);
}

/* proc:wait(timeout) -> code, signal|nil | nil, "timeout" */
static int l_wait(lua_State *L)
{
    proc *p = check_proc(L);
    double timeout = opt_timeout(L, 2);
    check_idle(L, p, SLOT_EXIT);
    mm_call *c = mm_call_check(L, "process:wait");
    return start_wait(L, p, SLOT_EXIT, c, W_EXIT, timeout, on_wait_timeout);
}

/* proc:collect(stdin|nil, timeout|nil, grace, max_output) -> result | nil, message
 * exec.run's wait: feeds stdin, then waits for the exit and the end of both outputs. On
 * timeout: SIGTERM, SIGKILL after grace seconds, result.timed_out. Cancelling the waiting
 * call releases the process (kills the child). */
typedef struct {
    uv_write_t req;
    proc *p;
    size_t len;
    char data[];
} write_req;

static void on_write(uv_write_t *req, int status);
static void on_shutdown(uv_shutdown_t *req, int status);

static int write_data(proc *p, const char *s, size_t len)
{
    write_req *w = malloc(sizeof *w + len);
    if (!w) return UV_ENOMEM;
    w->p = p;
    w->len = len;
    memcpy(w->data, s, len);
    uv_buf_t buf = uv_buf_init(w->data, (unsigned)len);
    int r = uv_write(&w->req, (uv_stream_t *)&p->in, &buf, 1, on_write);
    if (r != 0) free(w);
    return r;
}

static int shutdown_in(proc *p)
{
    if (p->in_state != IN_OPEN) return 0;
    uv_shutdown_t *req = malloc(sizeof *req);
    if (!req) return UV_ENOMEM;
    req->data = p;
    int r = uv_shutdown(req, (uv_stream_t *)&p->in, on_shutdown);
    if (r != 0) {
        free(req);
        close_in(p);
        return r;
    }
    p->in_state = IN_SHUT;
    return 0;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    proc *p = req->data;
    free(req);
    close_in(p);
}

static void on_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    proc *p = w->p;
    free(w);
    waiter *wt = &p->w[SLOT_WRITE];
    if (wt->call && wt->kind == W_WRITE) {
        mm_call *c = wt->call;
        clear_waiter(wt);
        if (status == 0) {
            lua_pushboolean(c->co, 1);
            mm_call_resume(c, 1);
        } else {
            lua_pushnil(c->co);
            lua_pushstring(c->co, uv_strerror(status));
            mm_call_resume(c, 2);
        }
    }
}

static int l_collect(lua_State *L)
{
    proc *p = check_proc(L);
    size_t len = 0;
    const char *data = luaL_optlstring(L, 2, NULL, &len);
    double timeout = opt_timeout(L, 3);
    double grace = luaL_checknumber(L, 4);
    luaL_argcheck(L, grace >= 0 && isfinite(grace), 4, "grace must be >= 0");
    double max = luaL_checknumber(L, 5);
    luaL_argcheck(L, max >= 0, 5, "max_output must be >= 0");
    check_idle(L, p, SLOT_EXIT);
    mm_call *c = mm_call_check(L, "exec.run");
    p->collecting = 1;
    p->grace = grace;
    p->max_output = max > (double)SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)max;
    for (int i = 0; i < 2; i++) /* collect mode reads past the high-water mark */
        if (p->s[i].open && !p->s[i].reading &&
            uv_read_start((uv_stream_t *)&p->s[i].pipe, alloc_cb, read_cb) == 0)
            p->s[i].reading = 1;
    if (p->in_state == IN_OPEN) {
        if (data && len > 0)
            write_data(p, data, len); /* failures (EPIPE) are the child's business */
        shutdown_in(p);
    }
    return start_wait(L, p, SLOT_EXIT, c, W_COLLECT, timeout, on_collect_timeout);
}

/* proc:write(data) -> true | nil, message (waits until the data was handed to the pipe) */
static int l_write(lua_State *L)
{
    proc *p = check_proc(L);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    check_idle(L, p, SLOT_WRITE);
    mm_call *c = mm_call_check(L, "process:write");
    if (p->in_state != IN_OPEN) {
        lua_pushnil(L);
        lua_pushliteral(L, "stdin is closed");
        return 2;
    }
    int r = write_data(p, data, len);
    if (r != 0) {
        lua_pushnil(L);
        lua_pushstring(L, uv_strerror(r));
        return 2;
    }
    p->w[SLOT_WRITE].call = c;
    p->w[SLOT_WRITE].kind = W_WRITE;
    return mm_call_park(L, c, cancel_wait, &p->w[SLOT_WRITE]);
}

/* proc:close_stdin() -- the child reads EOF once the pending writes went out */
static int l_close_stdin(lua_State *L)
{
    proc *p = check_proc(L);
    shutdown_in(p);
    return 0;
}

/* proc:kill(signal) -> true | nil, message  (signal: number or name, default SIGTERM) */
static int l_kill(lua_State *L)
{
    proc *p = check_proc(L);
    int sig = check_signal(L, 2);
    if (p->exited) {
        lua_pushnil(L);
        lua_pushliteral(L, "process has exited");
        return 2;
    }
    int r = uv_process_kill(&p->process, sig);
    if (r != 0) {
        lua_pushnil(L);
        lua_pushstring(L, uv_strerror(r));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* proc:pid() -> number */
static int l_pid(lua_State *L)
{
    proc *p = check_proc(L);
    lua_pushinteger(L, p->pid);
    return 1;
}

/* proc:exited() -> code, signal|nil once it exited, or nil */
static int l_status(lua_State *L)
{
    proc *p = check_proc(L);
    if (!p->exited) return 0;
    lua_pushinteger(L, exit_code(p));
    if (p->termsig && signal_name(p->termsig))
        lua_pushstring(L, signal_name(p->termsig));
    else
        lua_pushnil(L);
    return 2;
}

/* proc:close() -- kills the child if it still runs (SIGKILL), closes the pipes; calls
 * waiting on the process get nil, "closed". Closing twice is fine. */
static int l_close(lua_State *L)
{
    box *b = luaL_checkudata(L, 1, PROC_MT);
    if (b->p) release(b->p);
    return 0;
}

static int l_gc(lua_State *L)
{
    box *b = luaL_checkudata(L, 1, PROC_MT);
    if (b->p) release(b->p); /* a waiting call keeps the box alive, so nobody waits here */
    return 0;
}

/* exec_environ() -> { "NAME=value", ... }: the host's environment */
static int l_environ(lua_State *L)
{
    uv_env_item_t *items;
    int n;
    int r = uv_os_environ(&items, &n);
    if (r != 0) return luaL_error(L, "exec: cannot read the environment: %s", uv_strerror(r));
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushfstring(L, "%s=%s", items[i].name, items[i].value);
        lua_rawseti(L, -2, i + 1);
    }
    uv_os_free_environ(items, n);
    return 1;
}

void mm_exec_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"read_line", l_read_line},
        {"wait", l_wait},
        {"collect", l_collect},
        {"write", l_write},
        {"close_stdin", l_close_stdin},
        {"kill", l_kill},
        {"pid", l_pid},
        {"status", l_status},
        {"close", l_close},
        {NULL, NULL},
    };
    luaL_newmetatable(L, PROC_MT);
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_spawn);
    lua_setfield(L, -2, "exec_spawn");
    lua_pushcfunction(L, l_environ);
    lua_setfield(L, -2, "exec_environ");
}

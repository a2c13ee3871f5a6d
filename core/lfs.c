/*
 * lfs.c — files for handlers: core.fs(op, ...) runs one file-system operation on libuv's
 * thread pool and parks the calling call until it is done (moonmcp.fs is the Lua face).
 *
 * An operation is one heap `fs_op`: its inputs (paths and data copied out of Lua, which
 * the worker thread never touches), the blocking routine that runs on the thread pool
 * (plain POSIX calls, so a multi-step operation — read a whole file, create parents,
 * remove a tree — is one piece of work), and its results. after_work runs on the loop
 * thread and is the only place an op is freed, whichever way it ended:
 *   - done: push the results onto the call and resume it;
 *   - cancelled while still queued: uv_cancel succeeded and after_work sees UV_ECANCELED;
 *   - cancelled while running: the worker cannot be stopped, so the op is only detached
 *     from its call (op->call = NULL) and after_work discards the results.
 *
 * Descriptors: every descriptor the workers open is close-on-exec (O_CLOEXEC; glibc's
 * opendir/fdopendir use O_CLOEXEC too), and each is closed before the work returns.
 */
#define _GNU_SOURCE
#include "sched.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OP_READ, OP_WRITE, OP_APPEND, OP_STAT, OP_LIST, OP_MKDIR, OP_REMOVE, OP_RENAME };

typedef struct {
    uv_work_t work;
    mm_call *call; /* NULL once the call stopped waiting */
    int kind;
    int flag; /* mkdir: parents; remove: recursive */
    char *path, *path2;
    char *data; /* write input, read output */
    size_t len;
    int err;           /* negative errno, 0 on success */
    const char *where; /* the path the error is about */
    struct stat st;
    char **names;
    size_t nnames;
} fs_op;

static void op_free(fs_op *op)
{
    for (size_t i = 0; i < op->nnames; i++)
        free(op->names[i]);
    free(op->names);
    free(op->data);
    free(op->path);
    free(op->path2);
    free(op);
}

/* ---- blocking routines (thread pool) ---- */

static int do_read(fs_op *op)
{
    int fd = open(op->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    size_t cap = 65536, len = 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        cap = (size_t)st.st_size + 1; /* +1: EOF is seen without growing */
    char *buf = malloc(cap);
    int err = 0;
    for (;;) {
        if (!buf) {
            err = -ENOMEM;
            break;
        }
        if (len == cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                err = -ENOMEM;
                break;
            }
            buf = b;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            err = -errno;
            break;
        }
        if (n == 0) break;
        len += (size_t)n;
    }
    close(fd);
    if (err) {
        free(buf);
        return err;
    }
    op->data = buf;
    op->len = len;
    return 0;
}

static int do_write(fs_op *op, int append)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
    int fd = open(op->path, flags, 0666);
    if (fd < 0) return -errno;
    size_t off = 0;
    int err = 0;
    while (off < op->len) {
        ssize_t n = write(fd, op->data + off, op->len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            err = -errno;
            break;
        }
        off += (size_t)n;
    }
    if (close(fd) != 0 && !err) err = -errno;
    return err;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int do_list(fs_op *op)
{
    DIR *d = opendir(op->path);
    if (!d) return -errno;
    size_t cap = 0;
    int err = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (op->nnames == cap) {
            cap = cap ? cap * 2 : 16;
            char **n = realloc(op->names, cap * sizeof *n);
            if (!n) {
                err = -ENOMEM;
                break;
            }
            op->names = n;
        }
        if (!(op->names[op->nnames] = strdup(e->d_name))) {
            err = -ENOMEM;
            break;
        }
        op->nnames++;
        errno = 0;
    }
    if (!err && errno) err = -errno;
    closedir(d);
    if (!err && op->nnames > 1) qsort(op->names, op->nnames, sizeof *op->names, cmp_names);
    return err;
}

static int do_mkdir(fs_op *op)
{
    if (!op->flag) return mkdir(op->path, 0777) == 0 ? 0 : -errno;
    /* parents: create each component in turn; existing directories are fine */
    char *p = op->path;
    size_t n = strlen(p);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        int r = mkdir(p, 0777) == 0 ? 0 : -errno;
        if (r == -EEXIST) {
            struct stat st;
            r = stat(p, &st) == 0 ? (S_ISDIR(st.st_mode) ? 0 : -ENOTDIR) : -errno;
        }
        p[i] = c;
        if (r) return r;
    }
    return 0;
}

/* Removes name (relative to dirfd) and, for a directory, everything under it. Symbolic
 * links are removed, never followed. */
static int remove_tree(int parent, const char *name)
{
    if (unlinkat(parent, name, 0) == 0) return 0;
    if (errno != EISDIR && errno != EPERM) return -errno;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = -errno;
        close(fd);
        return e;
    }
    int err = 0;
    struct dirent *e;
    while (!err && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        err = remove_tree(dirfd(d), e->d_name);
    }
    closedir(d);
    if (err) return err;
    return unlinkat(parent, name, AT_REMOVEDIR) == 0 ? 0 : -errno;
}

static int do_remove(fs_op *op)
{
    if (op->flag) return remove_tree(AT_FDCWD, op->path);
    if (unlink(op->path) == 0) return 0;
    if (errno == EISDIR || errno == EPERM) return rmdir(op->path) == 0 ? 0 : -errno;
    return -errno;
}

static void work(uv_work_t *w)
{
    fs_op *op = w->data;
    op->where = op->path;
    switch (op->kind) {
    case OP_READ:
        op->err = do_read(op);
        break;
    case OP_WRITE:
    case OP_APPEND:
        op->err = do_write(op, op->kind == OP_APPEND);
        break;
    case OP_STAT:
        op->err = stat(op->path, &op->st) == 0 ? 0 : -errno;
        break;
    case OP_LIST:
        op->err = do_list(op);
        break;
    case OP_MKDIR:
        op->err = do_mkdir(op);
        break;
    case OP_REMOVE:
        op->err = do_remove(op);
        break;
    case OP_RENAME:
        op->err = rename(op->path, op->path2) == 0 ? 0 : -errno;
        break;
    }
}

/* ---- loop thread ---- */

static int push_results(lua_State *co, fs_op *op)
{
    if (op->err) {
        lua_pushnil(co);
        lua_pushfstring(co, "%s: %s", op->where, uv_strerror(op->err));
        return 2;
    }
    switch (op->kind) {
    case OP_READ:
        lua_pushlstring(co, op->data ? op->data : "", op->len);
        return 1;
    case OP_STAT: {
        mode_t m = op->st.st_mode;
        lua_createtable(co, 0, 4);
        lua_pushnumber(co, (double)op->st.st_size);
        lua_setfield(co, -2, "size");
        lua_pushnumber(co, (double)op->st.st_mtim.tv_sec + op->st.st_mtim.tv_nsec / 1e9);
        lua_setfield(co, -2, "mtime");
        lua_pushstring(co, S_ISREG(m) ? "file" : S_ISDIR(m) ? "directory" : "other");
        lua_setfield(co, -2, "type");
        lua_pushinteger(co, m & 07777);
        lua_setfield(co, -2, "mode");
        return 1;
    }
    case OP_LIST:
        lua_createtable(co, (int)op->nnames, 0);
        for (size_t i = 0; i < op->nnames; i++) {
            lua_pushstring(co, op->names[i]);
            lua_rawseti(co, -2, (int)i + 1);
        }
        return 1;
    default:
        lua_pushboolean(co, 1);
        return 1;
    }
}

static void after_work(uv_work_t *w, int status)
{
    fs_op *op = w->data;
    mm_call *c = op->call;
    if (c && status == 0) {
        int n = push_results(c->co, op);
        op_free(op);
        mm_call_resume(c, n);
        return;
    }
    op_free(op); /* cancelled: nobody waits */
}

static void cancel_op(void *p)
{
    fs_op *op = p;
    op->call = NULL;
    uv_cancel((uv_req_t *)&op->work); /* fails when running; after_work frees either way */
}

static char *dup_arg(lua_State *L, int arg, size_t *len)
{
    size_t n;
    const char *s = luaL_checklstring(L, arg, &n);
    if (len) *len = n;
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

/* fs(op, path, [arg]) -> results | nil, message
 *   "read", path -> data          "write"/"append", path, data -> true
 *   "stat", path -> { size, mtime, type, mode }    "list", dir -> { sorted names }
 *   "mkdir", path, parents -> true                 "remove", path, recursive -> true
 *   "rename", from, to -> true */
static int l_fs(lua_State *L)
{
    static const char *const kinds[] = {"read",  "write",  "append", "stat", "list",
                                        "mkdir", "remove", "rename", NULL};
    int kind = luaL_checkoption(L, 1, NULL, kinds);
    const char *path = luaL_checkstring(L, 2);
    luaL_argcheck(L, strlen(path) == lua_objlen(L, 2), 2, "path contains a NUL byte");
    if (kind == OP_WRITE || kind == OP_APPEND || kind == OP_RENAME) luaL_checkstring(L, 3);
    if (kind == OP_RENAME)
        luaL_argcheck(L, strlen(lua_tostring(L, 3)) == lua_objlen(L, 3), 3,
                      "path contains a NUL byte");
    mm_call *c = mm_call_check(L, "fs");
    fs_op *op = calloc(1, sizeof *op);
    if (!op) return luaL_error(L, "fs: out of memory");
    op->kind = kind;
    op->call = c;
    op->path = dup_arg(L, 2, NULL);
    int oom = !op->path;
    if (kind == OP_WRITE || kind == OP_APPEND)
        oom |= !(op->data = dup_arg(L, 3, &op->len));
    else if (kind == OP_RENAME)
        oom |= !(op->path2 = dup_arg(L, 3, NULL));
    else if (kind == OP_MKDIR || kind == OP_REMOVE)
        op->flag = lua_toboolean(L, 3);
    if (oom) {
        op_free(op);
        return luaL_error(L, "fs: out of memory");
    }
    op->work.data = op;
    int r = uv_queue_work(mm_loop, &op->work, work, after_work);
    if (r != 0) {
        op_free(op);
        lua_pushnil(L);
        lua_pushstring(L, uv_strerror(r));
        return 2;
    }
    return mm_call_park(L, c, cancel_op, op);
}

void mm_fs_open(lua_State *L)
{
    lua_pushcfunction(L, l_fs);
    lua_setfield(L, -2, "fs");
}

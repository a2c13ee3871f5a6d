/*
 * lwatch.c — core.watch(fn): file-system change notifications for hot reload
 * (DESIGN §6), and core.file_stamp(path), the stat that confirms a change.
 *
 * A watcher is a Lua userdata owning a list of directory watches, one libuv fs_event
 * handle per directory. Linux inotify is not recursive, so the Lua side (moonmcp.reload)
 * decides which directories to watch: every directory of the script tree, adding new
 * subdirectories as they appear. A single script file is watched through its directory,
 * which also survives editors that save by writing a new file and renaming it over the
 * old one (the old inode, and a watch on it, would be gone).
 *
 * Events reach Lua as a plain protected call of the watcher's function,
 * fn(dir, name, err), outside any coroutine (it must not yield; moonmcp.reload only
 * notes the event and lets a spawned task debounce). The scheduler is drained after it,
 * so tasks the function spawned start at once. A failed call is logged with its
 * traceback.
 *
 * Lifetimes: each directory watch is heap-allocated and freed only in its close callback.
 * Closing a watch (w:remove, w:close, or the watcher's __gc) first clears its back
 * pointer, so an event already queued for a closing handle is dropped, never delivered
 * to a watcher that may be gone. The watcher keeps its function in the registry until it
 * is closed. The handles are unreferenced: watching never keeps the process alive.
 */
#include "lcore.h"
#include "sched.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WATCHER_MT "moonmcp.watcher"

typedef struct watch_dir watch_dir;

typedef struct {
    int fn_ref;      /* fn in the registry; LUA_NOREF once closed */
    watch_dir *dirs; /* the open directory watches */
} watcher;

struct watch_dir {
    uv_fs_event_t ev;
    watcher *w; /* NULL once closing: events for it are dropped */
    watch_dir *next;
    char path[];
};

static void on_dir_close(uv_handle_t *h)
{
    free(h->data);
}

static void close_dir(watch_dir *d)
{
    d->w = NULL;
    uv_fs_event_stop(&d->ev);
    uv_close((uv_handle_t *)&d->ev, on_dir_close);
}

static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
    return 1;
}

static void on_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
    (void)events;
    watch_dir *d = h->data;
    watcher *w = d->w;
    if (!w || w->fn_ref == LUA_NOREF) return;
    lua_State *L = mm_L;
    int base = lua_gettop(L);
    lua_pushcfunction(L, traceback);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->fn_ref);
    lua_pushstring(L, d->path);
    if (filename)
        lua_pushstring(L, filename);
    else
        lua_pushnil(L);
    if (status < 0)
        lua_pushstring(L, uv_strerror(status));
    else
        lua_pushnil(L);
    /* From here on d and w may be freed by the call (w:remove, w:close); not touched. */
    if (lua_pcall(L, 3, 0, base + 1) != 0)
        mm_log_error("watch callback failed: %s", lua_tostring(L, -1));
    lua_settop(L, base);
    mm_sched_drain();
}

static watcher *check_watcher(lua_State *L)
{
    return luaL_checkudata(L, 1, WATCHER_MT);
}

/* watch(fn) -> watcher; fn(dir, name|nil, err|nil) is called for every event */
static int l_watch(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    watcher *w = lua_newuserdata(L, sizeof *w);
    w->fn_ref = LUA_NOREF;
    w->dirs = NULL;
    luaL_getmetatable(L, WATCHER_MT);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, 1);
    w->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

/* w:add(dir) -> true, or nil, message. Adding a directory twice is a no-op. */
static int l_add(lua_State *L)
{
    watcher *w = check_watcher(L);
    size_t len;
    const char *path = luaL_checklstring(L, 2, &len);
    if (w->fn_ref == LUA_NOREF) return luaL_error(L, "watcher: closed");
    for (watch_dir *d = w->dirs; d; d = d->next) {
        if (strcmp(d->path, path) == 0) {
            lua_pushboolean(L, 1);
            return 1;
        }
    }
    watch_dir *d = malloc(sizeof *d + len + 1);
    if (!d) return luaL_error(L, "watcher: out of memory");
    memcpy(d->path, path, len + 1);
    d->w = w;
    int r = uv_fs_event_init(mm_loop, &d->ev);
    if (r < 0) {
        free(d);
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, uv_strerror(r));
        return 2;
    }
    d->ev.data = d;
    r = uv_fs_event_start(&d->ev, on_event, path, 0);
    if (r < 0) {
        d->w = NULL;
        uv_close((uv_handle_t *)&d->ev, on_dir_close);
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, uv_strerror(r));
        return 2;
    }
    uv_unref((uv_handle_t *)&d->ev);
    d->next = w->dirs;
    w->dirs = d;
    lua_pushboolean(L, 1);
    return 1;
}

/* w:remove(dir) -> true if dir was watched */
static int l_remove(lua_State *L)
{
    watcher *w = check_watcher(L);
    const char *path = luaL_checkstring(L, 2);
    for (watch_dir **p = &w->dirs; *p; p = &(*p)->next) {
        watch_dir *d = *p;
        if (strcmp(d->path, path) == 0) {
            *p = d->next;
            close_dir(d);
            lua_pushboolean(L, 1);
            return 1;
        }
    }
    lua_pushboolean(L, 0);
    return 1;
}

/* w:dirs() -> { dir, ... } (unsorted) */
static int l_dirs(lua_State *L)
{
    watcher *w = check_watcher(L);
    lua_newtable(L);
    int i = 1;
    for (watch_dir *d = w->dirs; d; d = d->next) {
        lua_pushstring(L, d->path);
        lua_rawseti(L, -2, i++);
    }
    return 1;
}

/* w:close() -- stops every watch; idempotent (also the __gc) */
static int l_close(lua_State *L)
{
    watcher *w = check_watcher(L);
    while (w->dirs) {
        watch_dir *d = w->dirs;
        w->dirs = d->next;
        close_dir(d);
    }
    if (w->fn_ref != LUA_NOREF) {
        luaL_unref(L, LUA_REGISTRYINDEX, w->fn_ref);
        w->fn_ref = LUA_NOREF;
    }
    return 0;
}

/* file_stamp(path) -> type, size, mtime_sec, mtime_nsec, inode; or nil, message.
 * type is "file", "directory" or "other". Synchronous (a stat): for the watcher. */
static int l_file_stamp(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    uv_fs_t req;
    int r = uv_fs_stat(NULL, &req, path, NULL);
    if (r < 0) {
        uv_fs_req_cleanup(&req);
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, uv_strerror(r));
        return 2;
    }
    uv_stat_t st = req.statbuf;
    uv_fs_req_cleanup(&req);
    lua_pushstring(L, S_ISDIR(st.st_mode) ? "directory" : S_ISREG(st.st_mode) ? "file" : "other");
    lua_pushnumber(L, (double)st.st_size);
    lua_pushnumber(L, (double)st.st_mtim.tv_sec);
    lua_pushnumber(L, (double)st.st_mtim.tv_nsec);
    lua_pushnumber(L, (double)st.st_ino);
    return 5;
}

void mm_watch_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"add", l_add}, {"remove", l_remove}, {"dirs", l_dirs}, {"close", l_close}, {NULL, NULL},
    };
    luaL_newmetatable(L, WATCHER_MT);
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_watch);
    lua_setfield(L, -2, "watch");
    lua_pushcfunction(L, l_file_stamp);
    lua_setfield(L, -2, "file_stamp");
}

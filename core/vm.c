/*
 * vm.c — the Lua state: creation, package paths, preloaded host modules.
 *
 * The runtime (lua/moonmcp/ modules) is found through package.path, rooted at the home
 * folder; C modules are registered in package.preload so that `require` finds them
 * without any shared object on disk. Nothing here runs Lua code of the runtime: main.c
 * does that, inside a scheduled coroutine.
 */
#include "vm.h"
#include "lcore.h"
#include "ljson.h"
#include "lregex.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int luaopen_cjson(lua_State *L); /* from Debian's liblua5.1-cjson.a */

static int has_runtime(const char *dir)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/lua/moonmcp/init.lua", dir);
    return stat(path, &st) == 0;
}

int mm_vm_find_home(char *buf, size_t size)
{
    const char *env = getenv("MOONMCP_HOME");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return has_runtime(buf) ? 0 : UV_ENOENT;
    }
    char exe[4096];
    size_t n = sizeof exe;
    if (uv_exepath(exe, &n) == 0) {
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(buf, size, "%s/../%s", exe, MOONMCP_DATA_SUFFIX);
            if (has_runtime(buf)) return 0;
        }
    }
    snprintf(buf, size, "%s", MOONMCP_SOURCE_DIR);
    return has_runtime(buf) ? 0 : UV_ENOENT;
}

static void preload(lua_State *L, const char *name, lua_CFunction open)
{
    lua_getfield(L, LUA_GLOBALSINDEX, "package");
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, open);
    lua_setfield(L, -2, name);
    lua_pop(L, 2);
}

static void set_paths(lua_State *L, const char *home)
{
    lua_getfield(L, LUA_GLOBALSINDEX, "package");
    lua_getfield(L, -1, "path");
    lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;%s", home, home, lua_tostring(L, -1));
    lua_setfield(L, -3, "path");
    lua_pop(L, 2);
}

lua_State *mm_vm_open(const char *home)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        mm_log_error("cannot create the Lua state (out of memory)");
        return NULL;
    }
    luaL_openlibs(L);
    set_paths(L, home);
    preload(L, "moonmcp.core", mm_core_open);
    preload(L, "moonmcp.jsonc", luaopen_moonmcp_jsonc);
    preload(L, "moonmcp.regex", luaopen_moonmcp_regex);
    preload(L, "cjson", luaopen_cjson);
    return L;
}

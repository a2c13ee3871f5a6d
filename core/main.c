/*
 * main.c — process start-up: find the runtime, open the loop and the Lua state, run the
 * command line (moonmcp.cli, in a coroutine so commands may yield), run the loop, exit
 * with the status the runtime chose. Everything about commands and flags is in
 * lua/moonmcp/cli.lua.
 */
#include "lcore.h"
#include "loop.h"
#include "sched.h"
#include "vm.h"

#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

uv_loop_t *mm_loop;
lua_State *mm_L;

int main(int argc, char **argv)
{
    char home[4096];
    signal(SIGPIPE, SIG_IGN);
    struct rlimit nofile; /* one descriptor per connection: allow as many as the system does */
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    argv = uv_setup_args(argc, argv);
    if (mm_vm_find_home(home, sizeof home) != 0) {
        mm_log_error("cannot find the Lua runtime (lua/moonmcp/init.lua); set MOONMCP_HOME");
        return 1;
    }
    mm_loop = uv_default_loop();
    mm_L = mm_vm_open(home);
    if (!mm_L) return 1;
    mm_sched_init();

    lua_State *L = mm_L;
    lua_getglobal(L, "require");
    lua_pushliteral(L, "moonmcp.cli");
    if (lua_pcall(L, 1, 1, 0) != 0) {
        mm_log_error("cannot load the runtime: %s", lua_tostring(L, -1));
        return 1;
    }
    lua_getfield(L, -1, "start");
    lua_remove(L, -2);
    lua_pushstring(L, home);
    lua_createtable(L, argc, 0);
    for (int i = 1; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i);
    }
    mm_sched_spawn(L, 2);
    mm_sched_drain();
    uv_run(mm_loop, UV_RUN_DEFAULT);

    int code = mm_exit_code < 0 ? 0 : mm_exit_code;
    mm_loop_shutdown();
    fflush(stdout);
    fflush(stderr);
    return code;
}

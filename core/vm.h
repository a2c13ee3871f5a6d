/*
 * vm.h — the Lua state: creation, the host's preloaded C modules, the runtime's home.
 */
#ifndef MM_VM_H
#define MM_VM_H

#include "mm.h"

/* Finds the runtime home (the folder holding lua/ and scripts/): $MOONMCP_HOME, else
 * <exe>/../share/moonmcp when installed, else the source tree the binary was built from.
 * Returns 0 and fills buf, or a negative error code. */
int mm_vm_find_home(char *buf, size_t size);

/* Opens the Lua state with the standard libraries, package paths rooted at home, and the
 * host modules preloaded (moonmcp.core, moonmcp.jsonc, moonmcp.regex, cjson).
 * Returns NULL on failure (message written to stderr). */
lua_State *mm_vm_open(const char *home);

#endif

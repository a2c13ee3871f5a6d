-- luacheck configuration: LuaJIT, no global writes anywhere.
std = "luajit"
max_line_length = 120
unused_args = false
files["spec/**/*.lua"] = { std = "+busted" }
files["bench/echo.lua"] = { globals = { "wrk" } } -- wrk's script API is its global table
exclude_files = { "build*/**", ".tools/**", "**/node_modules/**", "spec/fixtures/broken/**" }

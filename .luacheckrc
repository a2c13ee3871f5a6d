-- luacheck configuration: LuaJIT, no global writes anywhere.
std = "luajit"
max_line_length = 120
unused_args = false
files["spec/**/*.lua"] = { std = "+busted" }
exclude_files = { "build*/**", ".tools/**", "node_modules/**" }

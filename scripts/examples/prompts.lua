-- prompts — reusable prompt templates a client can offer as slash commands: a code review,
-- an error explanation, a commit message, and a review of a file the server exposes
-- (a resource link the client reads through resources/read, see files.lua).
local moonmcp = require "moonmcp"
local content = moonmcp.content

local LANGUAGES = { "c", "c++", "go", "java", "javascript", "lua", "python", "ruby", "rust", "shell", "sql",
  "typescript" }

local FOCUS = {
  correctness = "bugs, edge cases, error handling and undefined behaviour",
  security = "injection, unchecked input, secrets, unsafe file and network access",
  performance = "needless allocation, quadratic loops, blocking calls in hot paths",
  readability = "naming, structure, comments that explain why, dead code",
  tests = "what is untested and which tests would catch the likely bugs",
}

local FOCUS_NAMES = {}
for name in pairs(FOCUS) do
  FOCUS_NAMES[#FOCUS_NAMES + 1] = name
end
table.sort(FOCUS_NAMES)

local function fence(code, language)
  -- a fence longer than any run of backticks in the code, so the code cannot close it
  local longest = 2
  for run in code:gmatch("`+") do
    longest = math.max(longest, #run)
  end
  local f = ("`"):rep(longest + 1)
  return f .. (language or "") .. "\n" .. code .. "\n" .. f
end

return {
  prompts = {
    code_review = {
      title = "Code review",
      description = "Review a piece of code: find bugs first, then the rest, with concrete fixes.",
      arguments = {
        { name = "code", description = "The code to review", required = true },
        { name = "language", description = "Its programming language (helps the reviewer)" },
        { name = "focus", description = "What to look at first: " .. table.concat(FOCUS_NAMES, ", ") },
      },
      complete = { language = LANGUAGES, focus = FOCUS_NAMES },
      handler = function(args)
        local focus = args.focus
        if focus and not FOCUS[focus] then
          return nil, ("focus must be one of %s, got %q"):format(table.concat(FOCUS_NAMES, ", "), focus)
        end
        local lines = {
          ("Please review this %s code."):format(args.language or "piece of"),
          focus and ("Look first at %s: %s."):format(focus, FOCUS[focus])
            or "Look first at correctness: bugs, edge cases and error handling.",
          "For each finding give the line, what is wrong, why it matters, and the fix as code.",
          "Finish with the three changes you would make first.",
          "",
          fence(args.code, args.language),
        }
        return table.concat(lines, "\n")
      end,
    },

    explain_error = {
      title = "Explain an error",
      description = "Explain an error message or stack trace and suggest how to fix it.",
      arguments = {
        { name = "error", description = "The error message or stack trace", required = true },
        { name = "context", description = "What you were doing: the command, the code, the input" },
      },
      handler = function(args)
        local messages = {
          { role = "user", content = content.text("Explain this error in plain words: what it means, the "
            .. "likely causes (most likely first), and how to confirm and fix each.\n\n" .. fence(args.error)) },
        }
        if args.context and args.context ~= "" then
          messages[#messages + 1] = { role = "user", content = content.text("Context:\n" .. fence(args.context)) }
        end
        return { messages = messages }
      end,
    },

    commit_message = {
      title = "Commit message",
      description = "Write a commit message for a diff.",
      arguments = {
        { name = "diff", description = "The output of git diff --staged", required = true },
        { name = "style", description = "conventional (feat: ...) or plain",
          complete = { "conventional", "plain" } },
      },
      handler = function(args)
        local style = args.style or "plain"
        local rules = style == "conventional"
          and "Use Conventional Commits: type(scope): summary, with type one of feat, fix, docs, refactor, test, chore."
          or "Start with a summary line in the imperative mood, at most 72 characters, without a trailing period."
        return {
          description = "Commit message (" .. style .. ")",
          messages = {
            { role = "user", content = content.text(rules .. " Then a blank line and a body that says why the "
              .. "change is made, wrapped at 72 columns. Answer with the message only.\n\n"
              .. fence(args.diff, "diff")) },
          },
        }
      end,
    },

    review_file = {
      title = "Review a file",
      description = "Review a file this server exposes (a file:/// URI from resources/list or the file template).",
      arguments = {
        { name = "uri", description = "The file's URI, e.g. file:///srv/project/main.lua", required = true },
      },
      handler = function(args)
        if not args.uri:match("^file:///") then
          return nil, "uri must be a file:/// URI"
        end
        local name = args.uri:match("([^/]+)$") or args.uri
        return {
          messages = {
            { role = "user", content = content.resource_link { uri = args.uri, name = name } },
            { role = "user", content = content.text("Review the file linked above: bugs first, then "
              .. "security, then readability. Quote the lines you comment on.") },
          },
        }
      end,
    },
  },
}

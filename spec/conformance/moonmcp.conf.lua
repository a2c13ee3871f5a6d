-- Config of the server the official conformance suite runs against (spec/conformance/run.sh):
-- legacy-era sessions on, so the 2025-11-25 scenarios that expect a session (one SSE
-- stream per session, session lifecycle) see one. Everything else is the default.
return {
  sessions = true,
}

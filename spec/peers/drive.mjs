// spec/peers/drive.mjs — drives a real MCP client against moonmcp and reports everything.
//
//   node22 spec/peers/drive.mjs '<plan JSON>'      (or the plan on stdin)
//
// Plan:
//   { "client": "sdk1" | "client2",           // @modelcontextprotocol/sdk 1.x | @modelcontextprotocol/client 2.x
//     "pin": "2026-07-28",                     // client2 only: versionNegotiation { pin }; absent = legacy
//     "transport": { "type": "http", "url": "http://127.0.0.1:PORT/mcp" }
//                | { "type": "stdio", "command": "build/moonmcp", "args": [...], "env": {...}, "cwd": "..." },
//     "timeoutMs": 10000,                      // per request (default 10000)
//     "deadlineMs": 25000,                     // whole run; on expiry prints what it has and exits 3
//     "settleMs": 50,                          // pause after the last step, before closing
//     "handlers": {                            // optional client-side handlers; each one also
//                                              // declares the matching client capability
//       "elicitation": { "action": "accept", "content": {...},   // the default answer
//                        "answers": [ { "match": "text", "action": ..., "content": {...} } ] },
//                                              //  first answer whose match is a substring of
//                                              //  the request's message wins, else the default
//       "sampling": { CreateMessageResult },   // e.g. { role, content: {type,text}, model, stopReason }
//       "roots": [ { "uri": "file:///...", "name": "..." } ] },
//     "capabilities": { ... },                 // extra client capabilities (merged over the above)
//     "inputRequired": { maxRounds, autoFulfill } // client2 only: its MRTR driver options
//     "steps": [ { "op": ..., ... }, ... ] }
// Every step may carry a "label" (copied to its record; defaults to op). Ops:
//   listTools | listPrompts | listResources | listResourceTemplates | ping
//   callTool { name, args, progress: true, abortAfterMs, meta: {...}, timeoutMs }
//   getPrompt { name, args }                   readResource { uri }
//   complete { ref: {type, name|uri}, argument: {name, value}, context }
//   setLoggingLevel { level }                  subscribeResource { uri } / unsubscribeResource { uri }
//   sleep { ms }
//   waitFor { method, count, timeoutMs }       waits until `count` notifications of `method` arrived
// Each step runs after the previous one settled (an aborted call settles when its promise
// rejects). Output (stdout, one JSON document):
//   { ok, fatal?, connect: { serverInfo, capabilities, protocolVersion, era, instructions },
//     steps: [ { op, label, ok, result | error: {name, message, code, data}, progress: [...],
//                ms, t0, t1 (ms since start), ids (JSON-RPC ids of the requests it sent),
//                r0, r1: received.slice(r0, r1) is what the server sent during the step
//                (waits up to 1 s for the raw response of its last request first, unless
//                the step aborted its call);
//                n0, n1: the same for notifications;
//                rounds: [ { id, params, response } ]: each request of the step (an MRTR
//                retry is a new request: round i+1 of a call), the params it sent and the raw
//                response (null if none arrived), in order;
//                h0, h1: handled.slice(h0, h1) is what the client's handlers answered
//                during the step } ],
//     notifications: [ {t, method, params} ]   // log messages as dispatched by the SDK's handler
//     handled: [ { t, method, key, params, answer } ]  // every call of a client-side handler:
//                                              //  key = the JSON-RPC id of the server's request
//                                              //  (sdk1) or the inputRequests key (client2 MRTR)
//     received: [ { t, via, exchange, msg } ]  // every raw JSON-RPC message from the server:
//                                              //  via = "json" | "sse" (HTTP) | "stdio"
//     sent: [ { t, via, exchange, msg } ]      // every message the client sent
//     http: [ { exchange, method, status, contentType, requestMethod, requestId } ]
//     stderr: "..."                            // the server's stderr (stdio)
//     transportErrors: [ "..." ] }
// HTTP messages are captured by a fetch wrapper that tees each response body, so they are
// the bytes on the wire, not the SDK's parsed (and possibly stripped) objects; stdio
// messages are the child's stdout lines.
import process from 'node:process';
import { readFileSync } from 'node:fs';

const t0 = Date.now();
const now = () => Date.now() - t0;

function readPlan() {
  const arg = process.argv[2];
  if (arg && arg !== '-') return JSON.parse(arg);
  return JSON.parse(readFileSync(0, 'utf8'));
}

const plan = readPlan();
const out = {
  ok: false,
  client: plan.client,
  connect: null,
  steps: [],
  notifications: [],
  handled: [],
  received: [],
  sent: [],
  http: [],
  stderr: '',
  transportErrors: [],
};

let printed = false;
function finish(code) {
  if (printed) return;
  printed = true;
  process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(code));
}

const deadline = setTimeout(() => {
  out.fatal = `driver deadline of ${plan.deadlineMs ?? 25000} ms expired`;
  finish(3);
}, plan.deadlineMs ?? 25000);
deadline.unref?.();

function errorInfo(e) {
  if (e === undefined || e === null) return { message: String(e) };
  const info = { name: e.name ?? e.constructor?.name, message: e.message ?? String(e) };
  if (e.code !== undefined) info.code = e.code;
  if (e.data !== undefined) info.data = e.data;
  if (e.cause !== undefined) info.cause = String(e.cause?.message ?? e.cause);
  return info;
}

// ---- raw capture -------------------------------------------------------------------

function recordReceived(via, exchange, text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch (e) {
    out.received.push({ t: now(), via, exchange, raw: text, parseError: e.message });
    return;
  }
  const list = Array.isArray(msg) ? msg : [msg];
  for (const m of list) out.received.push({ t: now(), via, exchange, msg: m });
}

async function consumeSse(stream, exchange) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const flush = (block) => {
    const data = [];
    for (const line of block.split('\n')) {
      const m = /^data: ?(.*)$/.exec(line);
      if (m) data.push(m[1]);
    }
    if (data.length > 0 && data.join('\n').trim() !== '') recordReceived('sse', exchange, data.join('\n'));
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        flush(buf.slice(0, i));
        buf = buf.slice(i + 2);
      }
    }
  } catch {
    // aborted or closed: what arrived was recorded
  }
  if (buf.trim() !== '') flush(buf);
}

async function consumeJson(stream, exchange) {
  try {
    const text = await new Response(stream).text();
    if (text.trim() !== '') recordReceived('json', exchange, text);
  } catch {
    // aborted
  }
}

let exchanges = 0;
function teeFetch(url, init = {}) {
  const exchange = ++exchanges;
  const method = (init.method ?? 'GET').toUpperCase();
  const rec = { exchange, method };
  if (typeof init.body === 'string') {
    try {
      const body = JSON.parse(init.body);
      for (const m of Array.isArray(body) ? body : [body]) {
        out.sent.push({ t: now(), via: 'http', exchange, msg: m });
        rec.requestMethod ??= m.method;
        if (m.id !== undefined) rec.requestId ??= m.id;
      }
    } catch {
      // not JSON: nothing to record
    }
  }
  out.http.push(rec);
  return fetch(url, init).then((res) => {
    rec.status = res.status;
    rec.contentType = res.headers.get('content-type');
    if (!res.body || [204, 205, 304].includes(res.status)) return res;
    const [mine, theirs] = res.body.tee();
    if ((rec.contentType ?? '').includes('text/event-stream')) consumeSse(theirs, exchange);
    else if ((rec.contentType ?? '').includes('json')) consumeJson(theirs, exchange);
    else consumeJson(theirs, exchange).catch(() => {});
    return new Response(mine, { status: res.status, statusText: res.statusText, headers: res.headers });
  });
}

// Tees a stdio transport: the child's stdout lines, and every message the client sends.
function teeStdio(TransportClass) {
  return class TeeStdio extends TransportClass {
    async start() {
      await super.start();
      let buf = '';
      this._process.stdout.on('data', (chunk) => {
        buf += chunk.toString('utf8');
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i).replace(/\r$/, '');
          buf = buf.slice(i + 1);
          if (line.trim() !== '') recordReceived('stdio', 0, line);
        }
      });
      this.stderr?.on('data', (chunk) => {
        out.stderr += chunk.toString('utf8');
      });
    }
    async send(message, options) {
      out.sent.push({ t: now(), via: 'stdio', exchange: 0, msg: JSON.parse(JSON.stringify(message)) });
      return super.send(message, options);
    }
  };
}

// ---- client-side handlers ---------------------------------------------------------------

// The capabilities the plan's handlers need, plus plan.capabilities.
function planCapabilities() {
  const h = plan.handlers ?? {};
  const caps = {};
  if (h.elicitation) caps.elicitation = { form: {} };
  if (h.sampling) caps.sampling = {};
  if (h.roots) caps.roots = {};
  return { ...caps, ...(plan.capabilities ?? {}) };
}

function elicitationAnswer(params) {
  const h = plan.handlers.elicitation;
  const message = String(params?.message ?? '');
  const hit = (h.answers ?? []).find((a) => message.includes(a.match ?? ''));
  const a = hit ?? h;
  const answer = { action: a.action ?? 'accept' };
  if (a.content !== undefined) answer.content = a.content;
  return answer;
}

// The answers, per method. key: the server's request id (sdk1) or inputRequests key (client2).
const ANSWER = {
  'elicitation/create': (params) => elicitationAnswer(params),
  'sampling/createMessage': () => JSON.parse(JSON.stringify(plan.handlers.sampling)),
  'roots/list': () => ({ roots: JSON.parse(JSON.stringify(plan.handlers.roots)) }),
};
const HANDLER_OF = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };

function handlerFor(method, keyOf) {
  return async (request, extra) => {
    const answer = ANSWER[method](request.params);
    out.handled.push({ t: now(), method, key: keyOf(request, extra) ?? null, params: request.params ?? null, answer });
    return answer;
  };
}

// Registers the plan's handlers through register(method, handler).
function registerHandlers(register, keyOf) {
  for (const method of Object.keys(ANSWER)) {
    if (plan.handlers?.[HANDLER_OF[method]] !== undefined) register(method, handlerFor(method, keyOf));
  }
}

// ---- clients -------------------------------------------------------------------------

async function makeClient() {
  const info = { name: 'moonmcp-interop', version: '1.0.0' };
  const tr = plan.transport;
  if (plan.client === 'sdk1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const types = await import('@modelcontextprotocol/sdk/types.js');
    const client = new Client(info, { capabilities: planCapabilities() });
    const schemas = { 'elicitation/create': types.ElicitRequestSchema,
      'sampling/createMessage': types.CreateMessageRequestSchema, 'roots/list': types.ListRootsRequestSchema };
    registerHandlers((method, handler) => client.setRequestHandler(schemas[method], handler),
      (request, extra) => extra?.requestId ?? request.id);
    client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => {
      out.notifications.push({ t: now(), method: n.method, params: n.params });
    });
    let transport;
    if (tr.type === 'http') {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      transport = new StreamableHTTPClientTransport(new URL(tr.url), { fetch: teeFetch });
    } else {
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const Tee = teeStdio(StdioClientTransport);
      transport = new Tee({ command: tr.command, args: tr.args ?? [], env: { ...process.env, ...(tr.env ?? {}) },
        cwd: tr.cwd, stderr: 'pipe' });
    }
    return { client, transport, sdk: 'sdk1', types };
  }
  if (plan.client === 'client2') {
    const mod = await import('@modelcontextprotocol/client');
    const opts = { capabilities: planCapabilities() };
    if (plan.pin) opts.versionNegotiation = { mode: { pin: plan.pin } };
    if (plan.inputRequired) opts.inputRequired = plan.inputRequired;
    const client = new mod.Client(info, opts);
    // On 2026-07-28 the client's MRTR driver answers input_required rounds with these same
    // handlers (ctx.mcpReq.id = the inputRequests key) and retries the call on its own.
    registerHandlers((method, handler) => client.setRequestHandler(method, handler),
      (request, ctx) => ctx?.mcpReq?.id ?? request.id);
    client.setNotificationHandler('notifications/message', (n) => {
      out.notifications.push({ t: now(), method: n.method, params: n.params });
    });
    let transport;
    if (tr.type === 'http') {
      transport = new mod.StreamableHTTPClientTransport(new URL(tr.url), { fetch: teeFetch });
    } else {
      const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
      const Tee = teeStdio(StdioClientTransport);
      transport = new Tee({ command: tr.command, args: tr.args ?? [], env: { ...process.env, ...(tr.env ?? {}) },
        cwd: tr.cwd, stderr: 'pipe' });
    }
    return { client, transport, sdk: 'client2' };
  }
  throw new Error(`unknown client ${plan.client}`);
}

// ---- steps ---------------------------------------------------------------------------

function requestOptions(step, rec) {
  const o = { timeout: step.timeoutMs ?? plan.timeoutMs ?? 10000 };
  if (step.progress) {
    rec.progress = [];
    o.onprogress = (p) => rec.progress.push({ t: now(), ...p });
  }
  if (step.abortAfterMs !== undefined) {
    const ac = new AbortController();
    setTimeout(() => {
      rec.abortedAt = now();
      ac.abort(new Error('aborted by the test'));
    }, step.abortAfterMs);
    o.signal = ac.signal;
  }
  return o;
}

async function runStep(c, step) {
  const { client, sdk, types } = c;
  const rec = { op: step.op, label: step.label ?? step.op, t0: now(), r0: out.received.length,
    n0: out.notifications.length, h0: out.handled.length };
  const sentBefore = out.sent.length;
  const started = Date.now();
  const o = () => requestOptions(step, rec);
  const withMeta = (params) => (step.meta ? { ...params, _meta: { ...(params._meta ?? {}), ...step.meta } } : params);
  try {
    let result;
    switch (step.op) {
      case 'listTools': result = await client.listTools(undefined, o()); break;
      case 'listPrompts': result = await client.listPrompts(undefined, o()); break;
      case 'listResources': result = await client.listResources(undefined, o()); break;
      case 'listResourceTemplates': result = await client.listResourceTemplates(undefined, o()); break;
      case 'ping': result = await client.ping(o()); break;
      case 'callTool': {
        const params = withMeta({ name: step.name, arguments: step.args ?? {} });
        result = sdk === 'sdk1'
          ? await client.callTool(params, types.CallToolResultSchema, o())
          : await client.callTool(params, o());
        break;
      }
      case 'getPrompt': result = await client.getPrompt(withMeta({ name: step.name, arguments: step.args ?? {} }), o()); break;
      case 'readResource': result = await client.readResource(withMeta({ uri: step.uri }), o()); break;
      case 'complete': {
        const params = { ref: step.ref, argument: step.argument };
        if (step.context) params.context = step.context;
        result = await client.complete(params, o());
        break;
      }
      case 'setLoggingLevel': result = await client.setLoggingLevel(step.level, o()); break;
      case 'subscribeResource': result = await client.subscribeResource({ uri: step.uri }, o()); break;
      case 'unsubscribeResource': result = await client.unsubscribeResource({ uri: step.uri }, o()); break;
      case 'sleep': await new Promise((r) => setTimeout(r, step.ms ?? 0)); result = {}; break;
      case 'waitFor': {
        const until = Date.now() + (step.timeoutMs ?? 5000);
        const count = () => out.received.filter((r) => r.msg?.method === step.method && r.msg?.id === undefined).length;
        while (count() < (step.count ?? 1) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        result = { count: count() };
        break;
      }
      default: throw new Error(`unknown op ${step.op}`);
    }
    rec.ok = true;
    rec.result = result ?? null;
  } catch (e) {
    rec.ok = false;
    rec.error = errorInfo(e);
  }
  rec.ms = Date.now() - started;
  // the JSON-RPC ids of the requests this step sent (an MRTR retry or a probe may add more)
  rec.ids = out.sent.slice(sentBefore).filter((s) => s.msg?.id !== undefined && s.msg?.method).map((s) => s.msg.id);
  // The SDK may settle a call before the tee recorded its response (HTTP: two branches of
  // one body): wait (briefly) until the raw response is recorded, so that received[r0..r1)
  // holds everything the server sent for this step, and nothing of the next one.
  const responseTo = (id) => out.received.find((r) => r.msg && r.msg.method === undefined && r.msg.id === id);
  const last = rec.ids[rec.ids.length - 1];
  if (last !== undefined && rec.abortedAt === undefined) {
    const until = Date.now() + 1000;
    while (!responseTo(last) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  }
  rec.t1 = now();
  rec.r1 = out.received.length;
  rec.n1 = out.notifications.length;
  rec.h1 = out.handled.length;
  // one entry per request the step sent: an MRTR call's rounds, in order
  rec.rounds = out.sent.slice(sentBefore).filter((s) => s.msg?.id !== undefined && s.msg?.method)
    .map((s) => ({ id: s.msg.id, params: s.msg.params ?? null, response: responseTo(s.msg.id)?.msg ?? null }));
  return rec;
}

async function main() {
  const c = await makeClient();
  c.client.onerror = (e) => out.transportErrors.push(String(e?.message ?? e));
  try {
    await c.client.connect(c.transport, { timeout: plan.timeoutMs ?? 10000 });
  } catch (e) {
    out.fatal = 'connect failed';
    out.connectError = errorInfo(e);
    return 1;
  }
  out.connect = {
    serverInfo: c.client.getServerVersion?.() ?? null,
    capabilities: c.client.getServerCapabilities?.() ?? null,
    instructions: c.client.getInstructions?.() ?? null,
    protocolVersion: c.client.getNegotiatedProtocolVersion?.() ?? c.transport.protocolVersion ??
      out.received.find((r) => r.msg?.result?.protocolVersion)?.msg.result.protocolVersion ?? null,
    era: c.client.getProtocolEra?.() ?? 'legacy',
  };
  for (const step of plan.steps ?? []) out.steps.push(await runStep(c, step));
  // let trailing notifications and stream ends land before closing
  await new Promise((r) => setTimeout(r, plan.settleMs ?? 50));
  try {
    await c.client.close();
  } catch (e) {
    out.transportErrors.push('close: ' + String(e?.message ?? e));
  }
  out.ok = true;
  return 0;
}

main().then(finish, (e) => {
  out.fatal = String(e?.stack ?? e);
  finish(2);
});

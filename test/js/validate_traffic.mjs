// Validates captured JSON-RPC traffic against the app-server JSON Schema bundle with ajv
// (draft-07), so the exported schema and what the server really sends cannot drift apart.
//
//   node validate_traffic.mjs <schema-bundle.json> <traffic.jsonl> [--allow-unknown-methods] [--quiet]
//   node validate_traffic.mjs --self-test      (ctest: js/validate_traffic_self_test)
//
// Expected bundle layout (`llmx app-server generate-json-schema`, protocol.md §4.8; only the
// `definitions` are used, the root itself is not a message schema):
//
//   {"$schema": "http://json-schema.org/draft-07/schema#", "title": "LlmxAppServerProtocol",
//    "type": "object",
//    "definitions": {
//      "JSONRPCMessage": {...},                      every line must match it (when present)
//      "ClientRequest":  {"oneOf": [VARIANT...]},    the four method unions (each optional)
//      "ServerRequest", "ClientNotification", "ServerNotification": same shape
//      "EventMsg": {...},                            payload of `llmx/event[/<type>]` notifications
//      "<Name>Params", "<Name>Response", ...         any other types
//      "v2": {"<Name>": {...}, ...}                  the v2 namespace: "#/definitions/v2/<Name>"
//    }}
//
//   VARIANT = {"title": "ThreadStartRequest", "type": "object",
//              "properties": {"method": {"const": "thread/start"} (or a one-value "enum"),
//                             "id": {...}, "params": {"$ref": "#/definitions/v2/ThreadStartParams"}},
//              "required": [...]}            (a variant may also be a {"$ref"} to such an object)
//
// What each line is checked against:
//   * every message: `JSONRPCMessage` (without it: a built-in envelope check);
//   * a request / notification: the union variant whose method constant equals its `method`
//     (ClientRequest + ServerRequest / ClientNotification + ServerNotification; with a direction,
//     only the matching union), which covers `params`. A method no union knows is an error
//     (a warning with --allow-unknown-methods), except `llmx/event` and `llmx/event/<type>`
//     notifications without a variant: their `params.msg` is checked against `EventMsg` and
//     `msg.type` must equal the `<type>` suffix;
//   * a success response: the `result` against the response type of the request with the same id
//     seen earlier in the file: the variant's params `$ref` with `Params` replaced by `Response`
//     (`ThreadStartParams` -> `ThreadStartResponse`, same namespace first), else
//     PascalCase(method) + `Response` (`thread/start` -> `ThreadStartResponse`) in either namespace.
//     Results with no findable type are counted as unchecked, not failed.
//   * error responses: the envelope only.
//
// --mcp (traffic of `llmx mcp-server`): the MCP protocol's own methods (initialize, ping, tools/*,
// resources/*, prompts/*, logging/*, completion/*, notifications/*, elicitation/create) are not in
// the bundle and are skipped (the MCP SDK client test checks them); everything else — the
// conversation methods (P1), `llmx/event` and the approval requests — is checked as above, with
// `model/list` answered in the MCP server's `items` shape (McpModelListResponse, DECISIONS P8).
//
// Traffic lines are bare JSON-RPC messages, one per line (blank lines are skipped), or wrapped as
// {"from": "client" | "server", "conn"?: <any>, "message": {...}} to say who sent them (ids of
// client and server requests are then kept apart) and on which connection (ids of different
// connections never answer each other). Any JSON-RPC envelope is accepted, with or without "jsonrpc".
// Unknown "format"s in the bundle are added as no-ops (uint* as non-negative integers).
// Exit status: 0 all good, 1 validation failures (or an empty traffic file), 2 usage / unreadable input.

import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const BUNDLE_ID = 'https://llmx.invalid/app-server-protocol.schemas.json';
const UNIONS = {
  request: { client: 'ClientRequest', server: 'ServerRequest' },
  notification: { client: 'ClientNotification', server: 'ServerNotification' },
};

// --- schema helpers ------------------------------------------------------------------------------

function unescapePointer(s) {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}
// The value at a "#/a/b" pointer of the bundle (undefined when missing).
function at(bundle, pointer) {
  let v = bundle;
  for (const part of pointer.replace(/^#?\/?/, '').split('/').filter((p) => p !== '')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[unescapePointer(part)];
  }
  return v;
}
function pascalCase(method) {
  return method.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}
function collectFormats(node, out) {
  if (Array.isArray(node)) for (const n of node) collectFormats(n, out);
  else if (node && typeof node === 'object') {
    if (typeof node.format === 'string') out.add(node.format);
    for (const v of Object.values(node)) collectFormats(v, out);
  }
}

class Validator {
  constructor(bundle) {
    if (!bundle || typeof bundle !== 'object' || !bundle.definitions || typeof bundle.definitions !== 'object')
      throw new Error('the schema bundle has no "definitions" object');
    this.bundle = structuredClone(bundle);
    this.bundle.$id ??= BUNDLE_ID;
    this.id = this.bundle.$id;
    // strict: false because definitions.v2 is a namespace, not a schema (ajv would call its keys
    // unknown keywords); refs into it resolve as plain JSON pointers.
    this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.warnings = [];
    const formats = new Set();
    collectFormats(this.bundle, formats);
    for (const f of formats) {
      if (this.ajv.formats[f]) continue;
      if (/^u(int)?\d*$/.test(f)) this.ajv.addFormat(f, { type: 'number', validate: (x) => Number.isInteger(x) && x >= 0 });
      else {
        this.ajv.addFormat(f, true);
        this.warnings.push(`format "${f}" is not known to ajv-formats; not checked`);
      }
    }
    this.ajv.addSchema(this.bundle);
    this.cache = new Map();
    // method -> [{union, pointer, paramsRef}] per union name.
    this.variants = {};
    for (const kind of Object.values(UNIONS))
      for (const name of Object.values(kind)) this.variants[name] = this.indexUnion(name);
  }

  has(pointer) {
    return at(this.bundle, pointer) !== undefined;
  }

  // An ajv validate function for the schema at `pointer` ("#/definitions/X").
  validatorAt(pointer) {
    let fn = this.cache.get(pointer);
    if (!fn) {
      fn = this.ajv.compile({ $ref: `${this.id}${pointer}` });
      this.cache.set(pointer, fn);
    }
    return fn;
  }

  // Checks `value` against the schema at `pointer`; returns "" or a readable error list.
  check(pointer, value) {
    const fn = this.validatorAt(pointer);
    if (fn(value)) return '';
    return this.ajv.errorsText(fn.errors, { separator: '; ', dataVar: 'message' });
  }

  indexUnion(name) {
    const pointer = `#/definitions/${name}`;
    const def = at(this.bundle, pointer);
    const out = new Map();
    if (!def) return out;
    const key = Array.isArray(def.oneOf) ? 'oneOf' : Array.isArray(def.anyOf) ? 'anyOf' : null;
    if (!key) {
      this.warnings.push(`definitions.${name} is not a oneOf/anyOf union; its methods are unknown`);
      return out;
    }
    def[key].forEach((alt, i) => {
      let altPointer = `${pointer}/${key}/${i}`;
      let body = alt;
      if (alt && typeof alt.$ref === 'string' && alt.$ref.startsWith('#')) {
        altPointer = alt.$ref;
        body = at(this.bundle, alt.$ref);
      }
      const m = body?.properties?.method;
      const method = m?.const ?? (Array.isArray(m?.enum) && m.enum.length === 1 ? m.enum[0] : undefined);
      if (typeof method !== 'string') {
        this.warnings.push(`${altPointer} has no method constant; skipped`);
        return;
      }
      const paramsRef = typeof body.properties.params?.$ref === 'string' ? body.properties.params.$ref : undefined;
      if (!out.has(method)) out.set(method, []);
      out.get(method).push({ union: name, pointer: altPointer, paramsRef });
    });
    return out;
  }

  static unionNames(kind, from) {
    return from ? [UNIONS[kind][from]] : Object.values(UNIONS[kind]);
  }
  findVariants(kind, from, method) {
    return Validator.unionNames(kind, from).flatMap((n) => this.variants[n].get(method) ?? []);
  }

  // The pointer of the oneOf/anyOf alternative of `pointer` whose `tag` property is the constant
  // `value` (alternatives may be $refs); undefined when the definition is no such union.
  taggedVariant(pointer, tag, value) {
    const def = at(this.bundle, pointer);
    const key = Array.isArray(def?.oneOf) ? 'oneOf' : Array.isArray(def?.anyOf) ? 'anyOf' : null;
    if (!key || typeof value !== 'string') return undefined;
    for (let i = 0; i < def[key].length; i++) {
      const alt = def[key][i];
      const altPointer = typeof alt?.$ref === 'string' && alt.$ref.startsWith('#') ? alt.$ref : `${pointer}/${key}/${i}`;
      const t = at(this.bundle, altPointer)?.properties?.[tag];
      if (t?.const === value || (Array.isArray(t?.enum) && t.enum.length === 1 && t.enum[0] === value)) return altPointer;
    }
    return undefined;
  }

  // The response type pointer for a request variant (see the header), or undefined.
  responsePointer(method, variant) {
    const candidates = [];
    if (variant?.paramsRef && /Params$/.test(variant.paramsRef)) candidates.push(variant.paramsRef.replace(/Params$/, 'Response'));
    const base = `${pascalCase(method)}Response`;
    const v2First = variant?.paramsRef?.startsWith('#/definitions/v2/');
    for (const p of v2First ? [`#/definitions/v2/${base}`, `#/definitions/${base}`] : [`#/definitions/${base}`, `#/definitions/v2/${base}`])
      candidates.push(p);
    return candidates.find((p) => this.has(p));
  }
}

// --- traffic -------------------------------------------------------------------------------------

function envelopeError(msg) {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return 'not a JSON object';
  if ('jsonrpc' in msg && msg.jsonrpc !== '2.0') return `"jsonrpc" is ${JSON.stringify(msg.jsonrpc)}, not "2.0"`;
  const idOk = (id) => typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
  if ('method' in msg) {
    if (typeof msg.method !== 'string') return '"method" is not a string';
    if ('id' in msg && !idOk(msg.id)) return '"id" is neither a string nor an integer';
    if ('params' in msg && (msg.params === null || typeof msg.params !== 'object')) return '"params" is not an object or array';
    return '';
  }
  if (!('id' in msg)) return 'neither a request, a notification nor a response';
  if (('result' in msg) === ('error' in msg)) return 'a response needs exactly one of "result" and "error"';
  if ('error' in msg) {
    const e = msg.error;
    if (!e || typeof e !== 'object' || !Number.isInteger(e.code) || typeof e.message !== 'string')
      return '"error" needs an integer "code" and a string "message"';
    if (msg.id !== null && !idOk(msg.id)) return '"id" is neither null, a string nor an integer';
  } else if (!idOk(msg.id)) return '"id" is neither a string nor an integer';
  return '';
}

// Validates traffic `text` (JSONL) against `bundle`; returns {errors, warnings, stats}.
const MCP_OWN_METHOD = /^(initialize|ping|tools\/.*|resources\/.*|prompts\/.*|logging\/.*|completion\/.*|notifications\/.*|elicitation\/create)$/;
const MCP_RESPONSES = { 'model/list': '#/definitions/McpModelListResponse' };

export function validateTraffic(bundle, text, { allowUnknownMethods = false, trustClient = false, mcp = false } = {}) {
  const v = new Validator(bundle);
  const errors = [];
  const warnings = [...v.warnings];
  const stats = { messages: 0, requests: 0, notifications: 0, responses: 0, errorResponses: 0, resultsChecked: 0, resultsUnchecked: 0, events: 0, mcpSkipped: 0 };
  const unchecked = new Set();
  // "<from>|<id json>" -> [{method, variant}...]: requests awaiting their result, oldest first (a
  // client may reuse an id while the first request is still open; the bad-input tests do).
  const pending = new Map();
  const addPending = (key, req) => {
    if (!pending.has(key)) pending.set(key, []);
    pending.get(key).push(req);
  };
  const hasEnvelope = v.has('#/definitions/JSONRPCMessage');
  if (!hasEnvelope) warnings.push('no definitions.JSONRPCMessage; using the built-in envelope check');
  const eventMsg = v.has('#/definitions/EventMsg') ? '#/definitions/EventMsg' : v.has('#/definitions/v2/EventMsg') ? '#/definitions/v2/EventMsg' : undefined;

  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const n = i + 1;
    const line = raw.trim();
    if (!line) return;
    const fail = (what) => errors.push(`line ${n}: ${what}\n    ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      fail(`not JSON (${e.message})`);
      return;
    }
    let from;
    let conn = '';
    if (msg && typeof msg === 'object' && !('method' in msg) && !('id' in msg) && msg.message && typeof msg.message === 'object') {
      from = msg.from;
      if (msg.conn !== undefined) conn = JSON.stringify(msg.conn);
      if (from !== 'client' && from !== 'server') {
        fail(`wrapped line with "from" ${JSON.stringify(from)} (expected "client" or "server")`);
        return;
      }
      msg = msg.message;
    }
    // --trust-client: the client's lines only say what each result answers (bad-input tests send
    // invalid requests on purpose); only the server's lines are validated.
    if (trustClient && from === 'client') {
      if (msg && typeof msg.method === 'string' && 'id' in msg) {
        const variants = v.findVariants('request', from, msg.method);
        addPending(`${conn}|client|${JSON.stringify(msg.id)}`, { method: msg.method, variant: variants[0], mcpOwn: mcp && MCP_OWN_METHOD.test(msg.method) });
      }
      return;
    }
    stats.messages++;

    const env = envelopeError(msg);
    if (env) {
      fail(`bad JSON-RPC envelope: ${env}`);
      return;
    }
    if (hasEnvelope) {
      const err = v.check('#/definitions/JSONRPCMessage', msg);
      if (err) fail(`does not match JSONRPCMessage: ${err}`);
    }

    if (typeof msg.method === 'string') {
      const kind = 'id' in msg ? 'request' : 'notification';
      if (mcp && MCP_OWN_METHOD.test(msg.method)) {
        stats.mcpSkipped++;
        if (kind === 'request') addPending(`${conn}|${from ?? ''}|${JSON.stringify(msg.id)}`, { method: msg.method, mcpOwn: true });
        return;
      }
      stats[kind === 'request' ? 'requests' : 'notifications']++;
      if (kind === 'notification' && /^llmx\/event(\/|$)/.test(msg.method)) stats.events++;
      const variants = v.findVariants(kind, from, msg.method);
      if (kind === 'request') addPending(`${conn}|${from ?? ''}|${JSON.stringify(msg.id)}`, { method: msg.method, variant: variants[0] });
      if (variants.length > 0) {
        // With two unions defining the same method (no direction given), one match is enough.
        const results = variants.map((vr) => [vr, v.check(vr.pointer, msg)]);
        if (!results.some(([, err]) => !err))
          for (const [vr, err] of results) fail(`${kind} ${msg.method} does not match ${vr.union} variant ${vr.pointer}: ${err}`);
        return;
      }
      const ev = /^llmx\/event(?:\/(.+))?$/.exec(msg.method);
      if (kind === 'notification' && ev && eventMsg) {
        const m = msg.params?.msg;
        if (!m || typeof m !== 'object') fail(`${msg.method}: params.msg is missing`);
        else {
          if (ev[1] !== undefined && m.type !== ev[1]) fail(`${msg.method}: params.msg.type is ${JSON.stringify(m.type)}`);
          // A tagged union: check against the variant of this `type` for a readable error.
          const variant = v.taggedVariant(eventMsg, 'type', m.type);
          const err = v.check(variant ?? eventMsg, m);
          if (err) fail(`${msg.method}: params.msg does not match ${variant ?? eventMsg}: ${err}`);
        }
        return;
      }
      const what = `${kind} method ${JSON.stringify(msg.method)} is in no ${Validator.unionNames(kind, from).join(' / ')} union of the bundle`;
      if (allowUnknownMethods) warnings.push(`line ${n}: ${what}`);
      else fail(what);
      return;
    }

    stats.responses++;
    if ('error' in msg) {
      stats.errorResponses++;
      return;
    }
    // The request came from the other side.
    const other = from === 'client' ? 'server' : from === 'server' ? 'client' : '';
    const key = `${conn}|${other}|${JSON.stringify(msg.id)}`;
    const open = pending.get(key) ?? [];
    const pointerOf = (req) => (mcp && MCP_RESPONSES[req.method] && v.has(MCP_RESPONSES[req.method]) ? MCP_RESPONSES[req.method] : undefined) ??
                               v.responsePointer(req.method, req.variant);
    // The oldest open request this result answers: the first whose response type it matches.
    let at = open.findIndex((r) => r.mcpOwn || (pointerOf(r) && !v.check(pointerOf(r), msg.result)));
    if (at < 0) at = 0;
    const req = open.splice(at, 1)[0];
    if (open.length === 0) pending.delete(key);
    if (req?.mcpOwn) {
      stats.mcpSkipped++;
      return;
    }
    const pointer = req && pointerOf(req);
    if (!pointer) {
      stats.resultsUnchecked++;
      unchecked.add(req ? req.method : `(no request with id ${JSON.stringify(msg.id)} before this line)`);
      return;
    }
    stats.resultsChecked++;
    const err = v.check(pointer, msg.result);
    if (err) fail(`result of ${req.method} does not match ${pointer}: ${err}`);
  });

  if (stats.messages === 0) errors.push('the traffic file holds no message');
  if (unchecked.size) warnings.push(`results without a response type in the bundle: ${[...unchecked].join(', ')}`);
  return { errors, warnings, stats };
}

// --- self-test -----------------------------------------------------------------------------------

// A tiny bundle in the layout above and sample traffic: the good lines must pass, each bad line
// must fail with the expected complaint.
function selfTest() {
  const bundle = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'LlmxAppServerProtocol',
    type: 'object',
    definitions: {
      RequestId: { anyOf: [{ type: 'string' }, { type: 'integer', format: 'int64' }] },
      JSONRPCMessage: {
        anyOf: [
          { type: 'object', required: ['id', 'method'], properties: { id: { $ref: '#/definitions/RequestId' }, method: { type: 'string' } } },
          { type: 'object', required: ['method'], not: { required: ['id'] }, properties: { method: { type: 'string' } } },
          { type: 'object', required: ['id', 'result'], properties: { id: { $ref: '#/definitions/RequestId' } } },
          { type: 'object', required: ['id', 'error'], properties: { error: { type: 'object', required: ['code', 'message'] } } },
        ],
      },
      ClientRequest: {
        oneOf: [
          {
            title: 'ThreadStartRequest', type: 'object', required: ['method', 'id', 'params'],
            properties: { method: { type: 'string', const: 'thread/start' }, id: { $ref: '#/definitions/RequestId' }, params: { $ref: '#/definitions/v2/ThreadStartParams' } },
          },
          { $ref: '#/definitions/GetUserAgentRequest' },
        ],
      },
      GetUserAgentRequest: {
        title: 'GetUserAgentRequest', type: 'object', required: ['method', 'id'],
        properties: { method: { type: 'string', enum: ['getUserAgent'] }, id: { $ref: '#/definitions/RequestId' }, params: { type: 'null' } },
      },
      GetUserAgentResponse: { type: 'object', required: ['userAgent'], properties: { userAgent: { type: 'string' } } },
      ServerNotification: {
        oneOf: [
          {
            title: 'TurnStartedNotification', type: 'object', required: ['method', 'params'],
            properties: { method: { type: 'string', const: 'turn/started' }, params: { $ref: '#/definitions/v2/TurnStartedNotification' } },
          },
        ],
      },
      EventMsg: {
        oneOf: [
          { title: 'TaskStartedEventMsg', type: 'object', required: ['type'], properties: { type: { type: 'string', enum: ['task_started'] }, model_context_window: { type: ['integer', 'null'], format: 'uint64' } } },
          { title: 'AgentMessageDeltaEventMsg', type: 'object', required: ['type', 'delta'], properties: { type: { type: 'string', enum: ['agent_message_delta'] }, delta: { type: 'string' } } },
        ],
      },
      v2: {
        ThreadStartParams: { type: 'object', properties: { model: { type: ['string', 'null'] }, cwd: { type: ['string', 'null'] } }, additionalProperties: false },
        ThreadStartResponse: { type: 'object', required: ['thread'], properties: { thread: { $ref: '#/definitions/v2/Thread' } } },
        Thread: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
        TurnStartedNotification: { type: 'object', required: ['threadId'], properties: { threadId: { type: 'string' } } },
      },
    },
  };
  const uuid = '0199a7c2-3f1e-7b9a-9c7d-1d2e3f4a5b6c';
  const good = [
    { id: 1, method: 'thread/start', params: { model: 'gpt-x', cwd: '/tmp' } },
    { id: 1, result: { thread: { id: uuid } } },
    { jsonrpc: '2.0', id: 'ua', method: 'getUserAgent' },
    { jsonrpc: '2.0', id: 'ua', result: { userAgent: 'llmx/0.1' } },
    { method: 'turn/started', params: { threadId: uuid } },
    { method: 'llmx/event/task_started', params: { id: '0', msg: { type: 'task_started', model_context_window: 200000 }, conversationId: uuid } },
    { method: 'llmx/event', params: { _meta: { requestId: 1 }, id: '1', msg: { type: 'agent_message_delta', delta: 'hi' } } },
    { from: 'client', message: { id: 7, method: 'thread/start', params: {} } },
    { from: 'server', message: { id: 7, result: { thread: { id: uuid } } } },
    { id: 9, error: { code: -32601, message: 'unknown method' } },
    { id: 3, result: {} }, // no request with this id: unchecked, not failed
  ].map((m) => JSON.stringify(m));
  const bad = [
    ['{"id":1,"method":', 'not JSON'],
    ['{"id":2}', 'bad JSON-RPC envelope'],
    ['{"id":2,"method":"thread/start","params":{"model":5}}', 'does not match ClientRequest variant'],
    ['{"id":2,"method":"thread/start","params":{"sandbox":"x"}}', 'additional properties'],
    ['{"id":2,"method":"thread/start","params":{}}\n{"id":2,"result":{"thread":{"id":"not-a-uuid"}}}', 'does not match #/definitions/v2/ThreadStartResponse'],
    ['{"id":4,"method":"getUserAgent"}\n{"id":4,"result":{}}', 'does not match #/definitions/GetUserAgentResponse'],
    ['{"method":"turn/started","params":{}}', "must have required property 'threadId'"],
    ['{"method":"llmx/event/task_started","params":{"id":"0","msg":{"type":"task_complete"}}}', 'params.msg.type is "task_complete"'],
    ['{"method":"llmx/event/task_started","params":{"id":"0","msg":{"type":"task_started","model_context_window":-1}}}', 'does not match #/definitions/EventMsg/oneOf/0: message/model_context_window must match format "uint64"'],
    ['{"method":"llmx/event/task_complete","params":{"id":"0","msg":{"type":"task_complete"}}}', 'does not match #/definitions/EventMsg: '],
    ['{"method":"llmx/event","params":{"id":"0"}}', 'params.msg is missing'],
    ['{"id":5,"method":"no/such/method"}', 'is in no ClientRequest / ServerRequest union'],
    ['{"from":"server","message":{"id":6,"method":"thread/start","params":{}}}', 'is in no ServerRequest union'],
    ['{"jsonrpc":"1.0","method":"turn/started","params":{"threadId":"t"}}', '"jsonrpc" is "1.0"'],
    ['', 'holds no message'],
  ];

  const problems = [];
  const ok = validateTraffic(bundle, good.join('\n') + '\n');
  if (ok.errors.length) problems.push(`good sample lines failed:\n  ${ok.errors.join('\n  ')}`);
  const want = { messages: 11, requests: 3, notifications: 3, responses: 5, errorResponses: 1, resultsChecked: 3, resultsUnchecked: 1, events: 2 };
  for (const [k, n] of Object.entries(want))
    if (ok.stats[k] !== n) problems.push(`good sample: stats.${k} is ${ok.stats[k]}, expected ${n}`);
  for (const [text, expected] of bad) {
    const r = validateTraffic(bundle, text);
    if (!r.errors.some((e) => e.includes(expected)))
      problems.push(`bad sample ${JSON.stringify(text)}: expected an error containing ${JSON.stringify(expected)}, got ${JSON.stringify(r.errors)}`);
  }
  const mcpLines = [
    { from: 'client', message: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18' } } },
    { from: 'server', message: { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', capabilities: {} } } },
    { from: 'server', message: { jsonrpc: '2.0', id: 0, method: 'elicitation/create', params: { message: 'ok?' } } },
    { from: 'server', message: { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } } },
    { from: 'server', message: { jsonrpc: '2.0', method: 'llmx/event', params: { _meta: { requestId: 1 }, id: '1', msg: { type: 'agent_message_delta', delta: 'hi' } } } },
  ].map((m) => JSON.stringify(m)).join('\n');
  const mcpOk = validateTraffic(bundle, mcpLines, { mcp: true, trustClient: true });
  if (mcpOk.errors.length || mcpOk.stats.mcpSkipped !== 3 || mcpOk.stats.events !== 1)
    problems.push(`--mcp: ${JSON.stringify(mcpOk)}`);
  const mcpBad = validateTraffic(bundle, mcpLines.replace('"delta":"hi"', '"delta":5'), { mcp: true, trustClient: true });
  if (!mcpBad.errors.some((e) => e.includes('params.msg does not match')))
    problems.push(`--mcp with a bad llmx/event: ${JSON.stringify(mcpBad.errors)}`);
  const lenient = validateTraffic(bundle, '{"id":5,"method":"no/such/method"}', { allowUnknownMethods: true });
  if (lenient.errors.length || !lenient.warnings.some((w) => w.includes('no/such/method')))
    problems.push(`--allow-unknown-methods: ${JSON.stringify(lenient)}`);
  try {
    validateTraffic({ title: 'no definitions' }, '{"id":1,"result":{}}');
    problems.push('a bundle without definitions was accepted');
  } catch (e) {
    if (!String(e.message).includes('"definitions"')) problems.push(`bundle without definitions: ${e.message}`);
  }

  if (problems.length) {
    console.error(`FAIL: validate_traffic self-test\n${problems.join('\n')}`);
    return 1;
  }
  console.log(`ok: validate_traffic self-test (${good.length} good lines, ${bad.length} bad samples)`);
  return 0;
}

// --- main ----------------------------------------------------------------------------------------

function main(argv) {
  const flags = new Set(argv.filter((a) => a.startsWith('--')));
  const files = argv.filter((a) => !a.startsWith('--'));
  if (flags.has('--self-test')) return selfTest();
  const known = new Set(['--allow-unknown-methods', '--quiet', '--trust-client', '--mcp']);
  const unknownFlag = [...flags].find((f) => !known.has(f));
  if (files.length !== 2 || unknownFlag) {
    console.error('usage: node validate_traffic.mjs <schema-bundle.json> <traffic.jsonl> [--allow-unknown-methods] [--trust-client] [--mcp] [--quiet]\n' +
                  '       node validate_traffic.mjs --self-test');
    return 2;
  }
  let bundle, text;
  try {
    bundle = JSON.parse(readFileSync(files[0], 'utf8'));
  } catch (e) {
    console.error(`cannot read the schema bundle ${files[0]}: ${e.message}`);
    return 2;
  }
  try {
    text = readFileSync(files[1], 'utf8');
  } catch (e) {
    console.error(`cannot read the traffic ${files[1]}: ${e.message}`);
    return 2;
  }
  let r;
  try {
    r = validateTraffic(bundle, text, { allowUnknownMethods: flags.has('--allow-unknown-methods'),
                                        trustClient: flags.has('--trust-client'), mcp: flags.has('--mcp') });
  } catch (e) {
    console.error(`cannot use the schema bundle ${files[0]}: ${e.message}`);
    return 2;
  }
  if (!flags.has('--quiet')) for (const w of r.warnings) console.error(`warning: ${w}`);
  const s = r.stats;
  const summary = `${s.messages} messages (${s.requests} requests, ${s.notifications} notifications incl. ${s.events} llmx/event, ` +
                  `${s.responses} responses incl. ${s.errorResponses} errors; ${s.resultsChecked} results checked, ${s.resultsUnchecked} unchecked` +
                  `${s.mcpSkipped ? `; ${s.mcpSkipped} MCP protocol messages left to the SDK test` : ''})`;
  if (r.errors.length) {
    console.error(`FAIL: ${r.errors.length} problem(s) in ${files[1]} against ${files[0]}:\n${r.errors.join('\n')}\n${summary}`);
    return 1;
  }
  console.log(`ok: ${summary}`);
  return 0;
}

// Only when run as a script (importing for validateTraffic does not run main).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) process.exitCode = main(process.argv.slice(2));

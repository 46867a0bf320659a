// Validates what `llmx mcp-server` sent against the official MCP JSON Schemas (issue 16):
// 2025-11-25 for connections that negotiated it in initialize, 2026-07-28 (and the tasks
// extension's schema) for every request that carried its version in `_meta`.
//
//   node validate_mcp_wire.mjs <traffic.jsonl>...
//
// Traffic lines are {"from": "client"|"server", "conn": <id>, "message": {...}} (the harness's
// LLMX_MCP_TRAFFIC_LOG, the SDK client test's --traffic). Checked, per server message:
//   * results and errors answering a client request, by that request's method and revision
//     (methods outside MCP — the conversation methods of DECISIONS P1 — are another test's);
//   * server requests (elicitation/create) and notifications (progress, tasks/status) of
//     2025-11-25 connections; llmx/event is llmx's own;
//   * never a server request on a connection that spoke 2026-07-28 (it cannot answer one).
// Connections that negotiated an older revision are counted, not checked. Exit 0 when all is
// valid and each revision had messages checked; 1 otherwise (2: usage).

import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const files = process.argv.slice(2);
if (!files.length) {
  console.error('usage: node validate_mcp_wire.mjs <traffic.jsonl>...');
  process.exit(2);
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const load = (name, id) => {
  const schema = JSON.parse(readFileSync(path.join(here, 'schemas', name), 'utf8'));
  schema.$id = id;
  ajv.addSchema(schema);
};
load('mcp-2025-11-25.schema.json', 'mcp-2025');
load('mcp-2026-07-28.schema.json', 'mcp-2026');
load('mcp-ext-tasks.schema.json', 'mcp-tasks');
const def = (id, name) => {
  const v = ajv.getSchema(`${id}#/$defs/${name}`);
  if (!v) throw new Error(`no ${name} in ${id}`);
  return v;
};

const V2025 = '2025-11-25';
const V2026 = '2026-07-28';
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const TASKS_EXT = 'io.modelcontextprotocol/tasks';

// The result type of each method, per revision (null: not MCP's, skipped).
function resultDefs2025(request) {
  switch (request.method) {
    case 'initialize': return ['InitializeResult'];
    case 'ping': case 'logging/setLevel': return ['EmptyResult'];
    case 'tools/list': return ['ListToolsResult'];
    case 'tools/call': return [request.params?.task ? 'CreateTaskResult' : 'CallToolResult'];
    case 'tasks/get': return ['GetTaskResult'];
    case 'tasks/result': return ['CallToolResult'];
    case 'tasks/list': return ['ListTasksResult'];
    case 'tasks/cancel': return ['CancelTaskResult'];
    default: return null;
  }
}

function resultDefs2026(request) {
  const caps = request.params?._meta?.['io.modelcontextprotocol/clientCapabilities'] ?? {};
  const tasks = !!caps.extensions?.[TASKS_EXT];
  switch (request.method) {
    case 'server/discover': return [['mcp-2026', 'DiscoverResult']];
    case 'tools/list': return [['mcp-2026', 'ListToolsResult']];
    case 'tools/call': return tasks ? [['mcp-tasks', 'CreateTaskResult'], ['mcp-2026', 'InputRequiredResult'],
                                       ['mcp-2026', 'CallToolResult']]
                                    : [['mcp-2026', 'CallToolResult'], ['mcp-2026', 'InputRequiredResult']];
    case 'tasks/get': return [['mcp-tasks', 'GetTaskResult']];
    case 'tasks/update': return [['mcp-tasks', 'UpdateTaskResult']];
    case 'tasks/cancel': return [['mcp-tasks', 'CancelTaskResult']];
    default: return null;
  }
}

function errorDef2026(code) {
  if (code === -32022) return 'UnsupportedProtocolVersionError';
  if (code === -32021) return 'MissingRequiredClientCapabilityError';
  return 'JSONRPCErrorResponse';
}

const failures = [];
const checked = { [V2025]: 0, [V2026]: 0 };
let skipped = 0;

// True when `value` matches one of the defs (the first def's errors are reported otherwise).
function check(where, value, defs) {
  let firstErrors = null;
  for (const [id, name] of defs) {
    const validate = def(id, name);
    if (validate(value)) return true;
    firstErrors ??= `${name}: ${ajv.errorsText(validate.errors, { separator: '; ' })}`;
  }
  failures.push(`${where}: ${firstErrors}\n    ${JSON.stringify(value).slice(0, 600)}`);
  return false;
}

for (const file of files) {
  const conns = new Map();  // conn -> {version, requests: Map(id -> request), stateless: bool}
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    const { from, conn, message: m } = JSON.parse(line);
    const where = `${path.basename(file)}:${i + 1}`;
    if (!conns.has(conn)) conns.set(conn, { version: null, requests: new Map(), stateless: false });
    const c = conns.get(conn);
    const key = JSON.stringify(m.id);
    if (from === 'client') {
      if (m.method && m.id !== undefined) c.requests.set(key, m);
      if (m.params?._meta?.[VERSION_KEY] !== undefined) c.stateless = true;
      return;
    }
    // From the server.
    if (m.method && m.id !== undefined) {  // a request to the client
      if (c.stateless) failures.push(`${where}: a server request on a connection that spoke ${V2026}: ${line}`);
      if (c.version === V2025 && m.method === 'elicitation/create' && check(where, m, [['mcp-2025', 'ElicitRequest']]))
        checked[V2025]++;
      else if (c.version !== V2025) skipped++;
      return;
    }
    if (m.method) {  // a notification
      const defs = { 'notifications/progress': 'ProgressNotification',
                     'notifications/tasks/status': 'TaskStatusNotification' }[m.method];
      if (!defs || c.version !== V2025) { skipped++; return; }
      if (check(where, m, [['mcp-2025', defs]])) checked[V2025]++;
      return;
    }
    const request = c.requests.get(key);
    if (!request) { skipped++; return; }  // an answer to a line that was not a request (bad input)
    c.requests.delete(key);
    const stateless = request.params?._meta?.[VERSION_KEY] !== undefined;
    if (stateless) {
      if (m.error) {
        if (check(where, m, [['mcp-2026', errorDef2026(m.error.code)]])) checked[V2026]++;
        return;
      }
      const defs = resultDefs2026(request);
      if (!defs) { skipped++; return; }
      if (check(`${where} (${request.method})`, m.result, defs)) checked[V2026]++;
      return;
    }
    if (request.method === 'initialize' && m.result) c.version = m.result.protocolVersion;
    if (c.version !== V2025 || m.error) { skipped++; return; }
    const defs = resultDefs2025(request);
    if (!defs) { skipped++; return; }
    if (check(`${where} (${request.method})`, m.result, defs.map((d) => ['mcp-2025', d]))) checked[V2025]++;
  });
}

console.log(`checked ${checked[V2025]} messages against ${V2025}, ${checked[V2026]} against ${V2026}; ` +
            `${skipped} not MCP's or of older revisions`);
if (failures.length) {
  console.error(`${failures.length} invalid:\n  ${failures.slice(0, 40).join('\n  ')}`);
  process.exit(1);
}
if (!checked[V2025] || !checked[V2026]) {
  console.error('nothing checked for one revision: the traffic did not reach the validator');
  process.exit(1);
}

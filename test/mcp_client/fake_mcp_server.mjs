// A scriptable MCP server over stdio for the MCP client's tests: well-behaved tools plus the
// ways a server can go wrong. No dependencies; one mode per run:
//   node fake_mcp_server.mjs <mode> [marker]
// modes: ok (tools echo, pid, image, progress, slow, crash, huge, write, elicit, grow), exit (dies at start),
// silent (never answers), garbage (noise before every answer), many (500 tools, paged),
// hang (answers the handshake and the tool list, then nothing at all, not even ping).
// `marker` only makes the command line unique, so a test can find its own processes.
import fs from 'node:fs';
import readline from 'node:readline';

const mode = process.argv[2] ?? 'ok';
let calls = 0;

if (mode === 'exit') {
  process.stderr.write('fake: refusing to start\n');
  process.exit(3);
}

function send(msg) {
  if (mode === 'garbage') process.stdout.write('this is not json\n{"jsonrpc":"2.0"}\n[1,2\n');
  process.stdout.write(JSON.stringify(msg) + '\n');
}
const result = (id, r) => send({ jsonrpc: '2.0', id, result: r });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

const baseTools = [
  { name: 'echo', description: 'Echoes its message.', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, annotations: { readOnlyHint: true } },
  { name: 'pid', description: 'The server process id and how many calls it served.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'image', description: 'A tiny image.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'progress', description: 'Reports progress, then answers.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'slow', description: 'Never answers.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'crash', description: 'Kills the server.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'huge', description: 'Returns 50 MB.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'write', description: 'Pretends to change something (not read-only).', inputSchema: { type: 'object', properties: { what: { type: 'string' } } } },
  { name: 'elicit', description: 'Asks the user a question, answers with the reply.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'grow', description: 'Adds the tool `extra` and says so (list_changed).', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
];
const manyTools = Array.from({ length: 500 }, (_, i) => ({ name: `tool_${i}`, description: `Tool number ${i}.`, inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }));
const tools = mode === 'many' ? manyTools : baseTools;
const waiting = new Map();  // our elicitation id -> the tools/call id it serves
let nextOwnId = 1000;
let listed = false;

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (mode === 'silent') return;
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  // FAKE_MCP_LOG (from the server's `env` table): every method received, one per line.
  if (process.env.FAKE_MCP_LOG && msg.method) fs.appendFileSync(process.env.FAKE_MCP_LOG, msg.method + '\n');
  if (mode === 'hang' && listed) return;
  if (msg.id !== undefined && msg.method === undefined) {  // an answer to our elicitation
    const callId = waiting.get(msg.id);
    if (callId !== undefined) { waiting.delete(msg.id); result(callId, text('user said: ' + JSON.stringify(msg.result ?? msg.error))); }
    return;
  }
  switch (msg.method) {
    case 'initialize':
      return result(msg.id, { protocolVersion: '2025-06-18', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'fake', version: '1.0.0' } });
    case 'notifications/initialized':
      return;
    case 'ping':
      return result(msg.id, {});
    case 'tools/list': {
      const start = Number(msg.params?.cursor ?? 0);
      const page = tools.slice(start, start + 100);
      const next = start + 100 < tools.length ? String(start + 100) : undefined;
      if (!next) listed = true;
      return result(msg.id, next ? { tools: page, nextCursor: next } : { tools: page });
    }
    case 'tools/call': {
      calls++;
      const name = msg.params?.name;
      const args = msg.params?.arguments ?? {};
      if (mode === 'many') return result(msg.id, text(`${name} got ${JSON.stringify(args)}`));
      switch (name) {
        case 'echo': return result(msg.id, text('echo: ' + args.message));
        case 'pid': return result(msg.id, { content: [{ type: 'text', text: `pid ${process.pid}` }], structuredContent: { pid: process.pid, calls } });
        case 'image': return result(msg.id, { content: [{ type: 'text', text: 'a red dot' }, { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] });
        case 'progress': {
          const token = msg.params?._meta?.progressToken;
          for (let i = 1; i <= 3; i++) send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3, message: `step ${i}` } });
          return result(msg.id, text('progress done'));
        }
        case 'slow': return;  // never answers
        case 'crash': process.stderr.write('fake: crashing on purpose\n'); process.exit(7);
        case 'huge': return result(msg.id, text('x'.repeat(50 * 1024 * 1024)));
        case 'grow':
          if (!tools.some((t) => t.name === 'extra'))
            tools.push({ name: 'extra', description: 'Added later.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } });
          send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
          return result(msg.id, text('grown'));
        case 'extra': return result(msg.id, text('extra ran'));
        case 'write': return result(msg.id, text('wrote ' + (args.what ?? '')));
        case 'elicit': {
          const id = nextOwnId++;
          waiting.set(id, msg.id);
          return send({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } });
        }
        default: return send({ jsonrpc: '2.0', id: msg.id, error: { code: -32602, message: `Unknown tool: ${name}` } });
      }
    }
    default:
      if (msg.id !== undefined) send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
  }
});
rl.on('close', () => process.exit(0));

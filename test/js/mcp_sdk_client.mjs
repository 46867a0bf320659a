// The official MCP TypeScript SDK (@modelcontextprotocol/sdk, version pinned in package.json)
// drives `llmx mcp-server` the way a real MCP host does (ctest: js/mcp_sdk_client).
//
//   node mcp_sdk_client.mjs --llmx <llmx binary> --mock-llm <mock-llm binary> [--traffic <out.jsonl>] [--http]
//
// It starts mock-llm itself, makes a temp LLMX_HOME and a temp workspace, connects with
// StdioClientTransport (capabilities {elicitation: {}}) — or with --http, starts
// `llmx mcp-server --listen http://127.0.0.1:0` and connects with StreamableHTTPClientTransport
// (ctest: js/mcp_sdk_client_http) — and checks, through the SDK's own
// validation (initialize handshake, tools/list parsing, outputSchema checking of structuredContent,
// elicitation request/result schemas, progress notifications):
//   * tools/list has `llmx` and `llmx-reply`, each with an outputSchema (DECISIONS P5);
//   * a `llmx` call under approval-policy untrusted asks exactly once through elicitation/create
//     (P4) with a decision schema and the command; the SDK handler answers
//     {action: accept, content: {decision: approved}} and the command really runs;
//   * the result carries structuredContent {threadId, content}, the same text as a text block, no
//     isError; `llmx/event` notifications (session_configured, task_complete) belong to that thread;
//   * the call's progressToken brings notifications/progress (P6);
//   * `llmx-reply` continues the thread;
//   * the same call as a task (experimental.tasks.callToolStream), its approval tagged with it;
//   * over HTTP: the session ends with DELETE, and a new client (a new session) still gets the
//     task, which outlives the session that made it.
// --traffic writes every JSON-RPC message seen after connect (both directions, one per line).
// Exits 0 on success; on failure prints what went wrong plus the server's stderr and exits 1.
// Child processes are always stopped (mock-llm also exits when our stdin pipe to it closes).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, readFileSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const OVERALL_TIMEOUT_MS = 50_000; // below the ctest TIMEOUT, so we report instead of being killed
const CALL_TIMEOUT_MS = 20_000;

const { values: opts } = parseArgs({
  options: {
    llmx: { type: 'string' },
    'mock-llm': { type: 'string' },
    traffic: { type: 'string' },
    http: { type: 'boolean' },
  },
});
if (!opts.llmx || !opts['mock-llm']) {
  console.error('usage: node mcp_sdk_client.mjs --llmx <llmx> --mock-llm <mock-llm> [--traffic <out.jsonl>]');
  process.exit(2);
}

// --- bookkeeping for cleanup and diagnostics -----------------------------------------------------

const tempDirs = [];
let mock = null;
let server = null;  // llmx mcp-server --listen, with --http
let serverStderr = '';
const traffic = [];

function cleanupSync() {
  for (const child of [mock, server]) {
    if (child && child.exitCode === null && child.signalCode === null) {
      try { child.kill('SIGKILL'); } catch { /* already gone */ }
    }
  }
  for (const d of tempDirs) {
    try { rmSync(d, { recursive: true, force: true }); } catch { /* best effort */ }
  }
  tempDirs.length = 0;
}
process.on('exit', cleanupSync);

class CheckFailed extends Error {}
let checks = 0;
function check(cond, what, detail) {
  checks++;
  if (!cond) {
    let msg = `check failed: ${what}`;
    if (detail !== undefined) msg += `\n  got: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`;
    throw new CheckFailed(msg);
  }
}

function tmp(prefix) {
  const d = mkdtempSync(path.join(process.env.TMPDIR || tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}

// `llmx mcp-server --listen http://127.0.0.1:0`; resolves with its endpoint (first stdout line).
function startListener(bin, env) {
  return new Promise((resolve, reject) => {
    server = spawn(bin, ['mcp-server', '--listen', 'http://127.0.0.1:0'], { env, cwd: env.HOME, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`llmx printed no URL within 10 s; stderr: ${serverStderr}`)), 10_000);
    server.on('exit', (code, sig) => { clearTimeout(timer); reject(new Error(`llmx exited early (${code ?? sig}); stderr: ${serverStderr}`)); });
    server.stderr.on('data', (b) => { serverStderr += b; });
    server.stdout.on('data', (b) => {
      out += b;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      const line = out.slice(0, nl).trim();
      if (!line.startsWith('listening http://')) reject(new Error(`llmx's first line is not 'listening URL': ${line}`));
      else resolve(line.slice('listening '.length));
    });
  });
}

// mock-llm on a free port; resolves with its base URL (its first stdout line).
function startMock(bin) {
  return new Promise((resolve, reject) => {
    // --exit-on-stdin-eof: if this script dies, the mock goes with it.
    mock = spawn(bin, ['--exit-on-stdin-eof'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`mock-llm printed no URL within 10 s; stderr: ${err}`)), 10_000);
    mock.on('error', (e) => { clearTimeout(timer); reject(new Error(`cannot start mock-llm ${bin}: ${e.message}`)); });
    mock.on('exit', (code, sig) => { clearTimeout(timer); reject(new Error(`mock-llm exited early (${code ?? sig}); stderr: ${err}`)); });
    mock.stderr.on('data', (b) => { err += b; });
    mock.stdout.on('data', (b) => {
      out += b;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        const url = out.slice(0, nl).trim();
        if (!url.startsWith('http://')) reject(new Error(`mock-llm's first line is not a URL: ${url}`));
        else resolve(url);
      }
    });
  });
}

async function mockRequests(url) {
  const res = await fetch(new URL('/_mock/requests', url));
  if (!res.ok) throw new Error(`GET /_mock/requests: HTTP ${res.status}`);
  return (await res.json()).requests;
}

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}

// --- the test ------------------------------------------------------------------------------------

async function run() {
  const home = tmp('llmx-js-home-');
  const ws = realpathSync(tmp('llmx-js-ws-'));
  const url = await startMock(opts['mock-llm']);

  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmp('llmx-js-user-home-'),  // hermetic: no login profile of the machine's user runs
    LLMX_HOME: home,
    LLMX_BASE_URL: url,
    LLMX_API_KEY: 'test',
  };
  let transport;
  let endpoint = null;
  if (opts.http) {
    endpoint = await startListener(opts.llmx, env);
    transport = new StreamableHTTPClientTransport(new URL(endpoint));
  } else {
    transport = new StdioClientTransport({ command: opts.llmx, args: ['mcp-server'], env, stderr: 'pipe' });
    transport.stderr?.on('data', (b) => {
      serverStderr += b;
      if (serverStderr.length > 64 * 1024) serverStderr = serverStderr.slice(-32 * 1024);
    });
  }

  const client = new Client({ name: 'llmx-js-sdk-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });

  // Every llmx/event notification (the SDK has no handler for this method, so the fallback sees it).
  const events = [];
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === 'llmx/event') events.push(n.params);
  };

  // Approvals: record each elicitation and approve it the standard way.
  const elicitations = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicitations.push(req.params);
    return { action: 'accept', content: { decision: 'approved' } };
  });

  try {
    await client.connect(transport);

    // The SDK strips keys it does not know (llmx_command, ...) from the parsed request it hands our
    // handler; keep the raw messages as well, in both directions.
    const onmessage = transport.onmessage;
    transport.onmessage = (msg, extra) => { traffic.push(msg); onmessage?.(msg, extra); };
    const send = transport.send.bind(transport);
    transport.send = (msg, o) => { traffic.push(msg); return send(msg, o); };

    const info = client.getServerVersion();
    check(info?.name === 'llmx-mcp-server', 'serverInfo.name is llmx-mcp-server', info);
    check(client.getServerCapabilities()?.tools, 'the server declares the tools capability', client.getServerCapabilities());

    // tools/list: both tools, each with an outputSchema (the SDK compiles it and checks results).
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    check(byName.llmx && byName['llmx-reply'], 'tools/list has llmx and llmx-reply', tools.map((t) => t.name));
    for (const name of ['llmx', 'llmx-reply']) {
      const os = byName[name].outputSchema;
      check(os?.type === 'object' && os.properties?.threadId && os.properties?.content,
            `${name} declares an outputSchema with threadId and content`, os);
    }
    check(byName.llmx.inputSchema?.properties?.['approval-policy'], 'llmx takes approval-policy', byName.llmx.inputSchema);

    // A command that is not known-safe (a redirection), so approval-policy untrusted asks first.
    let progress = 0;
    const first = await client.callTool(
      {
        name: 'llmx',
        arguments: {
          prompt: '@mock:shell cmd=echo sdk-approved > out.txt',
          'approval-policy': 'untrusted',
          sandbox: 'workspace-write',
          cwd: ws,
        },
      },
      undefined,
      { timeout: CALL_TIMEOUT_MS, onprogress: () => { progress++; } },
    );
    const firstText = textOf(first);
    check(first.isError !== true, 'the llmx call is not an error', first);
    check(elicitations.length === 1, 'exactly one elicitation/create was sent', elicitations);
    const ask = elicitations[0];
    check(ask.message.includes('echo sdk-approved > out.txt'), 'the elicitation message names the command', ask.message);
    check(ask.requestedSchema?.properties?.decision?.enum?.includes('approved'),
          'the elicitation asks for a decision enum', ask.requestedSchema);
    const rawAsk = traffic.find((m) => m.method === 'elicitation/create');
    check(JSON.stringify(rawAsk?.params?._meta?.llmx_command) === JSON.stringify(['bash', '-lc', 'echo sdk-approved > out.txt']),
          'the raw elicitation carries llmx_command', rawAsk);
    check(rawAsk.params._meta.llmx_elicitation === 'exec-approval', 'it is an exec approval', rawAsk.params);

    const sc = first.structuredContent;
    check(sc && typeof sc.threadId === 'string' && sc.threadId.length > 0, 'structuredContent.threadId', first);
    check(typeof sc.content === 'string' && sc.content === firstText, 'structuredContent.content equals the text block', first);
    check(firstText.includes('The command printed: Exit code: 0'), 'the model was told the command succeeded', firstText);
    const outFile = path.join(ws, 'out.txt');
    check(existsSync(outFile) && readFileSync(outFile, 'utf8') === 'sdk-approved\n', 'the approved command ran in cwd',
          existsSync(outFile) ? readFileSync(outFile, 'utf8') : '(no out.txt)');
    check(progress >= 1, 'notifications/progress arrived for the call\'s progressToken', progress);

    const types = events.map((e) => e.msg?.type);
    const configured = events.find((e) => e.msg?.type === 'session_configured');
    check(configured?.msg?.session_id === sc.threadId, 'session_configured names the returned threadId', configured);
    for (const t of ['exec_approval_request', 'exec_command_begin', 'exec_command_end', 'task_complete'])
      check(types.includes(t), `an llmx/event ${t} was streamed`, types);

    // The tool output reached the model in its next request.
    const reqs = await mockRequests(url);
    check(reqs.length === 2, 'the mock got two chat requests for the shell turn', reqs.length);
    const toolMsgs = (reqs[1].messages ?? []).filter((m) => m.role === 'tool');
    check(toolMsgs.some((m) => JSON.stringify(m.content).includes('Exit code: 0')), 'the model saw the tool output', toolMsgs);

    // llmx-reply continues the same thread.
    const eventsBefore = events.length;
    const reply = await client.callTool(
      { name: 'llmx-reply', arguments: { conversationId: sc.threadId, prompt: '@mock:text deltas=1' } },
      undefined,
      { timeout: CALL_TIMEOUT_MS },
    );
    const replyText = textOf(reply);
    check(reply.isError !== true, 'the llmx-reply call is not an error', reply);
    check(reply.structuredContent?.threadId === sc.threadId, 'llmx-reply answers on the same threadId', reply);
    check(replyText.length > 0 && reply.structuredContent.content === replyText, 'llmx-reply has the answer text', reply);
    check(elicitations.length === 1, 'the text reply asked nothing', elicitations.length);
    check(events.slice(eventsBefore).some((e) => e.msg?.type === 'task_complete'), 'the reply streamed task_complete');
    const reqs2 = await mockRequests(url);
    check(reqs2.length === 3, 'the reply made one more chat request', reqs2.length);
    check(JSON.stringify(reqs2[2].messages).includes('echo sdk-approved'), 'the reply request carries the earlier history');

    // The same tool as a task (2025-11-25): the SDK's own task client creates it, polls
    // tasks/get and fetches tasks/result; an approval on the way is asked with the task's tag.
    check(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'the server declares tool calls as tasks',
          client.getServerCapabilities());
    check(byName.llmx.execution?.taskSupport === 'optional', 'llmx may be called as a task', byName.llmx);
    const seen = [];
    let taskResult = null;
    const stream = client.experimental.tasks.callToolStream(
      {
        name: 'llmx',
        arguments: { prompt: '@mock:shell cmd=echo as-task > task.txt', 'approval-policy': 'untrusted',
                     sandbox: 'workspace-write', cwd: ws },
      },
      undefined,
      { task: { ttl: 120000 }, timeout: CALL_TIMEOUT_MS },
    );
    for await (const m of stream) {
      seen.push(m.type === 'result' ? 'result' : `${m.type}:${m.task?.status ?? m.error?.message}`);
      if (m.type === 'result') taskResult = m.result;
      if (m.type === 'error') throw new Error(`task failed: ${m.error?.message}`);
    }
    check(seen[0] === 'taskCreated:working', 'the task was created working', seen);
    check(seen.at(-1) === 'result', 'the stream ended with the result', seen);
    check(taskResult?.structuredContent?.threadId, 'the task result has a threadId', taskResult);
    check(taskResult?._meta?.['io.modelcontextprotocol/related-task']?.taskId, 'the result names its task', taskResult);
    check(elicitations.length === 2, 'the task asked its approval through elicitation', elicitations.length);
    const taskAsk = traffic.filter((m) => m.method === 'elicitation/create').at(-1);
    check(taskAsk?.params?._meta?.['io.modelcontextprotocol/related-task']?.taskId ===
          taskResult._meta['io.modelcontextprotocol/related-task'].taskId, 'the elicitation is tagged with the task', taskAsk);
    const taskFile = path.join(ws, 'task.txt');
    check(existsSync(taskFile) && readFileSync(taskFile, 'utf8') === 'as-task\n', 'the task ran its approved command');
    const listed = await client.experimental.tasks.listTasks();
    check(listed.tasks?.some((t) => t.status === 'completed'), 'tasks/list shows the completed task', listed);

    if (opts.http) {
      // The session ends (DELETE); the task does not: a new client, a new session, still has it.
      const sessionId = transport.sessionId;
      check(typeof sessionId === 'string' && sessionId.length >= 16, 'the server named the session', sessionId);
      await transport.terminateSession();
      const gone = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
                   'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
      });
      check(gone.status === 404, 'a deleted session is 404', gone.status);
      const again = new Client({ name: 'llmx-js-sdk-test-2', version: '1.0.0' }, { capabilities: {} });
      const transport2 = new StreamableHTTPClientTransport(new URL(endpoint));
      await again.connect(transport2);
      check(transport2.sessionId && transport2.sessionId !== sessionId, 'the new client has a session of its own');
      const taskId = taskResult._meta['io.modelcontextprotocol/related-task'].taskId;
      const task = await again.experimental.tasks.getTask(taskId);
      check(task.status === 'completed' && task.taskId === taskId, 'the task outlived its session', task);
      const stored = await again.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)
        .catch((e) => ({ error: e.message }));
      check(stored?.structuredContent?.threadId === taskResult.structuredContent.threadId,
            'its result is there for the new session', stored);
      await transport2.terminateSession();
      await again.close();
    }

    console.log(`ok: ${checks} checks; ${events.length} llmx/event notifications, ${progress} progress notifications; reply: ${JSON.stringify(replyText)}; task: ${seen.join(' ')}`);
  } finally {
    if (opts.traffic) writeFileSync(opts.traffic, traffic.map((m) => JSON.stringify(m)).join('\n') + '\n');
    await client.close().catch(() => {});
    if (server) server.kill('SIGTERM');
    if (mock) {
      const exited = new Promise((r) => { if (mock.exitCode !== null || mock.signalCode !== null) r(); else mock.once('exit', r); });
      mock.stdin.end();
      mock.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2000).unref())]);
    }
    cleanupSync();
  }
}

const watchdog = setTimeout(() => {
  console.error(`FAIL: no result within ${OVERALL_TIMEOUT_MS / 1000} s\n--- llmx mcp-server stderr ---\n${serverStderr}`);
  cleanupSync();
  process.exit(1);
}, OVERALL_TIMEOUT_MS);
watchdog.unref();

try {
  await run();
  process.exitCode = 0;
} catch (e) {
  console.error(`FAIL: ${e instanceof CheckFailed ? e.message : e?.stack ?? e}`);
  console.error(`--- llmx mcp-server stderr (last 32 KiB) ---\n${serverStderr.slice(-32 * 1024)}`);
  process.exitCode = 1;
}

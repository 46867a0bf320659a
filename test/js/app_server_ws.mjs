// `llmx app-server --listen ws://127.0.0.1:0` (issue 16, point 4) driven by Node's own WebSocket
// client (ctest: js/app_server_over_websocket; node --experimental-websocket on Node 20):
//   * the first stdout line is `listening ws://127.0.0.1:PORT`; GET /healthz and /readyz answer 200;
//   * each connection is its own session with its own initialize (a request before it is refused);
//   * two connections attached to one thread (thread/start on A, thread/resume on B) both receive
//     the turn A starts, through turn/completed;
//   * a browser page from another origin is refused with 403 (raw handshake);
//   * SIGTERM ends the server cleanly (exit 0).
//
//   node --experimental-websocket app_server_ws.mjs --llmx <llmx> --mock-llm <mock-llm>

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({ options: { llmx: { type: 'string' }, 'mock-llm': { type: 'string' } } });
if (!opts.llmx || !opts['mock-llm']) {
  console.error('usage: node --experimental-websocket app_server_ws.mjs --llmx <llmx> --mock-llm <mock-llm>');
  process.exit(2);
}

const dirs = [];
const children = [];
const tmp = (p) => { const d = mkdtempSync(path.join(tmpdir(), p)); dirs.push(d); return d; };
let checks = 0;
function check(ok, what, detail) {
  if (!ok) throw new Error(`${what}${detail === undefined ? '' : `: ${JSON.stringify(detail)}`}`);
  checks++;
}

// A child whose first stdout line is returned.
function start(bin, args, env) {
  const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
  children.push(child);
  let err = '';
  child.stderr.on('data', (b) => { err += b; });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${bin}: no first line in 10 s; stderr: ${err}`)), 10_000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${bin} exited early (${code}); stderr: ${err}`)); });
    child.stdout.on('data', (b) => {
      out += b;
      const nl = out.indexOf('\n');
      if (nl >= 0) { clearTimeout(timer); resolve({ child, line: out.slice(0, nl).trim() }); }
    });
  });
}

// A JSON-RPC client over one WebSocket (the app server's envelope has no "jsonrpc").
async function connect(url) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error(`cannot connect to ${url}`)); });
  const messages = [];
  const waiters = [];
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    messages.push(m);
    for (const w of [...waiters]) if (w.pred(m)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(m); }
  };
  let next = 1;
  const waitFor = (pred, what) => new Promise((resolve, reject) => {
    const seen = messages.find(pred);
    if (seen) return resolve(seen);
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 15_000);
    waiters.push({ pred, resolve: (m) => { clearTimeout(timer); resolve(m); } });
  });
  const request = async (method, params) => {
    const id = next++;
    ws.send(JSON.stringify({ id, method, params }));
    return waitFor((m) => m.id === id && !m.method, `the answer to ${method}`);
  };
  return { ws, messages, request, waitFor };
}

// The raw handshake a browser page on another origin would send.
function handshake(port, origin) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
              `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: ${origin}\r\n\r\n`);
    });
    let data = '';
    s.on('data', (b) => { data += b; if (data.includes('\r\n')) { s.destroy(); resolve(data.split('\r\n')[0]); } });
    s.on('error', reject);
  });
}

async function run() {
  const home = tmp('llmx-ws-home-');
  const { line: mockUrl } = await start(opts['mock-llm'], ['--exit-on-stdin-eof'], process.env);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp('llmx-ws-user-'), LLMX_HOME: home,
                LLMX_BASE_URL: mockUrl, LLMX_API_KEY: 'test' };
  const { child: server, line } = await start(opts.llmx, ['app-server', '--listen', 'ws://127.0.0.1:0'], env);
  const m = /^listening (ws:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
  check(m, 'the first line says where it listens', line);
  const [, url, port] = m;

  for (const p of ['/healthz', '/readyz']) {
    const res = await fetch(`http://127.0.0.1:${port}${p}`);
    check(res.status === 200, `GET ${p} answers 200`, res.status);
  }
  check((await handshake(port, 'http://evil.example')).includes(' 403 '), 'another origin is refused with 403');
  check((await handshake(port, `http://localhost:${port}`)).includes(' 101 '), 'a local page may connect');

  const a = await connect(url);
  const b = await connect(url);
  const early = await a.request('thread/start', {});
  check(early.error, 'a request before initialize is refused', early);
  for (const c of [a, b]) {
    const init = await c.request('initialize', { clientInfo: { name: 'ws-test', version: '1' } });
    check(!init.error, 'each connection initializes its own session', init);
  }
  const started = await a.request('thread/start', {});
  const threadId = started.result?.thread?.id;
  check(threadId, 'thread/start on A gives a thread', started);
  const resumed = await b.request('thread/resume', { threadId });
  check(resumed.result?.thread?.id === threadId, 'B attaches to the same thread', resumed);
  const turn = await a.request('turn/start', { threadId, input: [{ type: 'text', text: '@mock:text deltas=3' }] });
  check(!turn.error, 'turn/start on A', turn);
  for (const [name, c] of [['A', a], ['B', b]]) {
    const done = await c.waitFor((x) => x.method === 'turn/completed', `turn/completed on ${name}`);
    check(done.params?.turn?.status === 'completed', `${name} sees the turn complete`, done);
    check(c.messages.some((x) => x.method === 'item/agentMessage/delta'), `${name} got the streamed answer`);
  }
  a.ws.close();
  // B goes on after A left.
  const again = await b.request('turn/start', { threadId, input: [{ type: 'text', text: '@mock:echo still here' }] });
  check(!again.error, 'B starts a turn after A closed', again);
  await b.waitFor((x) => x.method === 'turn/completed' && x.params?.turn?.id === again.result?.turn?.id, 'B turn/completed');
  b.ws.close();

  // A client that leaves mid-turn, alone on its thread: the turn stops (nobody is left to see it)
  // and the thread stays resumable.
  const c = await connect(url);
  await c.request('initialize', { clientInfo: { name: 'ws-test', version: '1' } });
  const lone = (await c.request('thread/start', {})).result?.thread?.id;
  const hang = await c.request('turn/start', { threadId: lone, input: [{ type: 'text', text: '@mock:hang' }] });
  check(!hang.error, 'a turn that would run forever started', hang);
  await c.waitFor((x) => x.method === 'turn/started', 'turn/started');
  c.ws.close();
  const rolloutOf = () => {
    const found = [];
    const walk = (d) => { for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p); else if (e.name.includes(lone) && e.name.endsWith('.jsonl')) found.push(p);
    } };
    walk(home);
    return found.length ? readFileSync(found[0], 'utf8') : '';
  };
  let aborted = false;
  for (let i = 0; i < 200 && !aborted; i++) {
    aborted = rolloutOf().includes('"turn_aborted"');
    if (!aborted) await new Promise((r) => setTimeout(r, 50));
  }
  check(aborted, 'the turn of a client that left was interrupted', rolloutOf().slice(-400));
  const d = await connect(url);
  await d.request('initialize', { clientInfo: { name: 'ws-test', version: '1' } });
  const back = await d.request('thread/resume', { threadId: lone });
  check(back.result?.thread?.id === lone, 'the thread is resumed from its rollout', back);
  d.ws.close();

  const exited = new Promise((resolve) => server.once('exit', (code, sig) => resolve(code ?? sig)));
  server.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 20_000))]);
  check(code === 0, 'SIGTERM ends the server with 0', code);
  console.log(`ok: ${checks} checks`);
}

const watchdog = setTimeout(() => { console.error('FAIL: no result within 60 s'); cleanup(); process.exit(1); }, 60_000);
function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) try { c.kill('SIGKILL'); } catch {}
  for (const d of dirs) try { rmSync(d, { recursive: true, force: true }); } catch {}
}
run().then(() => { clearTimeout(watchdog); cleanup(); process.exit(0); },
           (e) => { clearTimeout(watchdog); console.error(`FAIL: ${e.message}`); cleanup(); process.exit(1); });

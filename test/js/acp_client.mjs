// `llmx acp` driven by the official Agent Client Protocol SDK (@agentclientprotocol/sdk, pinned in
// package.json) the way an editor does (ctest: js/acp_client; issue 17):
//   * initialize (version 1, capabilities, the api-key auth method) and authenticate;
//   * session/new with the modes (approval presets); a prompt with a streamed answer;
//   * a command that needs approval: session/request_permission answered allow, then reject;
//   * cancel mid-turn (the prompt answers `cancelled`);
//   * a new agent process lists the stored sessions and loads one: its history replayed as
//     session/update before the answer, then a prompt goes on in it;
//   * an MCP server the client provides (session/new `mcpServers`), its tool called as a tool call;
//   * every message the agent wrote, against the SDK's own schema (schema/v1/schema.json);
//   * bad input: an unknown session (-32002), a prompt while another runs (-32600), a relative
//     cwd and a malformed prompt (-32602), an unknown method (-32601).
//
//   node acp_client.mjs --llmx <llmx> --mock-llm <mock-llm>
import * as acp from '@agentclientprotocol/sdk';
import Ajv2020 from 'ajv/dist/2020.js';
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({ options: { llmx: { type: 'string' }, 'mock-llm': { type: 'string' },
                                                'fake-mcp': { type: 'string' } } });
if (!opts.llmx || !opts['mock-llm'] || !opts['fake-mcp']) {
  console.error('usage: node acp_client.mjs --llmx <llmx> --mock-llm <mock-llm> --fake-mcp <fake_mcp_server.mjs>');
  process.exit(2);
}

const children = [];
const dirs = [];
let checks = 0;
let stderr = '';
function check(ok, what, detail) {
  checks++;
  if (!ok) throw new Error(`check failed: ${what}${detail === undefined ? '' : `\n  got: ${JSON.stringify(detail)}`}`);
}
function tmp(prefix) {
  const d = mkdtempSync(path.join(process.env.TMPDIR || tmpdir(), prefix));
  dirs.push(d);
  return d;
}
function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) try { c.kill('SIGKILL'); } catch {}
  for (const d of dirs) try { rmSync(d, { recursive: true, force: true }); } catch {}
}

function startMock() {
  return new Promise((resolve, reject) => {
    const mock = spawn(opts['mock-llm'], ['--exit-on-stdin-eof'], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(mock);
    let out = '';
    mock.on('exit', (code) => reject(new Error(`mock-llm exited (${code})`)));
    mock.stdout.on('data', (b) => {
      out += b;
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')).trim());
    });
  });
}

async function expectError(promise, code, what) {
  try {
    await promise;
  } catch (e) {
    check(e.code === code, `${what}: error ${code}`, { code: e.code, message: e.message, data: e.data });
    return e;
  }
  throw new Error(`check failed: ${what}: expected error ${code}, got a result`);
}

// Both directions of every agent, line by line, for the schema check at the end.
const sent = new Map();  // "<agent>:<id>" -> method of our request
const received = [];     // [agent, message]
let agents = 0;
function recordTraffic(p) {
  const agent = agents++;
  let inBuf = '', outBuf = '';
  const lines = (buf, chunk, each) => {
    buf += chunk.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) try { each(JSON.parse(line)); } catch { /* not JSON: the agent's own error to find */ }
    }
    return buf;
  };
  const write = p.stdin.write.bind(p.stdin);
  p.stdin.write = (chunk, ...rest) => {
    inBuf = lines(inBuf, chunk, (m) => { if (m.method && m.id !== undefined) sent.set(`${agent}:${m.id}`, m.method); });
    return write(chunk, ...rest);
  };
  p.stdout.on('data', (chunk) => { outBuf = lines(outBuf, chunk, (m) => received.push([agent, m])); });
}

function validateTraffic() {
  const require = createRequire(import.meta.url);
  const schema = require('@agentclientprotocol/sdk/schema/v1/schema.json');
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(schema, 'acp');
  const def = (name) => ajv.getSchema(`acp#/$defs/${name}`);
  const results = { 'initialize': 'InitializeResponse', 'authenticate': 'AuthenticateResponse',
                    'session/new': 'NewSessionResponse', 'session/load': 'LoadSessionResponse',
                    'session/list': 'ListSessionsResponse', 'session/set_mode': 'SetSessionModeResponse',
                    'session/set_config_option': 'SetSessionConfigOptionResponse',
                    'session/prompt': 'PromptResponse' };
  let validated = 0;
  for (const [agent, m] of received) {
    let name = null, value = null;
    if (m.method === 'session/update') [name, value] = ['SessionNotification', m.params];
    else if (m.method === 'session/request_permission') [name, value] = ['RequestPermissionRequest', m.params];
    else if (m.method === 'fs/read_text_file') [name, value] = ['ReadTextFileRequest', m.params];
    else if (m.method === 'fs/write_text_file') [name, value] = ['WriteTextFileRequest', m.params];
    else if (m.method) throw new Error(`check failed: the agent sent an unexpected ${m.method}`);
    else if (m.result !== undefined) [name, value] = [results[sent.get(`${agent}:${m.id}`)], m.result];
    else if (m.error) {
      check(Number.isInteger(m.error.code) && typeof m.error.message === 'string', 'an error has a code and a message', m);
      continue;
    }
    if (!name) continue;  // a method outside this list
    const validate = def(name);
    check(validate(value), `${name} matches the ACP schema`, { value, errors: validate.errors });
    validated++;
  }
  check(validated > 50, 'the schema check saw the traffic', validated);
  return validated;
}

async function run() {
  const mockUrl = await startMock();
  const home = tmp('llmx-acp-home-');
  const ws = realpathSync(tmp('llmx-acp-ws-'));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp('llmx-acp-user-'), LLMX_HOME: home,
                LLMX_BASE_URL: mockUrl, LLMX_API_KEY: 'test' };
  const startAgent = (args = []) => {
    const p = spawn(opts.llmx, ['acp', ...args], { env, cwd: ws, stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(p);
    p.stderr.on('data', (b) => { stderr += b; });
    recordTraffic(p);
    return p;
  };
  const agentProc = startAgent();

  let firstSession = null;
  const updates = new Map();  // sessionId -> updates
  let permissionAnswer = 'allow_once';
  const permissions = [];
  const app = acp.client({ name: 'llmx-acp-test' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      if (!updates.has(params.sessionId)) updates.set(params.sessionId, []);
      updates.get(params.sessionId).push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      return { outcome: { outcome: 'selected', optionId: permissionAnswer } };
    });
  const stream = acp.ndJsonStream(Writable.toWeb(agentProc.stdin), Readable.toWeb(agentProc.stdout));
  await app.connectWith(stream, async (agent) => {
    const init = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
      clientInfo: { name: 'llmx-acp-test', version: '1.0.0' } });
    check(init.protocolVersion === 1, 'the agent speaks version 1', init);
    check(init.agentInfo?.name === 'llmx', 'agentInfo names llmx', init);
    check(init.agentCapabilities?.promptCapabilities?.embeddedContext === true, 'embedded context is accepted', init);
    check(init.authMethods?.some((m) => m.id === 'api-key'), 'the api-key auth method is offered', init);
    await agent.request(acp.methods.agent.authenticate, { methodId: 'api-key' });

    const created = await agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const sessionId = created.sessionId;
    firstSession = sessionId;
    check(typeof sessionId === 'string' && sessionId.length > 0, 'session/new gives a session', created);
    // No config.toml and no flags: the defaults (on-request, read-only) are the read-only preset.
    check(created.modes?.currentModeId === 'read-only', 'the session starts in the configured mode', created.modes);
    check(['read-only', 'auto', 'full-access'].every((id) => created.modes.availableModes.some((m) => m.id === id)),
          'the modes are the approval presets', created.modes);
    // The model option lists what the mock serves (issue 19); switching it answers every option.
    const model = created.configOptions?.find((o) => o.category === 'model');
    check(model && model.type === 'select' && model.options.some((o) => o.value === 'mock-vision'),
          'session/new offers the provider\'s models as the model option', created.configOptions);
    const switched = await agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'mock-model' });
    check(switched.configOptions?.[0]?.currentValue === 'mock-model', 'session/set_config_option switches the model', switched);

    // A streamed answer.
    const answer = await agent.request(acp.methods.agent.session.prompt,
      { sessionId, prompt: [{ type: 'text', text: '@mock:text deltas=3' }] });
    check(answer.stopReason === 'end_turn', 'the prompt ends its turn', answer);
    const chunks = (updates.get(sessionId) ?? []).filter((u) => u.sessionUpdate === 'agent_message_chunk');
    check(chunks.length >= 2, 'the answer was streamed in chunks', chunks.length);
    check(chunks.map((c) => c.content.text).join('').length > 10, 'the chunks carry the answer', chunks);

    await agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'auto' });
    // A command that needs approval (rm -f is asked about under on-request): allowed, then rejected.
    const victim = path.join(ws, 'victim.txt');
    writeFileSync(victim, 'x');
    const allowed = await agent.request(acp.methods.agent.session.prompt,
      { sessionId, prompt: [{ type: 'text', text: `@mock:shell cmd=rm -f ${victim}` }] });
    check(allowed.stopReason === 'end_turn', 'the approved turn ends', allowed);
    check(permissions.length === 1, 'one permission was asked', permissions.length);
    const ask = permissions[0];
    check(ask.sessionId === sessionId && ask.toolCall?.toolCallId && ask.toolCall.kind === 'execute',
          'the permission names the session and the tool call', ask);
    check(['allow_once', 'allow_always', 'reject_once', 'reject_always'].every((k) => ask.options.some((o) => o.kind === k)),
          'the four permission options are offered', ask.options);
    check(!existsSync(victim), 'the allowed command ran');
    const tools = (updates.get(sessionId) ?? []).filter((u) => u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update');
    check(tools.some((u) => u.sessionUpdate === 'tool_call' && u.kind === 'execute'), 'the command was shown as a tool call', tools);
    check(tools.some((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed'), 'and completed', tools);

    writeFileSync(victim, 'x');
    permissionAnswer = 'reject_once';
    const rejected = await agent.request(acp.methods.agent.session.prompt,
      { sessionId, prompt: [{ type: 'text', text: `@mock:shell cmd=rm -f ${victim}` }] });
    check(rejected.stopReason === 'end_turn', 'the rejected turn ends', rejected);
    check(permissions.length === 2, 'a second permission was asked', permissions.length);
    check(existsSync(victim), 'the rejected command did not run');

    // Patches as diffs: a new file (no old text), then an update (old and new text).
    const before = (updates.get(sessionId) ?? []).length;
    await agent.request(acp.methods.agent.session.prompt,
      { sessionId, prompt: [{ type: 'text', text: '@mock:apply_patch file=notes.txt' }] });
    await agent.request(acp.methods.agent.session.prompt,
      { sessionId, prompt: [{ type: 'text', text: '@mock:apply_patch file=notes.txt replace=goodbye' }] });
    const edits = (updates.get(sessionId) ?? []).slice(before).filter((u) => u.sessionUpdate.startsWith('tool_call'));
    const added = edits.find((u) => u.sessionUpdate === 'tool_call' && u.kind === 'edit');
    check(added?.content?.[0]?.type === 'diff' && added.content[0].oldText == null &&
          added.content[0].newText === 'hello from mock-llm\n', 'a new file is a diff without old text', added);
    check(added.locations?.[0]?.path === path.join(ws, 'notes.txt'), 'the edit names its file', added);
    const updated = edits.filter((u) => u.sessionUpdate === 'tool_call_update' && u.content?.[0]?.type === 'diff').at(-1);
    check(updated?.content[0].oldText === 'hello from mock-llm\n' && updated.content[0].newText === 'goodbye\n',
          'an updated file is a diff of old and new text', updated);

    // Answers the model did not finish.
    for (const [scenario, reason] of [['length', 'max_tokens'], ['content_filter', 'refusal'], ['context_length times=9', 'max_tokens']]) {
      const r = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: `@mock:${scenario}` }] });
      check(r.stopReason === reason, `@mock:${scenario} stops with ${reason}`, r);
    }

    // Cancel mid-turn; a prompt meanwhile is refused.
    const hanging = agent.request(acp.methods.agent.session.prompt,
      { sessionId, prompt: [{ type: 'text', text: '@mock:hang' }] });
    await new Promise((r) => setTimeout(r, 300));
    await expectError(agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hi' }] }),
                      -32600, 'a prompt while another runs');
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    const cancelled = await hanging;
    check(cancelled.stopReason === 'cancelled', 'the cancelled prompt answers cancelled', cancelled);

    // The client's own MCP server: started for the session, its tool shown as a tool call.
    const withMcp = await agent.request(acp.methods.agent.session.new, {
      cwd: ws, mcpServers: [{ name: 'fake', command: process.execPath, args: [opts['fake-mcp']], env: [] }] });
    const mcpAnswer = await agent.request(acp.methods.agent.session.prompt, { sessionId: withMcp.sessionId,
      prompt: [{ type: 'text', text: '@mock:tool name=mcp__fake__echo args={"message":"hello acp"}' }] });
    check(mcpAnswer.stopReason === 'end_turn', 'the MCP tool turn ends', mcpAnswer);
    const mcpUpdates = updates.get(withMcp.sessionId) ?? [];
    check(mcpUpdates.some((u) => u.sessionUpdate === 'tool_call' && u.title === 'fake.echo'), 'the MCP call is a tool call',
          mcpUpdates.filter((u) => u.sessionUpdate.startsWith('tool')));
    check(mcpUpdates.some((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed'), 'and it completed');
    check(mcpUpdates.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text).join('')
            .includes('hello acp'), 'the model got the tool\'s answer');
    await expectError(agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [{ name: 'a.b', command: 'x', args: [], env: [] }] }),
                      -32602, 'a malformed MCP server');

    // Modes, and bad input.
    await agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'read-only' });
    await expectError(agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'yolo' }), -32602, 'an unknown mode');
    const missing = await expectError(agent.request(acp.methods.agent.session.prompt,
      { sessionId: 'no-such-session', prompt: [{ type: 'text', text: 'hi' }] }), -32002, 'an unknown session');
    check(missing.data?.sessionId === 'no-such-session', 'the error names the session', missing.data);
    await expectError(agent.request(acp.methods.agent.session.new, { cwd: 'relative/dir', mcpServers: [] }), -32602, 'a relative cwd');
    await expectError(agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'video' }] }),
                      -32602, 'a content block of an unknown type');
    await expectError(agent.request('session/nonexistent', { sessionId }), -32601, 'an unknown method');
  });
  agentProc.stdin.end();
  await new Promise((r) => (agentProc.exitCode !== null ? r() : agentProc.once('exit', r)));

  // Another agent process: the stored sessions are listed and one is loaded with its history.
  const second = startAgent();
  const loaded = [];
  const app2 = acp.client({ name: 'llmx-acp-test-2' })
    .onNotification(acp.methods.client.session.update, ({ params }) => { loaded.push(params); });
  await app2.connectWith(acp.ndJsonStream(Writable.toWeb(second.stdin), Readable.toWeb(second.stdout)), async (agent) => {
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    check(init.agentCapabilities?.loadSession === true, 'the agent can load sessions', init.agentCapabilities);
    const listed = await agent.request(acp.methods.agent.session.list, { cwd: ws });
    check(listed.sessions?.some((s) => s.sessionId === firstSession && s.cwd === ws), 'session/list has the first session', listed);
    const before = loaded.length;
    const res = await agent.request(acp.methods.agent.session.load, { sessionId: firstSession, cwd: ws, mcpServers: [] });
    check(res.modes?.currentModeId, 'session/load answers the modes', res);
    const replayed = loaded.slice(before).filter((n) => n.sessionId === firstSession).map((n) => n.update);
    check(replayed.some((u) => u.sessionUpdate === 'user_message_chunk' && u.content.text.includes('@mock:text deltas=3')),
          'the first prompt was replayed', replayed.map((u) => u.sessionUpdate));
    check(replayed.some((u) => u.sessionUpdate === 'agent_message_chunk'), 'and its answer', replayed.map((u) => u.sessionUpdate));
    const more = await agent.request(acp.methods.agent.session.prompt,
      { sessionId: firstSession, prompt: [{ type: 'text', text: '@mock:echo after load' }] });
    check(more.stopReason === 'end_turn', 'a prompt goes on in the loaded session', more);
    await expectError(agent.request(acp.methods.agent.session.load,
      { sessionId: '01a21245-8a36-7978-a42b-17f566bf0d9c', cwd: ws, mcpServers: [] }), -32002, 'loading an unknown session');
  });
  second.stdin.end();

  // The operator's settings win: a session starts in the mode they are (here no preset).
  const third = startAgent(['-a', 'untrusted', '-s', 'workspace-write']);
  await acp.client({ name: 'llmx-acp-test-3' }).connectWith(
    acp.ndJsonStream(Writable.toWeb(third.stdin), Readable.toWeb(third.stdout)), async (agent) => {
      await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const s = await agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      check(s.modes.currentModeId === 'configured' && s.modes.availableModes.some((m) => m.id === 'configured'),
            'untrusted + workspace-write starts in the configured mode', s.modes);
      await agent.request(acp.methods.agent.session.setMode, { sessionId: s.sessionId, modeId: 'full-access' });
      await agent.request(acp.methods.agent.session.setMode, { sessionId: s.sessionId, modeId: 'configured' });
    });
  third.stdin.end();

  // An editor that reads and writes files itself: patches go through its buffers (fs/*), so its
  // unsaved text counts and the disk is left to the editor.
  const fourth = startAgent();
  const buffers = new Map();
  const fsCalls = [];
  const edited = path.join(ws, 'edited.txt');
  writeFileSync(edited, 'on disk only\n');  // the patch's context is only in the unsaved buffer
  buffers.set(edited, 'hello from mock-llm\nunsaved line\n');
  const updates4 = [];
  const app4 = acp.client({ name: 'llmx-acp-test-4' })
    .onNotification(acp.methods.client.session.update, ({ params }) => { updates4.push(params.update); })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      fsCalls.push(['read', params.path]);
      if (!buffers.has(params.path)) throw new Error(`no buffer for ${params.path}`);
      return { content: buffers.get(params.path) };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      fsCalls.push(['write', params.path]);
      buffers.set(params.path, params.content);
      return {};
    });
  await app4.connectWith(acp.ndJsonStream(Writable.toWeb(fourth.stdin), Readable.toWeb(fourth.stdout)), async (agent) => {
    await agent.request(acp.methods.agent.initialize, {
      protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
    const s = await agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await agent.request(acp.methods.agent.session.setMode, { sessionId: s.sessionId, modeId: 'full-access' });
    const upd = await agent.request(acp.methods.agent.session.prompt,
      { sessionId: s.sessionId, prompt: [{ type: 'text', text: '@mock:apply_patch file=edited.txt replace=goodbye' }] });
    check(upd.stopReason === 'end_turn', 'the patch turn ends', upd);
    check(fsCalls.some(([k, p]) => k === 'read' && p === edited), 'the patch read the file through the editor', fsCalls);
    check(buffers.get(edited) === 'goodbye\nunsaved line\n', 'the patch applied to the unsaved buffer', buffers.get(edited));
    check(readFileSync(edited, 'utf8') === 'on disk only\n', 'the disk is left to the editor');
    const shown = updates4.filter((u) => u.sessionUpdate === 'tool_call_update' && u.content?.[0]?.type === 'diff').at(-1);
    check(shown?.content[0].oldText === 'hello from mock-llm\nunsaved line\n' &&
          shown.content[0].newText === 'goodbye\nunsaved line\n', 'the diff shown is the buffer\'s', shown);
    const added = path.join(ws, 'added-by-agent.txt');
    await agent.request(acp.methods.agent.session.prompt,
      { sessionId: s.sessionId, prompt: [{ type: 'text', text: '@mock:apply_patch file=added-by-agent.txt' }] });
    check(buffers.get(added) === 'hello from mock-llm\n', 'a new file was written through the editor', [...buffers.keys()]);
    check(!existsSync(added), 'and not behind its back on disk');
  });
  fourth.stdin.end();
  const validated = validateTraffic();
  console.log(`ok: ${checks} checks; ${validated} agent messages match the ACP schema`);
}

const watchdog = setTimeout(() => { console.error(`FAIL: no result within 60 s\n${stderr}`); cleanup(); process.exit(1); }, 60_000);
run().then(() => { clearTimeout(watchdog); cleanup(); process.exit(0); },
           (e) => { clearTimeout(watchdog); console.error(`FAIL: ${e.stack ?? e}\n--- llmx acp stderr ---\n${stderr.slice(-8000)}`); cleanup(); process.exit(1); });

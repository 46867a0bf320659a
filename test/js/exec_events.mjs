// `llmx exec --json` against the exported schema (issue 14): runs exec on several mock-llm
// scenarios — an answer, a command, a patch, a plan, reasoning, an MCP tool call, a failing
// turn — in a scratch HOME and workspace, and validates every line it prints against
// ExecThreadEvent.json with ajv. Also checks the stream's order: thread.started, turn.started,
// ..., turn.completed | turn.failed. With --log, every line of that file too (the lines the
// integration tests captured, test/js/exec_traffic.cmake).
//   node exec_events.mjs --llmx PATH --mock-llm PATH --fake-mcp PATH [--log FILE]
import Ajv from 'ajv';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import readline from 'node:readline';

const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const llmx = arg('--llmx');
const mockBin = arg('--mock-llm');
const scratch = mkdtempSync(join(tmpdir(), 'llmx-exec-events-'));
const watchdog = setTimeout(() => fail('timed out after 60 s'), 60000);
let mock;

function fail(why) {
  console.error(`exec_events: ${why}`);
  mock?.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
  process.exit(1);
}

try {
  const schemaDir = join(scratch, 'schema');
  const gen = spawnSync(llmx, ['app-server', 'generate-json-schema', '--out', schemaDir], { encoding: 'utf8' });
  if (gen.status !== 0) fail(`generate-json-schema failed: ${gen.stderr}`);
  const ajv = new Ajv({ strict: false, allErrors: true });
  for (const f of ['int64', 'uint64', 'int32', 'uint32', 'double']) ajv.addFormat(f, true);  // integer widths
  const validate = ajv.compile(JSON.parse(readFileSync(join(schemaDir, 'ExecThreadEvent.json'), 'utf8')));

  mock = spawn(mockBin, [], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve) => readline.createInterface({ input: mock.stdout }).once('line', resolve));
  for (const d of ['home', 'llmx', 'work']) mkdirSync(join(scratch, d));
  const env = { PATH: process.env.PATH, HOME: join(scratch, 'home'), LLMX_HOME: join(scratch, 'llmx'),
                LLMX_BASE_URL: url, LLMX_API_KEY: 'test' };
  const mcp = ['-c', `mcp_servers.fake.command=${JSON.stringify(process.execPath)}`,
               '-c', `mcp_servers.fake.args=${JSON.stringify([arg('--fake-mcp'), 'ok'])}`];
  const scenarios = [
    ['@mock:text deltas=3', 'turn.completed'],
    ['@mock:tool name=mcp__fake__echo args={"message":"hi"}', 'turn.completed', mcp, 'mcp_tool_call'],
    ['@mock:shell cmd=echo hi', 'turn.completed'],
    ['@mock:apply_patch file=made.txt', 'turn.completed'],
    ['@mock:plan updates=2', 'turn.completed', [], 'todo_list'],
    ['@mock:reasoning', 'turn.completed'],
    ['@mock:error400', 'turn.failed'],
  ];
  let lines = 0;
  for (const [prompt, last, flags = [], item] of scenarios) {
    const r = spawnSync(llmx, ['exec', '--json', '--skip-git-repo-check', '-s', 'danger-full-access', ...flags, prompt],
                        { encoding: 'utf8', env, cwd: join(scratch, 'work'), timeout: 30000 });
    const want = last === 'turn.failed' ? 1 : 0;
    if (r.status !== want) fail(`${prompt}: exit ${r.status} (signal ${r.signal}), expected ${want}; stderr: ${r.stderr}`);
    const events = r.stdout.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
    for (const e of events) {
      lines++;
      if (!validate(e)) fail(`${prompt}: ${JSON.stringify(e)} does not match: ${ajv.errorsText(validate.errors)}`);
    }
    const types = events.map((e) => e.type);
    if (types[0] !== 'thread.started' || types[1] !== 'turn.started' || types.at(-1) !== last)
      fail(`${prompt}: unexpected order ${types.join(', ')} (stderr: ${r.stderr})`);
    if (item && !events.some((e) => e.type === 'item.completed' && e.item.type === item && (e.item.status ?? 'completed') === 'completed'))
      fail(`${prompt}: no completed ${item} item in ${JSON.stringify(events)} (stderr: ${r.stderr})`);
  }
  let logged = 0;
  const log = arg('--log');
  if (log) {
    for (const line of readFileSync(log, 'utf8').split('\n').filter((l) => l.length > 0)) {
      logged++;
      const e = JSON.parse(line);
      if (!validate(e)) fail(`${log}: ${line} does not match: ${ajv.errorsText(validate.errors)}`);
    }
    if (logged === 0) fail(`${log} holds no line: the integration tests printed no --json events`);
  }
  console.log(`exec_events: ${lines} lines of ${scenarios.length} runs and ${logged} captured lines match ExecThreadEvent`);
  clearTimeout(watchdog);
  mock.kill();
  rmSync(scratch, { recursive: true, force: true });
} catch (e) {
  fail(e.stack ?? String(e));
}

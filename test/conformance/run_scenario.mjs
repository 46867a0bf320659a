// Runs one scenario of the official MCP conformance suite against `llmx mcp-server --listen`.
//   node run_scenario.mjs --llmx BIN --node22 BIN --suite JS --scenario NAME [--spec-version V]
//                         --baseline YAML --out DIR
// llmx gets a scratch HOME and working folder; its model URL points at a closed port (no
// scenario here reaches a model). Exit code: the suite's (0 = every failure is in the baseline).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const k of ['llmx', 'node22', 'suite', 'scenario', 'baseline', 'out'])
  if (!args[k]) { console.error(`missing --${k}`); process.exit(2); }

const scratch = mkdtempSync(join(tmpdir(), 'llmx-conformance-'));
const home = join(scratch, 'home'), work = join(scratch, 'work');
mkdirSync(join(home, '.llmx'), { recursive: true }); mkdirSync(work);
const env = { PATH: process.env.PATH, HOME: home, LLMX_HOME: join(home, '.llmx'),
              LLMX_BASE_URL: 'http://127.0.0.1:9/v1', LLMX_API_KEY: 'test' };
const server = spawn(args.llmx, ['mcp-server', '--listen', 'http://127.0.0.1:0'], { cwd: work, env,
                                                                                   stdio: ['pipe', 'pipe', 'inherit'] });
let finished = false;
const cleanup = (code) => {
  if (finished) return;
  finished = true;
  server.kill('SIGTERM');
  rmSync(scratch, { recursive: true, force: true });
  process.exit(code);
};
const watchdog = setTimeout(() => { console.error('watchdog: 120 s'); cleanup(1); }, 120000);
server.on('exit', (code) => { if (!finished) { console.error(`llmx exited early (${code})`); cleanup(1); } });

const url = await new Promise((resolve) => {
  createInterface({ input: server.stdout }).once('line', (line) => resolve(line));
});
if (!url.startsWith('listening http://127.0.0.1:')) { console.error(`unexpected first line: ${url}`); cleanup(1); }
// The DNS-rebinding scenario wants a localhost URL (it sends that Host as the good one).
const endpoint = url.slice('listening '.length).replace('127.0.0.1', 'localhost');
console.log(`llmx at ${endpoint}`);
const suiteArgs = [args.suite, 'server', '--url', endpoint, '--scenario', args.scenario,
                   '--expected-failures', args.baseline, '-o', args.out];
if (args['spec-version']) suiteArgs.push('--spec-version', args['spec-version']);
const suite = spawn(args.node22, suiteArgs, { cwd: work, env: { ...env, NO_COLOR: '1' }, stdio: 'inherit' });
suite.on('exit', (code) => { clearTimeout(watchdog); cleanup(code ?? 1); });

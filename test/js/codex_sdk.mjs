// The Codex TypeScript SDK (@openai/codex-sdk, pinned) drives `llmx exec` (issue 14) through
// `codexPathOverride`, against mock-llm, in a scratch HOME and workspace: run (final response,
// command_execution and file_change items), runStreamed (the event types in order), resumeThread
// by id, outputSchema, an image input, threadSource, and a failing turn (the promise rejects).
// The SDK spawns llmx through a wrapper that keeps a copy of its stdout: every line it read is
// validated against the exported ExecThreadEvent schema at the end.
//   node codex_sdk.mjs --llmx PATH --mock-llm PATH
import { Codex } from '@openai/codex-sdk';
import Ajv from 'ajv';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import readline from 'node:readline';

const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
const realLlmx = arg('--llmx');
const scratch = mkdtempSync(join(tmpdir(), 'llmx-codex-sdk-'));
let mock;
const watchdog = setTimeout(() => fail('timed out after 80 s'), 80000);

function fail(why) {
  console.error(`codex_sdk: ${why}`);
  mock?.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
  process.exit(1);
}
function check(ok, what) {
  if (!ok) fail(what);
}

try {
  mock = spawn(arg('--mock-llm'), [], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve) => readline.createInterface({ input: mock.stdout }).once('line', resolve));
  for (const d of ['home', 'llmx', 'work']) mkdirSync(join(scratch, d));
  const work = join(scratch, 'work');
  // exec replaces the shell, so the SDK sees llmx's own exit status and signals.
  const seen = join(scratch, 'stdout.jsonl');
  const llmx = join(scratch, 'llmx-tee');
  writeFileSync(llmx, `#!/bin/bash\nexec ${JSON.stringify(realLlmx)} "$@" > >(tee -a ${JSON.stringify(seen)})\n`);
  chmodSync(llmx, 0o755);
  // Only what the test gives: the SDK's own variables, no LLMX_* ones, no machine profile.
  const env = { PATH: process.env.PATH, HOME: join(scratch, 'home'), LLMX_HOME: join(scratch, 'llmx'),
                OPENAI_BASE_URL: url };
  const codex = new Codex({ codexPathOverride: llmx, env, apiKey: 'sdk-test-key' });
  const options = { workingDirectory: work, skipGitRepoCheck: true, sandboxMode: 'danger-full-access' };

  // run: a command, then a patch, each with its item; the final response.
  const thread = codex.startThread(options);
  const shell = await thread.run('@mock:shell cmd=echo from-sdk');
  const command = shell.items.find((i) => i.type === 'command_execution');
  check(command && command.aggregated_output === 'from-sdk\n' && command.exit_code === 0 && command.status === 'completed',
        `command_execution item: ${JSON.stringify(shell.items)}`);
  check(shell.finalResponse.includes('from-sdk'), `final response: ${shell.finalResponse}`);
  // Every field of the SDK's Usage type is a number (index.d.ts declares them all required).
  for (const f of ['input_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'output_tokens', 'reasoning_output_tokens'])
    check(Number.isInteger(shell.usage?.[f]), `usage.${f}: ${JSON.stringify(shell.usage)}`);
  check(shell.usage.input_tokens > 0, `usage: ${JSON.stringify(shell.usage)}`);
  check(typeof thread.id === 'string' && thread.id.length === 36, `thread id: ${thread.id}`);
  const patch = await thread.run('@mock:apply_patch file=sdk.txt');
  const change = patch.items.find((i) => i.type === 'file_change');
  check(change && change.status === 'completed' && change.changes[0].kind === 'add' && change.changes[0].path.endsWith('sdk.txt'),
        `file_change item: ${JSON.stringify(patch.items)}`);

  // runStreamed: the event types in order.
  const streamed = await codex.startThread(options).runStreamed('@mock:plan updates=2');
  const types = [];
  const todo = [];
  for await (const event of streamed.events) {
    types.push(event.type + (event.item ? `:${event.item.type}` : ''));
    if (event.item?.type === 'todo_list') todo.push(event);
  }
  // One todo_list item: started, updated when the plan changes, completed at the end.
  check(todo.map((e) => e.type).join(',') === 'item.started,item.updated,item.completed' &&
        todo.every((e) => e.item.id === todo[0].item.id) && todo[2].item.items.every((i) => i.completed),
        `todo_list events: ${JSON.stringify(todo)}`);
  check(types[0] === 'thread.started' && types[1] === 'turn.started' && types.at(-1) === 'turn.completed',
        `streamed order: ${types.join(', ')}`);
  check(types.includes('item.started:todo_list') && types.includes('item.completed:agent_message'),
        `streamed items: ${types.join(', ')}`);

  // resumeThread by id: the same thread goes on.
  const resumed = codex.resumeThread(thread.id, options);
  const again = await resumed.run('@mock:echo again');
  check(again.finalResponse.includes('echo: again'), `resumed answer: ${again.finalResponse}`);
  check(resumed.id === thread.id, `resumed id ${resumed.id} != ${thread.id}`);

  // outputSchema: the answer parses and conforms.
  const schema = { type: 'object', properties: { verdict: { type: 'string' }, score: { type: 'integer' } },
                   required: ['verdict', 'score'], additionalProperties: false };
  const structured = await codex.startThread(options).run('judge it @mock:text', { outputSchema: schema });
  const value = JSON.parse(structured.finalResponse);
  check(typeof value.verdict === 'string' && Number.isInteger(value.score), `structured: ${structured.finalResponse}`);

  // An image input reaches the model.
  const image = join(work, 'dot.png');
  writeFileSync(image, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]));
  const pictured = await codex.startThread(options).run([{ type: 'text', text: '@mock:text deltas=2' }, { type: 'local_image', path: image }]);
  check(pictured.finalResponse.length > 0, 'image turn answered');

  // threadSource: recorded in the new thread's session_meta.
  const sourced = codex.startThread({ ...options, threadSource: 'sdk-test' });
  await sourced.run('@mock:text deltas=1');
  const rollouts = readdirSync(join(scratch, 'llmx', 'sessions'), { recursive: true })
    .filter((f) => String(f).endsWith(`${sourced.id}.jsonl`));
  check(rollouts.length === 1, `rollout of ${sourced.id}: ${rollouts}`);
  const meta = JSON.parse(readFileSync(join(scratch, 'llmx', 'sessions', String(rollouts[0])), 'utf8').split('\n')[0]);
  check(meta.payload.thread_source === 'sdk-test', `session_meta: ${JSON.stringify(meta.payload)}`);

  // The SDK's baseUrl option (`--config openai_base_url=...`) is the endpoint, with no variable set.
  const { OPENAI_BASE_URL, ...noUrl } = env;
  const viaOption = new Codex({ codexPathOverride: llmx, env: noUrl, apiKey: 'sdk-test-key', baseUrl: url });
  const optioned = await viaOption.startThread(options).run('@mock:echo via option');
  check(optioned.finalResponse.includes('echo: via option'), `baseUrl option: ${optioned.finalResponse}`);

  // A failing turn rejects with the model's error.
  let rejected = null;
  try {
    await codex.startThread(options).run('@mock:error400');
  } catch (e) {
    rejected = e;
  }
  // With the model's own error, not a crash ("exited with signal") or a parse failure.
  check(rejected && rejected.message.includes('400') && !rejected.message.includes('signal'),
        `a failing turn rejects with the model's error: ${rejected?.message}`);

  // Every line the SDK read matches the exported schema.
  const schemaDir = join(scratch, 'schema');
  const gen = spawnSync(realLlmx, ['app-server', 'generate-json-schema', '--out', schemaDir], { encoding: 'utf8' });
  check(gen.status === 0, `generate-json-schema failed: ${gen.stderr}`);
  const ajv = new Ajv({ strict: false, allErrors: true });
  for (const f of ['int64', 'uint64', 'int32', 'uint32', 'double']) ajv.addFormat(f, true);
  const validate = ajv.compile(JSON.parse(readFileSync(join(schemaDir, 'ExecThreadEvent.json'), 'utf8')));
  const lines = readFileSync(seen, 'utf8').split('\n').filter((l) => l.length > 0);
  for (const line of lines) check(validate(JSON.parse(line)), `${line} does not match: ${ajv.errorsText(validate.errors)}`);
  check(lines.length > 30, `only ${lines.length} lines seen`);

  console.log(`codex_sdk: run, runStreamed (${types.length} events), resumeThread, outputSchema, image, threadSource, ` +
              `baseUrl and failure all passed; ${lines.length} lines match ExecThreadEvent`);
  clearTimeout(watchdog);
  mock.kill();
  rmSync(scratch, { recursive: true, force: true });
} catch (e) {
  fail(e.stack ?? String(e));
}

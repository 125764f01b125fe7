// The official MCP TypeScript SDK's client driving `airlock mcp` over stdio, the way an agent
// runtime does. Run by McpIT: `node client.mjs SCENARIO`, with
//   AIRLOCK_MCP_COMMAND  the server's command line as a JSON array (./airlock --set ... mcp)
//   AIRLOCK_MCP_WORK     a scratch directory for the files it writes
//   DENIED_PATH          a path the guard hard-denies; DENIED_MESSAGE: the CLI's message for it
//   APPROVAL_PATH        a path that needs a human's approval
// Prints "ok: STEP" per passed step; any failure exits 1 with the reason.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';

const [serverCommand, ...serverArgs] = JSON.parse(process.env.AIRLOCK_MCP_COMMAND);
const work = process.env.AIRLOCK_MCP_WORK;

function ok(step) {
  console.log(`ok: ${step}`);
}

async function connect(capabilities = {}) {
  const client = new Client({ name: 'airlock-mcp-it', version: '1.0.0' }, { capabilities });
  const transport = new StdioClientTransport({
    command: serverCommand,
    args: serverArgs,
    env: process.env,
    stderr: 'inherit',
  });
  await client.connect(transport);
  return client;
}

function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

/** Pids whose argv is exactly `argv`, from /proc (the server runs on this machine). */
function pidsWithArgv(argv) {
  const want = argv.join('\0') + '\0';
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1') === want) out.push(Number(name));
    } catch {
      // gone while we looked
    }
  }
  return out;
}

async function waitFor(what, predicate, seconds = 60) {
  const until = Date.now() + seconds * 1000;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function tools() {
  const client = await connect();
  try {
    ok('initialize');

    const listed = await client.listTools();
    const names = listed.tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['delete', 'exec', 'list_dir', 'read_file', 'stat', 'write_file']);
    for (const t of listed.tools) {
      assert.equal(t.inputSchema.type, 'object', `${t.name} input schema`);
      assert.equal(t.outputSchema?.type, 'object', `${t.name} output schema`);
      assert.ok(t.description.length > 40, `${t.name} has a description for a model`);
    }
    const exec = listed.tools.find((t) => t.name === 'exec');
    for (const arg of ['command', 'cwd', 'timeout_seconds', 'env', 'stdin', 'stdin_base64']) {
      assert.ok(arg in exec.inputSchema.properties, `exec takes ${arg}`);
    }
    ok('list tools');

    // 160 KiB of random bytes with NUL bytes, through stdin; the command reports its digest and echoes it.
    const payload = randomBytes(160 * 1024);
    for (let i = 0; i < payload.length; i += 7) payload[i] = 0;
    const digest = createHash('sha256').update(payload).digest('hex');
    const b64 = payload.toString('base64');
    const sum = await client.callTool({ name: 'exec', arguments: { command: 'sha256sum; exit 7', stdin_base64: b64 } });
    assert.ok(!sum.isError, text(sum));
    assert.equal(sum.structuredContent.exit_code, 7);
    assert.equal(sum.structuredContent.stdout, `${digest}  -\n`);
    assert.equal(sum.structuredContent.timed_out, false);
    const echo = await client.callTool({ name: 'exec', arguments: { command: 'cat', stdin_base64: b64 } });
    assert.ok(!echo.isError, text(echo));
    assert.equal(echo.structuredContent.stdout, undefined, 'binary stdout is not sent as text');
    assert.ok(Buffer.from(echo.structuredContent.stdout_base64, 'base64').equals(payload), 'stdout bytes');
    assert.equal(echo.structuredContent.stdout_dropped, 0);
    ok('exec with 160 KiB binary stdin');

    const env = await client.callTool({
      name: 'exec',
      arguments: { command: 'printf "%s|%s" "$GREETING" "$(pwd)"; printf "w\\n" >&2', cwd: work, env: { GREETING: 'héllo wörld' }, stdin: 'ignored' },
    });
    assert.equal(env.structuredContent.stdout, `héllo wörld|${work}`);
    assert.equal(env.structuredContent.stderr, 'w\n');
    ok('exec with cwd, env and text output');

    const slow = await client.callTool({ name: 'exec', arguments: { command: 'sleep 30', timeout_seconds: 0.5 } });
    assert.equal(slow.structuredContent.timed_out, true);
    assert.equal(slow.structuredContent.exit_code, 124);
    ok('exec timeout');

    // Files: base64 round trip with NUL and invalid UTF-8, and a text round trip.
    const bin = Buffer.concat([Buffer.from([0, 0xff, 0xfe, 0x80, 0]), randomBytes(4096), Buffer.from([0])]);
    const file = `${work}/sub dir/data.bin`;
    const w = await client.callTool({ name: 'write_file', arguments: { path: file, content_base64: bin.toString('base64'), mode: '0640' } });
    assert.ok(!w.isError, text(w));
    assert.equal(w.structuredContent.size, bin.length);
    assert.ok(readFileSync(file).equals(bin), 'bytes on disk');
    const r = await client.callTool({ name: 'read_file', arguments: { path: file } });
    assert.ok(!r.isError, text(r));
    assert.equal(r.structuredContent.content, undefined);
    assert.ok(Buffer.from(r.structuredContent.content_base64, 'base64').equals(bin), 'bytes read back');
    assert.equal(r.structuredContent.size, bin.length);
    const st = await client.callTool({ name: 'stat', arguments: { path: file } });
    assert.equal(st.structuredContent.exists, true);
    assert.equal(st.structuredContent.type, 'file');
    assert.equal(st.structuredContent.mode, '0640');
    await client.callTool({ name: 'write_file', arguments: { path: `${work}/note.txt`, content: 'no newline, ünïcode' } });
    const t = await client.callTool({ name: 'read_file', arguments: { path: `${work}/note.txt` } });
    assert.equal(t.structuredContent.content, 'no newline, ünïcode');
    const ls = await client.callTool({ name: 'list_dir', arguments: { path: work } });
    assert.deepEqual(ls.structuredContent.entries.map((e) => `${e.name}:${e.type}`), ['note.txt:file', 'sub dir:directory']);
    const keep = await client.callTool({ name: 'delete', arguments: { path: `${work}/sub dir` } });
    assert.equal(keep.isError, true);
    assert.match(text(keep), /recursive/);
    assert.ok(existsSync(file), 'a non-recursive delete left the directory alone');
    const del = await client.callTool({ name: 'delete', arguments: { path: `${work}/sub dir`, recursive: true } });
    assert.equal(del.structuredContent.deleted, true);
    assert.ok(!existsSync(file), 'recursive delete removed the tree');
    const gone = await client.callTool({ name: 'stat', arguments: { path: file } });
    assert.equal(gone.structuredContent.exists, false);
    ok('write_file and read_file round trip in base64');

    // Bad input: a tool error naming the field, and the server carries on.
    const bad = await client.callTool({ name: 'exec', arguments: { cwd: '/' } });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /'command'/);
    const both = await client.callTool({ name: 'write_file', arguments: { path: file, content: 'a', content_base64: 'YQ==' } });
    assert.equal(both.isError, true);
    assert.match(text(both), /content_base64/);
    const b64bad = await client.callTool({ name: 'exec', arguments: { command: 'cat', stdin_base64: '***' } });
    assert.equal(b64bad.isError, true);
    assert.match(text(b64bad), /'stdin_base64'/);
    const typo = await client.callTool({ name: 'read_file', arguments: { path: file, pth: 'x' } });
    assert.equal(typo.isError, true);
    assert.match(text(typo), /'pth'/);
    ok('bad input is a tool error naming the field');

    // The guard: the same message as through the CLI, by the file API and by a command.
    const denied = await client.callTool({ name: 'write_file', arguments: { path: process.env.DENIED_PATH, content: 'ssh-ed25519 AAAA' } });
    assert.equal(denied.isError, true);
    assert.equal(text(denied), process.env.DENIED_MESSAGE);
    const deniedExec = await client.callTool({ name: 'exec', arguments: { command: `echo key >> ${process.env.DENIED_PATH}` } });
    assert.equal(deniedExec.isError, true);
    assert.match(text(deniedExec), /^denied: /);
    assert.ok(!existsSync(process.env.DENIED_PATH), 'nothing was written');
    ok('denied write returns the guard message');

    // No elicitation in this client: a write that needs approval fails closed.
    const approval = await client.callTool({ name: 'write_file', arguments: { path: process.env.APPROVAL_PATH, content: 'Host *\n' } });
    assert.equal(approval.isError, true);
    assert.match(text(approval), /^denied: .*approval/);
    assert.ok(!existsSync(process.env.APPROVAL_PATH), 'nothing was written');
    ok('approval without elicitation fails closed');

    // Cancellation: progress arrives while it runs; an abort kills the process tree.
    const argv = ['sleep', '4321.5'];
    const controller = new AbortController();
    let progress = 0;
    const running = client.callTool({ name: 'exec', arguments: { command: 'sleep 4321.5 & sleep 4321.5; wait' } }, undefined, {
      signal: controller.signal,
      onprogress: () => { progress++; },
      timeout: 120_000,
    });
    const settled = running.then(() => 'resolved', (e) => `rejected: ${e.message}`);
    await waitFor('two sleeps running', () => pidsWithArgv(argv).length === 2);
    await waitFor('a progress notification', () => progress > 0);
    controller.abort('the test cancels');
    assert.match(await settled, /^rejected/);
    await waitFor('the sleeps to be killed', () => pidsWithArgv(argv).length === 0, 15);
    const after = await client.callTool({ name: 'exec', arguments: { command: 'echo still serving' } });
    assert.equal(after.structuredContent.stdout, 'still serving\n');
    ok('cancel kills the process tree');

    // The client goes away mid-command: the server closes the environment and kills it.
    const orphan = ['sleep', '4321.7'];
    client.callTool({ name: 'exec', arguments: { command: 'sleep 4321.7' } }).catch(() => {});
    await waitFor('the sleep running', () => pidsWithArgv(orphan).length === 1);
    await client.close();
    await waitFor('the sleep killed after the client left', () => pidsWithArgv(orphan).length === 0, 30);
    ok('a client that goes away leaves no process behind');
  } finally {
    await client.close();
  }
}

async function elicitation() {
  const answers = ['once', 'deny', 'decline', 'session'];
  const asked = [];
  const client = new Client({ name: 'airlock-mcp-it', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    const decision = answers.shift();
    if (decision === 'decline') return { action: 'decline' };
    return { action: 'accept', content: { decision } };
  });
  const transport = new StdioClientTransport({ command: serverCommand, args: serverArgs, env: process.env, stderr: 'inherit' });
  await client.connect(transport);
  try {
    const path = process.env.APPROVAL_PATH;
    const first = await client.callTool({ name: 'write_file', arguments: { path, content: 'Host a\n' } });
    assert.ok(!first.isError, text(first));
    assert.equal(readFileSync(path, 'utf8'), 'Host a\n');
    assert.equal(asked.length, 1);
    assert.ok(asked[0].includes(path.split('/').pop()), `the question names the file: ${asked[0]}`);
    const second = await client.callTool({ name: 'write_file', arguments: { path, content: 'Host b\n' } });
    assert.equal(second.isError, true, 'once covers one write; the next is asked again and denied');
    assert.match(text(second), /^denied: /);
    assert.equal(asked.length, 2);
    assert.equal(readFileSync(path, 'utf8'), 'Host a\n');
    const declined = await client.callTool({ name: 'write_file', arguments: { path, content: 'Host c\n' } });
    assert.equal(declined.isError, true, 'a declined question denies');
    assert.equal(asked.length, 3);
    const session = await client.callTool({ name: 'write_file', arguments: { path, content: 'Host d\n' } });
    assert.ok(!session.isError, text(session));
    const again = await client.callTool({ name: 'exec', arguments: { command: `printf 'Host e\\n' > ${path}` } });
    assert.equal(again.structuredContent?.exit_code, 0, text(again));
    assert.equal(asked.length, 4, 'session covers the path for the next write, by command too');
    assert.equal(readFileSync(path, 'utf8'), 'Host e\n');
    ok('approval through elicitation');
  } finally {
    await client.close();
  }
}

const scenarios = { tools, elicitation };
const which = process.argv[2];
if (!scenarios[which]) {
  console.error(`usage: node client.mjs ${Object.keys(scenarios).join('|')}`);
  process.exit(2);
}
try {
  await scenarios[which]();
  process.exit(0);
} catch (e) {
  console.error(`FAILED: ${e.stack || e}`);
  process.exit(1);
}

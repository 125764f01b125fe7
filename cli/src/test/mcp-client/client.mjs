// The official MCP TypeScript SDK's client driving `airlock mcp` over stdio, the way an agent
// runtime does. Run by McpIT: `node client.mjs SCENARIO`, with
//   AIRLOCK_MCP_COMMAND  the server's command line as a JSON array (./airlock --set ... mcp)
//   AIRLOCK_MCP_WORK     a scratch directory for the files it writes
//   DENIED_PATH          a path the guard hard-denies; DENIED_MESSAGE: the CLI's message for it
//   APPROVAL_PATH        a path that needs a human's approval
//   AIRLOCK_MCP_CWD      the directory the server starts in
// Prints "ok: STEP" per passed step; any failure exits 1 with the reason.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';

const [serverCommand, ...serverArgs] = JSON.parse(process.env.AIRLOCK_MCP_COMMAND);
const work = process.env.AIRLOCK_MCP_WORK;

function ok(step) {
  console.log(`ok: ${step}`);
}

async function connect(capabilities = {}, command = [serverCommand, ...serverArgs]) {
  const client = new Client({ name: 'airlock-mcp-it', version: '1.0.0' }, { capabilities });
  const transport = new StdioClientTransport({
    command: command[0],
    args: command.slice(1),
    env: process.env,
    cwd: process.env.AIRLOCK_MCP_CWD,
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
  const transport = new StdioClientTransport({ command: serverCommand, args: serverArgs, env: process.env, cwd: process.env.AIRLOCK_MCP_CWD, stderr: 'inherit' });
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

/** The bytes a text-or-base64 field pair carries (`stdout` / `stdout_base64`). */
function bytesOf(result, key) {
  if (typeof result[key] === 'string') return Buffer.from(result[key], 'utf8');
  if (typeof result[`${key}_base64`] === 'string') return Buffer.from(result[`${key}_base64`], 'base64');
  throw new Error(`neither ${key} nor ${key}_base64 in ${JSON.stringify(Object.keys(result))}`);
}

const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;

/** Reads a file through read_file in pieces from `offset` to its end; returns the bytes. */
async function readInPieces(client, path, offset, piece) {
  const parts = [];
  for (let at = offset; ; ) {
    const r = await client.callTool({ name: 'read_file', arguments: { path, offset: at, length: piece } });
    assert.ok(!r.isError, text(r));
    const got = bytesOf(r.structuredContent, 'content');
    assert.ok(got.length > 0 && got.length <= piece, `piece of ${got.length} bytes`);
    assert.ok(JSON.stringify(r).length < 6 * MiB, 'a piece stays well under the client limit');
    parts.push(got);
    at += got.length;
    if (at >= r.structuredContent.size) return Buffer.concat(parts);
  }
}

async function large() {
  const client = await connect();
  try {
    // 9 MiB of text with non-ASCII on stdout, 5,000,000 random bytes on stderr, in one call.
    const line = (i) => `${i} ${randomBytes(45).toString('base64')} é\n`;
    const lines = [];
    let n = 0;
    for (let i = 0; n < 9 * MiB; i++) { const l = line(i); lines.push(l); n += Buffer.byteLength(l); }
    const nine = Buffer.from(lines.join(''), 'utf8').subarray(0, 9 * MiB);
    const five = randomBytes(5_000_000);
    writeFileSync(`${work}/nine.txt`, nine);
    writeFileSync(`${work}/five.bin`, five);

    const big = await client.callTool({ name: 'exec', arguments: { command: 'cat nine.txt; cat five.bin >&2', cwd: work } }, undefined, { timeout: 240_000 });
    assert.ok(!big.isError, text(big));
    const r = big.structuredContent;
    assert.equal(r.exit_code, 0);
    assert.ok(JSON.stringify(big).length < 4 * MiB, `the reply is ${JSON.stringify(big).length} characters`);
    assert.ok(text(big).length < 64 * 1024, 'the output travels once: the text content is a summary');
    const head = bytesOf(r, 'stdout');
    assert.ok(typeof r.stdout === 'string', 'text output stays text');
    assert.ok(head.length > 0.9 * MiB && head.length <= MiB, `stdout head of ${head.length} bytes`);
    assert.ok(head.equals(nine.subarray(0, head.length)), 'the head is the exact start of stdout');
    assert.equal(r.stdout_dropped, nine.length - head.length);
    const errHead = bytesOf(r, 'stderr');
    assert.ok(typeof r.stderr_base64 === 'string', 'binary output is base64');
    assert.equal(r.stderr_base64.length, 4 * Math.floor(MiB / 4), 'base64 growth counts against the cap');
    assert.equal(r.stderr_dropped, five.length - errHead.length);
    assert.match(r.note, /read_file/);
    assert.ok(r.note.includes(r.stdout_file) && r.note.includes(r.stderr_file), r.note);
    ok('a 9 MiB exec gets a capped answer');

    const still = await client.callTool({ name: 'exec', arguments: { command: 'echo still serving' } });
    assert.equal(still.structuredContent.stdout, 'still serving\n');
    ok('the session answers after a large exec');

    const restOut = await readInPieces(client, r.stdout_file, head.length, 3 * MiB);
    assert.equal(sha256(Buffer.concat([head, restOut])), sha256(nine));
    const restErr = await readInPieces(client, r.stderr_file, errHead.length, 3 * MiB);
    assert.equal(sha256(Buffer.concat([errHead, restErr])), sha256(five));
    ok('the rest of the output is read back byte-exact');

    // Control characters cost 6 bytes each as JSON text: a NUL stream goes as base64, still capped.
    const zeros = await client.callTool({ name: 'exec', arguments: { command: 'head -c 9437184 /dev/zero', max_output_bytes: 2 * MiB } }, undefined, { timeout: 240_000 });
    assert.ok(!zeros.isError, text(zeros));
    assert.equal(zeros.structuredContent.stdout_base64.length, 4 * Math.floor(2 * MiB / 4));
    assert.equal(zeros.structuredContent.stdout_dropped, 9437184 - 1572864);
    const over = await client.callTool({ name: 'exec', arguments: { command: 'true', max_output_bytes: 64 * MiB } });
    assert.equal(over.isError, true);
    assert.match(text(over), /'max_output_bytes'/);
    ok('escaping counts against the cap, and the cap has a ceiling');

    const whole = await client.callTool({ name: 'read_file', arguments: { path: `${work}/five.bin` } });
    assert.equal(whole.isError, true);
    assert.match(text(whole), /5000000 bytes/);
    assert.match(text(whole), /offset and length/);
    assert.ok(!text(whole).includes('\n'), 'one line');
    const after = await client.callTool({ name: 'exec', arguments: { command: 'echo still serving' } });
    assert.equal(after.structuredContent.stdout, 'still serving\n');
    const pieces = await readInPieces(client, `${work}/five.bin`, 0, 3 * MiB);
    assert.equal(sha256(pieces), sha256(five));
    ok('a 5,000,000-byte binary read_file is refused in one line and read in pieces byte-exact');
  } finally {
    await client.close();
  }
}

/** stdout of an exec call that must succeed. */
async function run(client, command, extra = {}) {
  const r = await client.callTool({ name: 'exec', arguments: { command, ...extra } });
  assert.ok(!r.isError, text(r));
  assert.equal(r.structuredContent.exit_code, 0, text(r));
  return r.structuredContent.stdout;
}

// AIRLOCK_MCP_NAMED_COMMAND: the server's command line with --set airlock.session=NAME.
async function sessions() {
  const a = await connect();
  const b = await connect();
  try {
    const exec = (await a.listTools()).tools.find((t) => t.name === 'exec');
    assert.ok('session' in exec.inputSchema.properties, 'exec takes session');

    assert.equal(await run(a, `cd '${work}' && export X=1`), '');
    assert.equal(await run(a, 'pwd; echo $X'), `${work}\n1\n`);
    ok('cd and export carry to the next exec of a connection');

    assert.equal(await run(b, 'pwd; echo ${X-unset}'), `${process.env.AIRLOCK_MCP_CWD}\nunset\n`);
    ok('two connections do not share a session');

    assert.equal(await run(a, 'cd / && export X=side; pwd', { session: 'side' }), '/\n');
    assert.equal(await run(a, 'pwd; echo $X'), `${work}\n1\n`, 'the main session is untouched');
    assert.equal(await run(a, 'pwd; echo $X', { session: 'side' }), '/\nside\n');
    const badName = await a.callTool({ name: 'exec', arguments: { command: 'true', session: '../x' } });
    assert.equal(badName.isError, true);
    assert.match(text(badName), /'session'/);
    ok('a named session of a connection is apart from its main one');

    // A command of the main session waits for a file that only a command of another session makes:
    // both end only if the two sessions run side by side.
    const flag = `${work}/flag`;
    const waiting = a.callTool({ name: 'exec', arguments: { command: `while [ ! -e '${flag}' ]; do sleep 0.05; done; echo main`, timeout_seconds: 120 } },
      undefined, { timeout: 180_000 });
    assert.equal(await run(a, `touch '${flag}'; echo side`, { session: 'side' }), 'side\n');
    const main = await waiting;
    assert.equal(main.structuredContent.timed_out, false, text(main));
    assert.equal(main.structuredContent.stdout, 'main\n');
    ok('two sessions of a connection run side by side');

    await assert.rejects(a.callTool({ name: 'no_such_tool', arguments: {} }), (e) => {
      assert.match(e.message, /unknown tool 'no_such_tool'/);
      return true;
    });
    assert.equal(await run(a, 'echo $X'), '1\n', 'the connection still serves');
    ok('an unknown tool is named in the error message');
  } finally {
    await a.close();
    await b.close();
  }

  const named = JSON.parse(process.env.AIRLOCK_MCP_NAMED_COMMAND);
  const first = await connect({}, named);
  try {
    assert.equal(await run(first, `cd '${work}' && export AGENT=one`), '');
  } finally {
    await first.close();
  }
  const second = await connect({}, named);
  try {
    assert.equal(await run(second, 'pwd; echo $AGENT'), `${work}\none\n`);
    assert.equal(await run(second, 'echo ${AGENT-unset}', { session: 'scratch' }), 'unset\n');
    assert.equal(await run(second, 'export AGENT=two'), '');
  } finally {
    await second.close();
  }
  ok('airlock.session names a session kept across connections');
}

const scenarios = { tools, elicitation, large, sessions };
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

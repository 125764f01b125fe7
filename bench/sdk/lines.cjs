// The line protocol shared by the three SDK scripts the bench drives: after "ready", one request a
// line on stdin ("write PATH BYTES", "write-noise PATH BYTES", "stdin BYTES" or
// "turn READ1 READ2 READ3 WRITE1 WRITE2 DIR"), one answer a line on stdout ("ms N" with the
// milliseconds measured around the SDK call only, "ms N steps A,B,..." for a turn with each step's
// milliseconds, or "fail REASON"); "quit" or end-of-input closes the sandbox. Node's start-up and the sandbox's creation are outside every timing.
'use strict';
const readline = require('node:readline');
const path = require('node:path');
const { createRequire } = require('node:module');

/** require() from the backend's SDK harness (argv[2]): its node_modules, installed by npm ci there. */
exports.sdk = (name) => createRequire(path.join(path.resolve(process.argv[2] || '.'), 'package.json'))(name);

const payloads = new Map();
/**
 * The same bytes for every request of a size and kind, made outside the timing: a repeating 0..255
 * pattern, or with kind "noise" random bytes (incompressible, as archives and images are).
 */
exports.payload = (n, kind) => {
  const key = (kind || 'pattern') + ':' + n;
  if (!payloads.has(key)) {
    let b;
    if (kind === 'noise') {
      b = require('node:crypto').randomBytes(n);
    } else {
      b = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i++) b[i] = i & 255;
    }
    payloads.set(key, b);
  }
  return payloads.get(key);
};

/** Serves requests with handlers {write(path, bytes, kind), stdin(bytes)} returning the measured ms. */
exports.serve = async (handlers, close) => {
  console.log('ready');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const [op, ...args] = line.trim().split(/\s+/);
    if (op === 'quit') break;
    try {
      const handler = op === 'write-noise' ? (file, n) => handlers.write(file, n, 'noise') : handlers[op];
      if (!handler) throw new Error('unknown request ' + op);
      const ms = await handler(...args);
      if (typeof ms === 'number') console.log('ms ' + ms.toFixed(3));
      else console.log('ms ' + ms.total.toFixed(3) + ' steps ' + ms.steps.map((x) => x.toFixed(3)).join(','));
    } catch (e) {
      console.log('fail ' + String((e && e.message) || e).split('\n')[0]);
    }
  }
  await close();
  process.exit(0);
};

/** Times fn only (performance.now, the process's monotonic clock). */
exports.time = async (fn) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

/**
 * An agent's turn (the bench's Turn.java, issue 35) through one SDK: open a new sandbox, read three
 * 4 KiB files, write two, run five commands (true, ls -la, cat of a file, 1 MiB of output, exit 3)
 * and end the sandbox, each step timed. sdk = {open() -> sandbox, read(sb, path) -> bytes,
 * write(sb, path, bytes), exec(sb, command) -> {code, out: stdout length}, close(sb)}.
 * Answers {total, steps} in ms, or throws on a wrong byte count or exit code.
 */
exports.turn = async (sdk, r1, r2, r3, w1, w2, dir) => {
  const data = exports.payload(4096, 'noise');
  const commands = [['true', 0, 0], ['ls -la ' + dir, 0, -1], ['cat ' + r1, 0, 4096],
    ['yes abcdefghijklmno | head -c 1048576', 0, 1048576], ['exit 3', 3, 0]];
  const steps = [];
  const t0 = performance.now();
  let last = t0;
  const step = () => { const now = performance.now(); steps.push(now - last); last = now; };
  const sb = await sdk.open();
  try {
    step();
    for (const f of [r1, r2, r3]) {
      const b = await sdk.read(sb, f);
      if (!b || b.length !== 4096) throw new Error(`read ${b ? b.length : 'nothing'} bytes of ${f}`);
      step();
    }
    for (const f of [w1, w2]) {
      await sdk.write(sb, f, data);
      step();
    }
    for (const [cmd, code, bytes] of commands) {
      const r = await sdk.exec(sb, cmd);
      if (r.code !== code) throw new Error(`\`${cmd}\` exited ${r.code}, expected ${code}`);
      if (bytes >= 0 ? r.out !== bytes : r.out <= 0) throw new Error(`\`${cmd}\` printed ${r.out} bytes`);
      step();
    }
  } finally {
    await sdk.close(sb);
  }
  step();
  return { total: performance.now() - t0, steps };
};

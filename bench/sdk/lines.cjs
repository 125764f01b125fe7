// The line protocol shared by the three SDK scripts the bench drives: after "ready", one request a
// line on stdin ("write PATH BYTES", "write-noise PATH BYTES" or "stdin BYTES"), one answer a line on stdout ("ms N" with
// the milliseconds measured around the SDK call only, or "fail REASON"); "quit" or end-of-input
// closes the sandbox. Node's start-up and the sandbox's creation are outside every timing.
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
      console.log('ms ' + ms.toFixed(3));
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

// Modal's official JS SDK (npm `modal`, from backend-modal/src/test/sdk) for the bench: one
// sandbox, then timed filesystem.writeBytes and binary-stdin execs, and agent turns on new sandboxes (see lines.cjs for the protocol).
// Reads MODAL_SERVER_URL, MODAL_TOKEN_ID and MODAL_TOKEN_SECRET like any SDK user.
'use strict';
const lines = require('./lines.cjs');
const { ModalClient } = lines.sdk('modal');
const STDIN_CHUNK = 16 * 1024 * 1024;

(async () => {
  const modal = new ModalClient();
  const app = await modal.apps.fromName('airlock-bench', { createIfMissing: true });
  const size = async (file) => {
    const p = await sb.exec(['wc', '-c', file]);
    const out = await p.stdout.readText();
    await p.wait();
    return parseInt(out, 10);
  };
  const image = modal.images.fromRegistry('alpine:3.21');
  const turnSdk = {
    open: () => modal.sandboxes.create(app, image),
    read: (s, f) => s.filesystem.readBytes(f),
    write: (s, f, data) => s.filesystem.writeBytes(data, f),
    exec: async (s, cmd) => {
      const p = await s.exec(['sh', '-c', cmd], { mode: 'binary', stdout: 'pipe', stderr: 'pipe' });
      const [out] = await Promise.all([p.stdout.readBytes(), p.stderr.readBytes()]);
      return { code: await p.wait(), out: out.length };
    },
    close: (s) => s.terminate(),
  };
  const sb = await modal.sandboxes.create(app, image);
  await lines.serve({
    turn: (...paths) => lines.turn(turnSdk, ...paths),
    write: async (file, n, kind) => {
      const data = lines.payload(Number(n), kind);
      const ms = await lines.time(() => sb.filesystem.writeBytes(data, file));
      const seen = await size(file);
      if (seen !== data.length) throw new Error(`wrote ${data.length} bytes, the sandbox has ${seen}`);
      return ms;
    },
    stdin: async (n) => {
      const data = lines.payload(Number(n));
      let code;
      const ms = await lines.time(async () => {
        const p = await sb.exec(['sh', '-c', 'cat > /dev/null'], { mode: 'binary', stdout: 'pipe', stderr: 'pipe' });
        // Modal takes at most 16 MiB per stdin write (the emulator enforces the same limit), so a
        // user of the SDK writes larger inputs in slices of that size.
        for (let off = 0; off < data.length; off += STDIN_CHUNK) {
          await p.stdin.writeBytes(data.subarray(off, Math.min(off + STDIN_CHUNK, data.length)));
        }
        await p.stdin.close();
        code = await p.wait();
      });
      if (code !== 0) throw new Error('cat exited ' + code);
      return ms;
    },
  }, async () => {
    await sb.terminate();
    modal.close();
  });
})().catch((e) => { console.log('fail ' + String((e && e.message) || e).split('\n')[0]); process.exit(1); });

// Daytona's official TS SDK (npm `@daytona/sdk`, from backend-daytona/src/test/sdk) for the bench:
// one sandbox, then timed fs.uploadFile calls, and agent turns on new sandboxes (see lines.cjs for the protocol). The SDK has no exec
// with a stdin that reaches end-of-input, so there is no stdin request. Reads DAYTONA_API_URL and
// DAYTONA_API_KEY like any SDK user.
'use strict';
const lines = require('./lines.cjs');
const { Daytona } = lines.sdk('@daytona/sdk');

(async () => {
  const daytona = new Daytona();
  const sandbox = await daytona.create({ labels: { purpose: 'airlock-bench' } }, { timeout: 60 });
  const turnSdk = {
    open: () => daytona.create({ labels: { purpose: 'airlock-bench' } }, { timeout: 60 }),
    read: (s, f) => s.fs.downloadFile(f),
    write: (s, f, data) => s.fs.uploadFile(data, f),
    exec: async (s, cmd) => {
      const r = await s.process.executeCommand(`sh -c '${cmd}'`);
      return { code: r.exitCode, out: Buffer.byteLength(r.result) };
    },
    close: (s) => s.delete(),
  };
  await lines.serve({
    turn: (...paths) => lines.turn(turnSdk, ...paths),
    write: async (file, n, kind) => {
      const data = lines.payload(Number(n), kind);
      const ms = await lines.time(() => sandbox.fs.uploadFile(data, file));
      const seen = await sandbox.process.executeCommand(`wc -c < '${file}'`, undefined, undefined, 60);
      if (seen.result.trim() !== String(data.length)) throw new Error(`wrote ${data.length} bytes, the sandbox has ${seen.result.trim()}`);
      return ms;
    },
  }, () => sandbox.delete());
})().catch((e) => { console.log('fail ' + String((e && e.message) || e).split('\n')[0]); process.exit(1); });

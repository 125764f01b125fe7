// Vercel's official SDK (npm `@vercel/sandbox`, from backend-vercel/src/test/sdk) for the bench: one
// sandbox, then timed writeFiles calls, and agent turns on new sandboxes (see lines.cjs for the protocol). Its base URL is fixed, so a
// custom fetch (the SDK's own option) sends https://vercel.com/api to the emulator at argv[3]. The
// SDK has no command stdin with end-of-input, so there is no stdin request.
'use strict';
const lines = require('./lines.cjs');
const { Sandbox } = lines.sdk('@vercel/sandbox');

const base = process.argv[3];
const fetchToEmulator = (url, init) => fetch(String(url).replace('https://vercel.com/api', base), init);
// The emulator's token and team, by the environment (never argv).
const creds = { token: process.env.VERCEL_TOKEN, teamId: process.env.VERCEL_TEAM_ID, projectId: 'prj_airlock', fetch: fetchToEmulator };

(async () => {
  const sandbox = await Sandbox.create({ ...creds, timeout: 600000, tags: { owner: 'airlock-bench' } });
  const turnSdk = {
    open: () => Sandbox.create({ ...creds, timeout: 600000, tags: { owner: 'airlock-bench' } }),
    read: (s, f) => s.readFileToBuffer({ path: f }),
    write: (s, f, data) => s.writeFiles([{ path: f, content: data }]),
    exec: async (s, cmd) => {
      const r = await s.runCommand('sh', ['-c', cmd]);
      return { code: r.exitCode, out: Buffer.byteLength(await r.stdout()) };
    },
    close: (s) => s.stop(),
  };
  await lines.serve({
    turn: (...paths) => lines.turn(turnSdk, ...paths),
    write: async (file, n, kind) => {
      const data = lines.payload(Number(n), kind);
      const ms = await lines.time(() => sandbox.writeFiles([{ path: file, content: data }]));
      const run = await sandbox.runCommand('sh', ['-c', `wc -c < '${file}'`]);
      const seen = (await run.stdout()).trim();
      if (seen !== String(data.length)) throw new Error(`wrote ${data.length} bytes, the sandbox has ${seen}`);
      return ms;
    },
  }, () => sandbox.stop());
})().catch((e) => { console.log('fail ' + String((e && e.message) || e).split('\n')[0]); process.exit(1); });

// Daytona's official TS SDK against the Airlock emulator: create, execute, upload, download, sessions, delete.
// Reads DAYTONA_API_URL and DAYTONA_API_KEY like any SDK user; prints one "ok ..." line per step.
'use strict';
const { Daytona } = require('@daytona/sdk');

function fail(msg) {
  console.error('FAIL ' + msg);
  process.exit(1);
}

// Runs `call`, which the emulator must refuse with `status` and a message containing `words`; prints "ok STEP STATUS MESSAGE".
async function refused(step, call, status, words) {
  try {
    await call();
  } catch (e) {
    const got = e.statusCode || (e.response && e.response.status);
    if (got !== status || !String(e.message).includes(words)) {
      fail(step + ': expected ' + status + ' and "' + words + '", got ' + got + ': ' + e.message);
    }
    console.log('ok ' + step + ' ' + got + ' ' + e.message);
    return;
  }
  fail(step + ': accepted');
}

(async () => {
  // A key the emulator does not know is refused as the service refuses it: 401 Unauthorized.
  await refused('refused', () => new Daytona({ apiKey: 'not-the-emulators-key', apiUrl: process.env.DAYTONA_API_URL })
    .create({ labels: { purpose: 'airlock-sdk-check-refused' } }, { timeout: 30 }), 401, 'Unauthorized');

  const daytona = new Daytona();
  // Over the per-sandbox maximum (4 vCPUs on the default tier): refused 403 with the service's message.
  await refused('over-limit', () => daytona.create({ image: 'debian:12', resources: { cpu: 512 } }, { timeout: 30 }), 403,
    'CPU request 512 exceeds maximum allowed per sandbox (4)');
  // A snapshot the service has not got is refused 400 with its words.
  await refused('unknown-snapshot', () => daytona.create({ snapshot: 'no-such-snapshot-zzz' }, { timeout: 30 }), 400,
    'Snapshot no-such-snapshot-zzz not found. Did you add it through the Daytona Dashboard?');
  const sandbox = await daytona.create({ labels: { purpose: 'airlock-sdk-check' } }, { timeout: 60 });
  if (sandbox.state !== 'started') fail('create: state ' + sandbox.state);
  console.log('ok create ' + sandbox.id);

  const r = await sandbox.process.executeCommand("printf 'hello %s' \"$WHO\"", undefined, { WHO: 'sdk' }, 30);
  if (r.exitCode !== 0 || r.result !== 'hello sdk') fail('execute: ' + JSON.stringify(r));
  const bad = await sandbox.process.executeCommand('exit 7', undefined, undefined, 30);
  if (bad.exitCode !== 7) fail('execute exit code: ' + JSON.stringify(bad));
  console.log('ok execute');

  const payload = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0x41, 0x42, 0]);
  await sandbox.fs.uploadFile(payload, '/home/daytona/sdk/data.bin');
  const seen = await sandbox.process.executeCommand('wc -c < /home/daytona/sdk/data.bin', undefined, undefined, 30);
  if (seen.result.trim() !== String(payload.length)) fail('upload size: ' + JSON.stringify(seen));
  console.log('ok upload');

  const back = await sandbox.fs.downloadFile('/home/daytona/sdk/data.bin');
  if (!Buffer.isBuffer(back) || !back.equals(payload)) fail('download: ' + (back && back.toString('hex')));
  console.log('ok download');

  // A session is one shell: what a command does to it is there for the next command.
  await sandbox.process.createSession('state');
  const set = await sandbox.process.executeSessionCommand('state', { command: 'export FOO=bar; cd /tmp' }, 30);
  if (set.exitCode !== 0) fail('session set: ' + JSON.stringify(set));
  const got = await sandbox.process.executeSessionCommand('state', { command: 'echo "FOO=$FOO pwd=$(pwd)"' }, 30);
  if (got.exitCode !== 0 || got.stdout !== 'FOO=bar pwd=/tmp\n') fail('session state: ' + JSON.stringify(got));
  await sandbox.process.deleteSession('state');
  console.log('ok session state');

  // An async command reads what the client sends it; the input is echoed to its stdout unless suppressed.
  await sandbox.process.createSession('input');
  const asked = await sandbox.process.executeSessionCommand('input',
    { command: 'read name; echo "hello $name"; exit_code=3; (exit $exit_code)', runAsync: true }, 30);
  await sandbox.process.sendSessionCommandInput('input', asked.cmdId, 'sdk');
  let done;
  for (let i = 0; i < 100; i++) {
    done = await sandbox.process.getSessionCommand('input', asked.cmdId);
    if (done.exitCode !== undefined && done.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const heard = await sandbox.process.getSessionCommandLogs('input', asked.cmdId);
  if (done.exitCode !== 3 || heard.stdout !== 'sdk\nhello sdk\n') {
    fail('session input: ' + JSON.stringify(done) + ' ' + JSON.stringify(heard));
  }
  await refused('late-input', () => sandbox.process.sendSessionCommandInput('input', asked.cmdId, 'late'), 410,
    'command has already completed with exit code 3');
  await sandbox.process.deleteSession('input');
  console.log('ok session input');

  // Preview links: a server in the sandbox, reached through the standard URL (its token in a header,
  // refused without) and a signed URL (no header), which its expiry call revokes.
  await sandbox.fs.uploadFile(Buffer.from('served by the sandbox\n'), '/home/daytona/www/index.html');
  const httpd = await sandbox.process.executeCommand('busybox httpd -p 3000 -h /home/daytona/www', undefined, undefined, 30);
  if (httpd.exitCode !== 0) fail('httpd: ' + JSON.stringify(httpd));
  const get = async (url, headers) => {
    for (let i = 0; ; i++) {
      try {
        const res = await fetch(url, { headers });
        return { status: res.status, body: await res.text() };
      } catch (e) {
        if (i > 50) throw e;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const link = await sandbox.getPreviewLink(3000);
  const bare = await get(link.url, {});
  if (bare.status !== 401) fail('preview without token: ' + JSON.stringify(bare));
  const withToken = await get(link.url, { 'x-daytona-preview-token': link.token });
  if (withToken.status !== 200 || withToken.body !== 'served by the sandbox\n') fail('preview with token: ' + JSON.stringify(withToken));
  console.log('ok preview link');
  const signed = await sandbox.getSignedPreviewUrl(3000, 120);
  const viaSigned = await get(signed.url, {});
  if (viaSigned.status !== 200 || viaSigned.body !== 'served by the sandbox\n') fail('signed preview: ' + JSON.stringify(viaSigned));
  await sandbox.expireSignedPreviewUrl(3000, signed.token);
  const expired = await get(signed.url, {});
  if (expired.status !== 401) fail('expired signed preview: ' + JSON.stringify(expired));
  console.log('ok signed preview');

  // A snapshot of the running sandbox's files, and a new sandbox made from it with those bytes.
  await sandbox._experimental_createSnapshot('airlock-sdk-check-snapshot', 60);
  const copy = await daytona.create({ snapshot: 'airlock-sdk-check-snapshot' }, { timeout: 60 });
  const copied = await copy.fs.downloadFile('/home/daytona/sdk/data.bin');
  if (!copied.equals(payload)) fail('snapshot: ' + copied.toString('hex'));
  await copy.delete();
  await daytona.snapshot.delete('airlock-sdk-check-snapshot');
  console.log('ok snapshot');

  await sandbox.delete();
  let gone = false;
  try {
    await daytona.get(sandbox.id);
  } catch (e) {
    gone = /not found/i.test(String(e && e.message)) || (e && e.statusCode === 404);
  }
  if (!gone) fail('delete: the sandbox is still there');
  console.log('ok delete');
  process.exit(0);
})().catch((e) => fail((e && e.stack) || String(e)));

// Modal's official JS SDK (npm `modal`, pinned in package.json) against the Airlock Modal
// emulator: create, exec with binary stdin, exec ends by signal and by code, exec with a pty,
// file write and read, lookup by name, tags, tunnels,
// filesystem snapshots (image from id, delete), terminate. Run by ModalSdkIT
// with MODAL_SERVER_URL, MODAL_TOKEN_ID, MODAL_TOKEN_SECRET set; MODAL_SANDBOX_V2=0 selects the
// V1 family. Prints one line per step, "ok" last; any mismatch exits non-zero.
import { AlreadyExistsError, ModalClient, NotFoundError } from "modal";
import { randomBytes } from "node:crypto";

const family = process.env.MODAL_SANDBOX_V2 === "0" ? "V1" : "V2";
const fail = (msg) => { console.error(`FAIL (${family}): ${msg}`); process.exit(1); };
const equal = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

// A token pair the emulator does not know is refused as the service refuses it: UNAUTHENTICATED (16).
try {
  const stranger = new ModalClient({ tokenId: "ak-not-the-emulators", tokenSecret: "as-not-the-emulators" });
  await stranger.apps.fromName("airlock-sdk-check", { createIfMissing: true });
  fail("a wrong token pair was accepted");
} catch (e) {
  if (e.code !== 16) fail(`a wrong token pair: expected gRPC code 16 (UNAUTHENTICATED), got ${e.code}: ${e.message}`);
  console.log("wrong token pair refused: UNAUTHENTICATED");
}

const modal = new ModalClient();
const app = await modal.apps.fromName("airlock-sdk-check", { createIfMissing: true });
const image = modal.images.fromRegistry("alpine:3.21");
// Over the service's limits (24 h timeout, 64 cores, 336 GiB): refused INVALID_ARGUMENT (3), nothing made.
for (const [what, params] of [["a 100-hour timeout", { timeoutMs: 100 * 3600 * 1000 }], ["4096 CPUs", { cpu: 4096 }],
                              ["~10 TB of memory", { memoryMiB: 10_000_000 }]]) {
  try {
    const over = await modal.sandboxes.create(app, image, params);
    await over.terminate();
    fail(`${what} was accepted`);
  } catch (e) {
    if (e.code !== 3) fail(`${what}: expected gRPC code 3 (INVALID_ARGUMENT), got ${e.code}: ${e.message}`);
    console.log(`${what} refused: INVALID_ARGUMENT`);
  }
}

// An image no registry has fails its build, as on the service: nothing is made.
try {
  const none = await modal.sandboxes.create(app, modal.images.fromRegistry("no-such-image-zzz:404"));
  await none.terminate();
  fail("a sandbox was made from no-such-image-zzz:404");
} catch (e) {
  if (!/^Image build for im-\S+ failed with the exception:\n.*no-such-image-zzz:404/.test(String(e.message))) {
    fail(`an unknown image: expected its build to fail, got ${e.message}`);
  }
  console.log("an unknown image fails its build");
}

const sb = await modal.sandboxes.create(app, image);
console.log(`created ${sb.sandboxId} (${family})`);
const v1 = /^sb-[A-Za-z0-9]{22}$/.test(sb.sandboxId);
if ((family === "V1") !== v1) fail(`sandbox id ${sb.sandboxId} is not of the ${family} shape`);

// Binary stdin (every byte value, 3 MiB) through cat, read back as bytes.
const payload = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(3 * 1024 * 1024)]);
const p = await sb.exec(["cat"], { mode: "binary", stdout: "pipe", stderr: "pipe" });
await p.stdin.writeBytes(payload);
await p.stdin.close();
const out = await p.stdout.readBytes();
const code = await p.wait();
if (code !== 0) fail(`cat exited ${code}`);
if (!equal(out, payload)) fail(`cat returned ${out.length} bytes, sent ${payload.length}`);
console.log(`exec cat: ${out.length} bytes back, exit ${code}`);

const e = await sb.exec(["sh", "-c", "echo oops >&2; exit 7"], { stdout: "pipe", stderr: "pipe" });
const err = await e.stderr.readText();
const code7 = await e.wait();
if (code7 !== 7 || err !== "oops\n") fail(`exit ${code7}, stderr ${JSON.stringify(err)}`);
console.log("exec exit code and stderr: ok");

// How an exec ended: the router answers signal N for a command a signal killed and code N for
// one that exited; the SDK's wait() reports a signal as 128+N, so KILL is 137, TERM 143, and an
// `exit 137` is 137 too.
for (const [script, want] of [["kill -KILL $$", 137], ["kill -TERM $$", 143], ["exit 137", 137]]) {
  const s = await sb.exec(["sh", "-c", script]);
  const got = await s.wait();
  if (got !== want) fail(`${script}: wait() gave ${got}, expected ${want}`);
}
console.log("exec ends: SIGKILL 137, SIGTERM 143, exit 137 137");

// pty: a real terminal, as the service gives: tty names it, stderr comes on stdout, \n as \r\n,
// TERM from the SDK's pty_info, the size 24x80 it asks for. Without pty, no terminal.
const t = await sb.exec(["sh", "-c", "tty; echo err >&2; echo $TERM; stty size"], { pty: true });
const tOut = await t.stdout.readText();
const tErr = await t.stderr.readText();
const tCode = await t.wait();
if (tCode !== 0 || !/^\/dev\/pts\/\d+\r\nerr\r\nxterm-256color\r\n24 80\r\n$/.test(tOut) || tErr !== "") {
  fail(`a pty exec: exit ${tCode}, stdout ${JSON.stringify(tOut)}, stderr ${JSON.stringify(tErr)}`);
}
// A sandbox-level pty (for its entrypoint, which the emulator does not run) is refused, never dropped.
try {
  const ptySb = await modal.sandboxes.create(app, image, { pty: true });
  await ptySb.terminate();
  fail("a sandbox with pty: true was made");
} catch (ex) {
  if (ex.code !== 3) fail(`a sandbox with pty: true: expected gRPC code 3 (INVALID_ARGUMENT), got ${ex.code}: ${ex.message}`);
}
// So is a sandbox command (its entrypoint): the service would run it and end the sandbox with it.
try {
  const cmdSb = await modal.sandboxes.create(app, image, { command: ["sleep", "1"] });
  await cmdSb.terminate();
  fail("a sandbox with a command (entrypoint) was made");
} catch (ex) {
  if (ex.code !== 3) fail(`a sandbox with a command: expected gRPC code 3 (INVALID_ARGUMENT), got ${ex.code}: ${ex.message}`);
}
const nt = await sb.exec(["sh", "-c", "tty; echo err >&2"]);
const ntOut = await nt.stdout.readText();
const ntErr = await nt.stderr.readText();
if ((await nt.wait()) !== 0 || ntOut !== "not a tty\n" || ntErr !== "err\n") fail(`an exec without pty: stdout ${JSON.stringify(ntOut)}, stderr ${JSON.stringify(ntErr)}`);
console.log(`pty: ${JSON.stringify(tOut.split("\r\n")[0])}, stderr merged, \\r\\n; without pty: not a tty; a sandbox pty refused`);

// Files through modal-sandbox-fs-tools.
const file = Buffer.concat([Buffer.from([0, 255, 10, 13]), randomBytes(700 * 1024)]);
await sb.filesystem.writeBytes(file, "/tmp/sdk-check/blob.bin");
const back = await sb.filesystem.readBytes("/tmp/sdk-check/blob.bin");
if (!equal(back, file)) fail(`readBytes returned ${back.length} bytes, wrote ${file.length}`);
const wc = await sb.exec(["wc", "-c", "/tmp/sdk-check/blob.bin"]);
const wcOut = await wc.stdout.readText();
await wc.wait();
if (!wcOut.startsWith(String(file.length))) fail(`the file seen by a command: ${wcOut}`);
let missing = false;
try { await sb.filesystem.readBytes("/tmp/sdk-check/none"); } catch (ex) { missing = /NotFound|not found/i.test(String(ex?.name) + String(ex?.message)); }
if (!missing) fail("reading a missing file did not fail with NotFound");
console.log(`files: ${file.length} bytes written and read back; a missing file is NotFound`);

// Lookup by name: a named sandbox is found by its app's name and its own; a second running one of
// the same name is refused ALREADY_EXISTS (AlreadyExistsError); an unknown name is NotFoundError.
const name = `airlock-named-${family}-${process.pid}`;
const named = await modal.sandboxes.create(app, image, { name });
const found = await modal.sandboxes.fromName("airlock-sdk-check", name);
if (found.sandboxId !== named.sandboxId) fail(`fromName found ${found.sandboxId}, not ${named.sandboxId}`);
const hello = await found.exec(["echo", "found"]);
if ((await hello.stdout.readText()) !== "found\n" || (await hello.wait()) !== 0) fail("exec on the sandbox fromName found");
try {
  const twin = await modal.sandboxes.create(app, image, { name });
  await twin.terminate();
  fail("a second running sandbox with the same name was made");
} catch (ex) {
  if (!(ex instanceof AlreadyExistsError)) fail(`a second sandbox of the same name: expected AlreadyExistsError, got ${ex?.name}: ${ex?.message}`);
}
try {
  await modal.sandboxes.fromName("airlock-sdk-check", "no-such-sandbox-zzz");
  fail("fromName found a sandbox that was never made");
} catch (ex) {
  if (!(ex instanceof NotFoundError)) fail(`fromName of an unknown name: expected NotFoundError, got ${ex?.name}: ${ex?.message}`);
}
console.log(`fromName: ${name} found; a second of that name refused; an unknown name is NotFound`);

// Tags: setTags replaces the whole set, getTags reads it back from the server; {} clears it.
await named.setTags({ owner: "airlock", family });
const tags = await found.getTags();
if (JSON.stringify(tags) !== JSON.stringify({ family, owner: "airlock" })) fail(`getTags: ${JSON.stringify(tags)}`);
await named.setTags({ owner: "someone-else" });
const replaced = await named.getTags();
if (JSON.stringify(replaced) !== JSON.stringify({ owner: "someone-else" })) fail(`setTags did not replace the set: ${JSON.stringify(replaced)}`);
await named.setTags({});
if (Object.keys(await named.getTags()).length !== 0) fail("setTags({}) did not clear the tags");
console.log("tags: set, read back, replaced, cleared");

// Once terminated, the name is free: no lookup finds it, and a new sandbox may take it.
await named.terminate();
await named.wait();
try {
  await modal.sandboxes.fromName("airlock-sdk-check", name);
  fail("fromName found a terminated sandbox");
} catch (ex) {
  if (!(ex instanceof NotFoundError)) fail(`fromName after terminate: expected NotFoundError, got ${ex?.name}: ${ex?.message}`);
}
const again = await modal.sandboxes.create(app, image, { name });
await again.terminate();
console.log("a terminated sandbox's name is free again");

// Tunnels: an unencrypted port's raw TCP endpoint (tcpSocket) reaches a server in the sandbox, byte for byte.
const ported = await modal.sandboxes.create(app, image, { unencryptedPorts: [8000] });
const served = Buffer.concat([Buffer.from([0, 255, 13, 10]), randomBytes(50 * 1024)]);
await ported.filesystem.writeBytes(served, "/tmp/www/x.bin");
await ported.exec(["sh", "-c", "exec busybox httpd -f -p 8000 -h /tmp/www"]);
const tunnels = await ported.tunnels();
if (!tunnels[8000]) fail(`tunnels() has no port 8000: ${JSON.stringify(Object.keys(tunnels))}`);
const [tcpHost, tcpPort] = tunnels[8000].tcpSocket;
let got = null;
for (let i = 0; i < 50 && got === null; i++) {
  try { got = Buffer.from(await (await fetch(`http://${tcpHost}:${tcpPort}/x.bin`)).arrayBuffer()); }
  catch { await new Promise((r) => setTimeout(r, 200)); }
}
if (got === null || !equal(got, served)) fail(`the tunnel of port 8000 gave ${got?.length} bytes, served ${served.length}`);
await ported.terminate();
console.log(`tunnels: port 8000 served ${got.length} bytes through ${tcpHost}:${tcpPort}`);

// Filesystem snapshots: a new sandbox from the image has the file; a deleted image is NotFound.
const kept = Buffer.concat([Buffer.from([0, 1, 2, 255]), randomBytes(10 * 1024)]);
await sb.filesystem.writeBytes(kept, "/tmp/snap/kept.bin");
const snap = await sb.snapshotFilesystem();
if (!/^im-/.test(snap.imageId)) fail(`snapshotFilesystem gave image ${snap.imageId}`);
const restored = await modal.sandboxes.create(app, await modal.images.fromId(snap.imageId));
const keptBack = await restored.filesystem.readBytes("/tmp/snap/kept.bin");
if (!equal(keptBack, kept)) fail(`the snapshot's file came back as ${keptBack.length} bytes, wrote ${kept.length}`);
await restored.terminate();
await modal.images.delete(snap.imageId);
try {
  await modal.images.fromId(snap.imageId);
  fail("images.fromId found a deleted image");
} catch (ex) {
  if (!(ex instanceof NotFoundError)) fail(`fromId of a deleted image: expected NotFoundError, got ${ex?.name}: ${ex?.message}`);
}
console.log(`snapshots: ${snap.imageId} restored ${keptBack.length} bytes; deleted, then NotFound`);

await sb.terminate();
const after = await sb.wait();
console.log(`terminated, wait -> ${after}`);
modal.close();
console.log("ok");

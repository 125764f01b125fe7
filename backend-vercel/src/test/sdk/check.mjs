// Vercel's official SDK, unchanged, against the emulator at process.argv[2]: its base URL is fixed,
// so a custom fetch rewrites https://vercel.com/api to the emulator (the SDK's own option).
import { Sandbox, Snapshot } from "@vercel/sandbox";
import http from "node:http";

const base = process.argv[2];
if (!base) {
  console.error("usage: node check.mjs EMULATOR_URL");
  process.exit(2);
}
const fetchToEmulator = (url, init) => fetch(String(url).replace("https://vercel.com/api", base), init);
// The token and team the emulator accepts come by the environment (never argv), as a user's do.
const token = process.env.VERCEL_TOKEN;
const teamId = process.env.VERCEL_TEAM_ID;
if (!token || !teamId) {
  console.error("set VERCEL_TOKEN and VERCEL_TEAM_ID to the emulator's credentials");
  process.exit(2);
}
const creds = { token, teamId, projectId: "prj_airlock", fetch: fetchToEmulator };

function check(cond, what) {
  if (!cond) {
    console.error("FAILED: " + what);
    process.exit(1);
  }
  console.log("ok: " + what);
}

// Credentials the emulator does not know are refused as the service refuses them: 403 forbidden.
async function refused(params) {
  try {
    await Sandbox.create({ ...creds, ...params, timeout: 120000 });
    return "created";
  } catch (e) {
    return (e.response ? e.response.status : "no response") + " " + (e.json && e.json.error ? e.json.error.code : String(e.message));
  }
}
const wrongToken = await refused({ token: "not-the-emulator-token" });
check(wrongToken === "403 forbidden", "a wrong token is refused 403 forbidden (got " + wrongToken + ")");
const wrongTeam = await refused({ teamId: "team_not_mine" });
check(wrongTeam === "403 forbidden", "a team the token is not in is refused 403 forbidden (got " + wrongTeam + ")");
// Over the documented limits: refused 400 bad_request, nothing made.
const manyPorts = await refused({ ports: Array.from({ length: 16 }, (_, i) => 3000 + i) });
check(manyPorts === "400 bad_request", "16 ports (the SDK documents 15) are refused 400 bad_request (got " + manyPorts + ")");
const manyCpus = await refused({ resources: { vcpus: 999 } });
check(manyCpus === "400 bad_request", "999 vCPUs are refused 400 bad_request (got " + manyCpus + ")");

const sandbox = await Sandbox.create({ ...creds, timeout: 120000, ports: [3000], tags: { owner: "airlock-sdk-check" } });
check(sandbox.sandbox.status === "running" || sandbox.currentSession().status === "running", "create answers a running session");

const payload = Buffer.from([0, 1, 2, 255, 10, 104, 105]);
await sandbox.writeFiles([
  { path: "data/bin.dat", content: payload },
  { path: "/tmp/deep/dir/run.sh", content: "#!/bin/sh\necho from-script\n", mode: 0o755 },
]);
check(true, "writeFiles");

const run = await sandbox.runCommand("sh", ["-c", "wc -c < data/bin.dat; /tmp/deep/dir/run.sh; echo oops >&2; exit 3"]);
check(run.exitCode === 3, "runCommand exit code 3 (got " + run.exitCode + ")");
const out = await run.stdout();
check(out === "7\nfrom-script\n", "runCommand stdout (got " + JSON.stringify(out) + ")");
check((await run.stderr()) === "oops\n", "runCommand stderr");

const detached = await sandbox.runCommand({ cmd: "sh", args: ["-c", "echo later; exit 4"], detached: true });
const done = await detached.wait();
check(done.exitCode === 4, "detached command waits to exit code 4");
check((await done.stdout()) === "later\n", "detached command logs");

const back = await sandbox.readFileToBuffer({ path: "data/bin.dat" });
check(back !== null && Buffer.compare(back, payload) === 0, "readFile returns the bytes written");
check((await sandbox.readFileToBuffer({ path: "no/such/file" })) === null, "readFile of a missing file is null");

// A port's route: domain(3000) is https://SUBDOMAIN.vercel.run; a request for that host (sent to the
// emulator, as a DNS entry for *.vercel.run would send it) reaches the server listening on 3000 inside.
const domain = sandbox.domain(3000);
check(/^https:\/\/[a-z0-9-]+\.vercel\.run$/.test(domain), "domain(3000) is a vercel.run URL (got " + domain + ")");
let noRoute = "";
try { sandbox.domain(4000); } catch (e) { noRoute = e.message; }
check(noRoute === "No route for port 4000", "a port not exposed has no route (got " + noRoute + ")");
const server = "require('http').createServer((q, r) => { r.setHeader('content-type', 'application/octet-stream');"
  + " r.setHeader('x-path', q.url); require('fs').createReadStream('data/bin.dat').pipe(r); }).listen(3000, '127.0.0.1')";
await sandbox.runCommand({ cmd: "node", args: ["-e", server], detached: true });
const emulator = new URL(base);
function viaDomain(path) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: emulator.hostname, port: emulator.port, path, headers: { host: new URL(domain).host } }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}
let served = await viaDomain("/bin?x=1");
for (let i = 0; i < 100 && served.status === 502; i++) {
  await new Promise((r) => setTimeout(r, 100));
  served = await viaDomain("/bin?x=1");
}
check(served.status === 200, "the port's domain answers 200 once the server listens (got " + served.status + " " + served.body + ")");
check(Buffer.compare(served.body, payload) === 0, "the port's domain serves the bytes the server in the sandbox sends");
check(served.headers["x-path"] === "/bin?x=1", "the request's path and query reach the server");

await sandbox.mkDir("made");
const ls = await sandbox.runCommand("sh", ["-c", "test -d made && stat -c %a /tmp/deep/dir/run.sh"]);
check((await ls.stdout()) === "755\n", "mkDir made a directory; the header mode 0755 was applied");

// Commands and the file API run as the sandbox's user (the emulator's test says which it expects:
// vercel-sandbox where the emulator runs as root and can switch to it); with sudo, as root.
const user = process.env.AIRLOCK_EXPECT_USER;
const mine = await sandbox.runCommand("sh", ["-c", "id -un; stat -c %U data/bin.dat; touch /not-mine 2>/dev/null; echo $?"]);
const refusal = user === "root" ? "0" : "1";
check((await mine.stdout()) === user + "\n" + user + "\n" + refusal + "\n", "commands and written files are " + user + "'s");
const sudo = await sandbox.runCommand({ cmd: "sh", args: ["-c", "id -un; touch /made-by-root; echo $?"], sudo: true });
check((await sudo.stdout()) === "root\n0\n", "a sudo command runs as root");

// Snapshots, as the SDK takes them: snapshot() stops the session; a sandbox created from the
// snapshot has its files; Snapshot.get reads it; delete() marks it deleted; an unknown id is refused.
const snap = await sandbox.snapshot();
check(snap.status === "created" && snap.snapshotId.startsWith("snap_"), "snapshot() answers a created snapshot");
check(sandbox.currentSession().status === "stopped", "the session stopped with the snapshot, as the SDK documents");
const child = await Sandbox.create({ ...creds, timeout: 120000, source: { type: "snapshot", snapshotId: snap.snapshotId } });
const copied = await child.readFileToBuffer({ path: "data/bin.dat" });
check(copied !== null && Buffer.compare(copied, payload) === 0, "a sandbox created from the snapshot has the bytes written before it");
await child.stop();
const got = await Snapshot.get({ ...creds, snapshotId: snap.snapshotId });
check(got.snapshotId === snap.snapshotId && got.sizeBytes > 0, "Snapshot.get reads the snapshot");
await got.delete();
check(got.status === "deleted", "delete() marks the snapshot deleted");
let unknown = "found";
try { await Snapshot.get({ ...creds, snapshotId: "snap_nosuchsnapshot" }); } catch (e) { unknown = String(e.response ? e.response.status : e.message); }
check(unknown === "404", "an unknown snapshot is 404 (got " + unknown + ")");

const stopped = await sandbox.stop();
check(stopped.status === "stopped", "stop answers a stopped session");
console.log("SDK CHECK PASSED");

// Vercel's official SDK, unchanged, against two emulators with small vCPU allocation rates:
// argv[2] allows 2 vCPUs per 600 s, argv[3] 2 vCPUs per 10 s. The SDK gives up at once on a 429
// whose Retry-After is over 20 s, and waits out a shorter one and sends the create again.
import { Sandbox } from "@vercel/sandbox";

const [longUrl, shortUrl] = process.argv.slice(2);
if (!longUrl || !shortUrl) {
  console.error("usage: node ratelimit.mjs LONG_WINDOW_EMULATOR_URL SHORT_WINDOW_EMULATOR_URL");
  process.exit(2);
}
const token = process.env.VERCEL_TOKEN;
const teamId = process.env.VERCEL_TEAM_ID;
if (!token || !teamId) {
  console.error("set VERCEL_TOKEN and VERCEL_TEAM_ID to the emulators' credentials");
  process.exit(2);
}
const to = (base) => (url, init) => fetch(String(url).replace("https://vercel.com/api", base), init);
const params = (base) => ({ token, teamId, projectId: "prj_airlock", fetch: to(base), timeout: 120000, resources: { vcpus: 2 } });

function check(cond, what) {
  if (!cond) {
    console.error("FAILED: " + what);
    process.exit(1);
  }
  console.log("ok: " + what);
}

const first = await Sandbox.create(params(longUrl));
check(true, "the first create fits the rate");
let refusal = "created";
try {
  const second = await Sandbox.create(params(longUrl));
  await second.stop();
} catch (e) {
  const r = e.response;
  refusal = r ? r.status + " " + (e.json && e.json.error ? e.json.error.code : "?") + " retry-after=" + r.headers.get("retry-after")
      + " remaining=" + r.headers.get("x-ratelimit-remaining") : String(e.message);
}
check(/^429 rate_limited retry-after=(5\d\d|600) remaining=0$/.test(refusal),
    "over the rate, a create is refused 429 rate_limited with Retry-After and X-RateLimit-Remaining (got " + refusal + ")");
await first.stop();

const a = await Sandbox.create(params(shortUrl));
const b = await Sandbox.create(params(shortUrl));
check(b.currentSession().status === "running", "a create refused with a short Retry-After is waited out by the SDK and made");
await a.stop();
await b.stop();
console.log("SDK RATE LIMIT CHECK PASSED");

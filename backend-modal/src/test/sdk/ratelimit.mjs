// Modal's official JS SDK against the Airlock Modal emulator started with a sandbox creation rate
// of 1 (airlock.modal.emulator.rate-limit.sandbox-create=1/600): the first create makes a sandbox,
// the second is refused RESOURCE_EXHAUSTED (8), which the SDK raises without sending it again (its
// retries are DEADLINE_EXCEEDED, UNAVAILABLE, CANCELLED, INTERNAL, UNKNOWN). Run by ModalSdkIT;
// prints one line per step, "ok" last; any mismatch exits non-zero.
import { ModalClient } from "modal";

const fail = (msg) => { console.error(`FAIL: ${msg}`); process.exit(1); };
const modal = new ModalClient();
const app = await modal.apps.fromName("airlock-sdk-ratelimit", { createIfMissing: true });
const image = modal.images.fromRegistry("alpine:3.21");

const first = await modal.sandboxes.create(app, image);
console.log(`created ${first.sandboxId}`);
try {
  const second = await modal.sandboxes.create(app, image);
  await second.terminate();
  fail("a create over the sandbox creation rate was accepted");
} catch (e) {
  if (e.code !== 8) fail(`over the rate: expected gRPC code 8 (RESOURCE_EXHAUSTED), got ${e.code}: ${e.message}`);
  console.log(`over the rate refused: RESOURCE_EXHAUSTED (${e.details})`);
}
await first.terminate();
modal.close();
console.log("ok");

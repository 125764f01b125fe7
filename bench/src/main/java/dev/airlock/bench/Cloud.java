package dev.airlock.bench;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.FileStat;
import dev.airlock.Payload;
import dev.airlock.emulator.EmulatorCredentials;
import dev.airlock.emulator.Emulators;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The cloud backends (target 6): each on the project's own emulator, started in this JVM, Airlock
 * against the vendor's official SDK (npm) doing the same against the same emulator. Both sides
 * have their sandbox up before timing, and each times only the transfer itself: Airlock around its
 * call here, the SDK inside its own long-lived node process (bench/sdk/*.cjs), so node's start-up
 * is outside the timing just as the environment's open is.
 */
final class Cloud {
    static final int MIB_64 = 64;
    private static final long BYTES = MIB_64 * (1L << 20);
    private static final String AIRLOCK_FILE = "/tmp/airlock-bench-airlock.bin";
    private static final String SDK_FILE = "/tmp/airlock-bench-sdk.bin";
    /** Where the SDK harnesses' node_modules are looked for: this checkout, unless the variable names another one. */
    private static final String SDK_ROOT = "AIRLOCK_BENCH_SDK_ROOT";

    /** One backend: its emulator, the SDK harness it borrows node_modules from, and its SDK's calls (for the table). */
    private record Spec(String backend, String harness, String npm, String script, String writeCall, String stdinCall,
                        String turnCalls) {
    }

    private static final Spec MODAL = new Spec("modal", "backend-modal/src/test/sdk", "modal", "modal.cjs",
            "`sandbox.filesystem.writeBytes(buffer, path)`", "`sandbox.exec(['sh','-c','cat > /dev/null'])`, `stdin.writeBytes` per 16 MiB slice (the emulator's limit per write), `stdin.close`, `wait`",
            "`sandboxes.create(app, image)`, `filesystem.readBytes`, `filesystem.writeBytes`, `exec(['sh','-c',CMD])` (stdout read, `wait`), `terminate`");
    private static final Spec DAYTONA = new Spec("daytona", "backend-daytona/src/test/sdk", "@daytona/sdk", "daytona.cjs",
            "`sandbox.fs.uploadFile(buffer, path)`", null,
            "`daytona.create`, `fs.downloadFile`, `fs.uploadFile`, `process.executeCommand(\"sh -c 'CMD'\")`, `delete`");
    private static final Spec VERCEL = new Spec("vercel", "backend-vercel/src/test/sdk", "@vercel/sandbox", "vercel.cjs",
            "`sandbox.writeFiles([{path, content: buffer}])`", null,
            "`Sandbox.create`, `readFileToBuffer`, `writeFiles`, `runCommand('sh', ['-c', CMD])` (stdout read), `stop`");

    private final Scenarios s;
    private final byte[] payload;
    /** Incompressible bytes, as archives and images are (the SDK scripts send random bytes of their own). */
    private final byte[] noise;

    Cloud(Scenarios s) {
        this.s = s;
        payload = new byte[(int) BYTES];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) i; // the same repeating 0..255 pattern the SDK scripts send
        }
        noise = new byte[(int) BYTES];
        new java.util.Random(64).nextBytes(noise);
    }

    // Each emulator makes its own credentials at start; both clients get them from it (the SDK by its environment).
    private static final ByUrl MODAL_AIRLOCK = (url, c) -> Map.of("airlock.backend", "modal", "airlock.modal.server-url", url,
            "airlock.modal.token-id", c.value("MODAL_TOKEN_ID"), "airlock.modal.token-secret", c.value("MODAL_TOKEN_SECRET"));
    private static final ByUrl MODAL_NODE = (url, c) -> Map.of("MODAL_SERVER_URL", url, "MODAL_TOKEN_ID", c.value("MODAL_TOKEN_ID"),
            "MODAL_TOKEN_SECRET", c.value("MODAL_TOKEN_SECRET"));
    private static final ByUrl DAYTONA_AIRLOCK = (url, c) -> Map.of("airlock.backend", "daytona", "airlock.daytona.api-url", url,
            "airlock.daytona.api-key", c.value("DAYTONA_API_KEY"));
    private static final ByUrl DAYTONA_NODE = (url, c) -> Map.of("DAYTONA_API_URL", url, "DAYTONA_API_KEY", c.value("DAYTONA_API_KEY"));
    private static final ByUrl VERCEL_AIRLOCK = (url, c) -> Map.of("airlock.backend", "vercel", "airlock.vercel.api-url", url,
            "airlock.vercel.token", c.value("VERCEL_TOKEN"), "airlock.vercel.project-id", "prj_airlock",
            "airlock.vercel.team-id", c.value("VERCEL_TEAM_ID"));
    private static final ByUrl VERCEL_NODE = (url, c) -> Map.of("VERCEL_TOKEN", c.value("VERCEL_TOKEN"), "VERCEL_TEAM_ID", c.value("VERCEL_TEAM_ID"));

    void modal() throws Exception {
        run(MODAL, Settings.empty(), MODAL_AIRLOCK, MODAL_NODE, false);
    }

    void daytona() throws Exception {
        run(DAYTONA, Settings.empty(), DAYTONA_AIRLOCK, DAYTONA_NODE, false);
    }

    void vercel() throws Exception {
        run(VERCEL, Settings.empty(), VERCEL_AIRLOCK, VERCEL_NODE, true);
    }

    /** The agent turn on Modal: the same image as the SDK script's ({@code alpine:3.21}) on both sides. */
    void modalTurn() throws Exception {
        turn(MODAL, (url, c) -> with(MODAL_AIRLOCK.apply(url, c), "airlock.modal.image", "alpine:3.21"), MODAL_NODE, false);
    }

    void daytonaTurn() throws Exception {
        turn(DAYTONA, DAYTONA_AIRLOCK, DAYTONA_NODE, false);
    }

    void vercelTurn() throws Exception {
        turn(VERCEL, VERCEL_AIRLOCK, VERCEL_NODE, true);
    }

    private static Map<String, String> with(Map<String, String> m, String key, String value) {
        Map<String, String> copy = new java.util.LinkedHashMap<>(m);
        copy.put(key, value);
        return copy;
    }

    /**
     * The agent turn ({@link Turn}) on one emulator: each turn opens a new sandbox and closes it,
     * Airlock in this JVM (wall time) against the SDK script's {@code turn} request (timed inside
     * node around the whole turn, each step apart). Both read the same three 4 KiB files of the
     * host's {@code /usr}, which every emulated sandbox sees read-only.
     */
    private void turn(Spec spec, ByUrl airlock, ByUrl nodeEnv, boolean urlArg) throws Exception {
        Path harness = harness(spec);
        String why = whyNot(spec, harness);
        List<String> reads = why == null ? hostFiles() : List.of();
        if (why == null && reads.size() < 3) {
            why = "no three files of exactly 4096 bytes under /usr/share or /usr/lib to read";
        }
        if (why != null) {
            s.rows.add(Row.notMeasured("35", spec.backend() + " agent turn", "<= 1.0", why));
            return;
        }
        String sdkName = "official SDK (npm `" + spec.npm() + "` " + version(harness, spec.npm()) + ")";
        Turn.Paths a = new Turn.Paths(reads, List.of("/tmp/airlock-turn-w1", "/tmp/airlock-turn-w2"), "/tmp");
        Turn.Paths r = new Turn.Paths(reads, List.of("/tmp/sdk-turn-w1", "/tmp/sdk-turn-w2"), "/tmp");
        Progress.say(spec.backend() + " agent turn: emulator in this JVM, Airlock against the " + sdkName);
        try (Emulators.Served served = Emulators.start(spec.backend(), "127.0.0.1:0", Settings.empty(), getClass().getClassLoader())) {
            String url = served.emulator().url().toString();
            List<String> args = urlArg ? List.of(harness.toString(), url) : List.of(harness.toString());
            EmulatorCredentials creds = served.emulator().credentials();
            Settings settings = Settings.of(airlock.apply(url, creds));
            byte[] content = new byte[Turn.FILE_BYTES];
            new java.util.Random(35).nextBytes(content);
            try (SdkProcess sdk = SdkProcess.start(Path.of("bench/sdk", spec.script()), args, nodeEnv.apply(url, creds), s.work)) {
                String request = "turn " + String.join(" ", r.reads()) + " " + String.join(" ", r.writes()) + " " + r.dir();
                Turn.Result[] res = Turn.alternate(spec.backend() + " agent turn", Turn.airlock(() -> Environments.open(settings), a, content),
                        clock -> clock.all(sdk.steps(request)), s.plan.warmup(), s.plan.turnPairs(spec.backend()));
                s.rows.addAll(Turn.rows(spec.backend(), res,
                        "a new sandbox each turn (emulator in-process), wall time in this JVM of the whole turn",
                        sdkName + ": " + spec.turnCalls() + "; timed inside node around the whole turn",
                        1.0, t -> t[Turn.OPEN], "the SDK's sandbox creation, timed inside node", "(no target)", Double.NaN,
                        "the SDK's sandbox end, timed inside node"));
            }
        }
    }

    /** Three host files of exactly 4 KiB under /usr (sorted, so every run reads the same ones). */
    static List<String> hostFiles() throws IOException {
        List<String> found = new java.util.ArrayList<>();
        for (String root : List.of("/usr/share", "/usr/lib")) {
            if (!Files.isDirectory(Path.of(root))) {
                continue;
            }
            try (var walk = Files.walk(Path.of(root))) {
                walk.filter(p -> p.toString().matches("[A-Za-z0-9/._-]+")).filter(Files::isRegularFile)
                        .filter(p -> {
                            try {
                                return Files.size(p) == Turn.FILE_BYTES && Files.isReadable(p);
                            } catch (IOException e) {
                                return false;
                            }
                        }).map(Path::toString).sorted().limit(3).forEach(found::add);
            } catch (java.io.UncheckedIOException e) {
                // an unreadable corner of /usr: the files found so far do
            }
            if (found.size() >= 3) {
                return found.subList(0, 3);
            }
        }
        return found;
    }

    private interface ByUrl {
        Map<String, String> apply(String url, EmulatorCredentials credentials);
    }

    private void run(Spec spec, Settings emulatorSettings, ByUrl airlock, ByUrl nodeEnv, boolean urlArg) throws Exception {
        Path harness = harness(spec);
        String why = whyNot(spec, harness);
        if (why != null) {
            s.rows.add(Row.notMeasured("6", spec.backend() + " 64 MiB write vs the official SDK", "<= 1.0", why));
            return;
        }
        String sdkName = "official SDK (npm `" + spec.npm() + "` " + version(harness, spec.npm()) + ")";
        Progress.say(spec.backend() + ": emulator in this JVM, Airlock against the " + sdkName);
        try (Emulators.Served served = Emulators.start(spec.backend(), "127.0.0.1:0", emulatorSettings, getClass().getClassLoader())) {
            String url = served.emulator().url().toString();
            List<String> args = urlArg ? List.of(harness.toString(), url) : List.of(harness.toString());
            EmulatorCredentials creds = served.emulator().credentials();
            try (Environment env = Environments.open(Settings.of(airlock.apply(url, creds)));
                 SdkProcess sdk = SdkProcess.start(Path.of("bench/sdk", spec.script()), args, nodeEnv.apply(url, creds), s.work)) {
                write(spec, env, sdk, payload, "write", "64 MiB (emulator in-process)",
                        "`files().write(path, Payload.of(bytes))`, timed around the call (environment open; RSS includes the emulator)",
                        sdkName + " " + spec.writeCall() + ", timed inside node around the call (sandbox created)");
                write(spec, env, sdk, noise, "write-noise", "64 MiB of random bytes (incompressible; emulator in-process)",
                        "as above, random bytes", sdkName + " " + spec.writeCall() + ", random bytes, timed as above");
                if (spec.stdinCall() != null) {
                    Sample sa = new Sample();
                    Sample sr = new Sample();
                    Progress.say(spec.backend() + " stdin 64 MiB");
                    Meter.alternate(() -> airlockStdin(env), sa, () -> sdk.request("stdin " + BYTES), sr, s.plan.warmup(), s.plan.reps());
                    s.rows.add(new Row("6", spec.backend() + " 64 MiB stdin (`cat > /dev/null`, emulator in-process)",
                            "`exec` with `Payload.of(bytes)` as stdin, to exit, timed around the call",
                            sdkName + " " + spec.stdinCall() + ", timed inside node", sa, sr, "<= 1.0", 1.0, ""));
                } else {
                    s.rows.add(Row.notMeasured("6", spec.backend() + " 64 MiB stdin vs the official SDK", "<= 1.0",
                            "the " + spec.npm() + " SDK has no command stdin that reaches end-of-input; nothing to compare"));
                }
                // Target 8 on the emulator: 64 execs at once, Airlock alone (the SDK harness is one node process).
                Sample c = Concurrency.alone(spec.backend() + " exec", () -> Scenarios.execTrue(env), 64, s.plan.rounds(64));
                for (int p : new int[] {50, 99}) {
                    s.rows.add(new Row("8", spec.backend() + " 64 concurrent `exec true` (emulator in-process), p" + p,
                            "Airlock `exec`, 64 threads at once, each timed", "-", Scenarios.fixed(c, c.percentile(p)),
                            new Sample(), "no failures", Double.NaN, ""));
                }
            }
        }
    }

    /**
     * One write row (target 6): {@code bytes} through Airlock against the SDK script's
     * {@code request}, which sends bytes of the same size and kind, alternately.
     */
    private void write(Spec spec, Environment env, SdkProcess sdk, byte[] bytes, String request, String what,
                       String airlockHow, String sdkHow) throws Exception {
        Sample a = new Sample();
        Sample r = new Sample();
        Progress.say(spec.backend() + " files().write " + what);
        Meter.alternate(() -> airlockWrite(env, bytes), a, () -> sdk.request(request + " " + SDK_FILE + " " + BYTES), r,
                s.plan.warmup(), s.plan.reps());
        s.rows.add(new Row("6", spec.backend() + " `files().write` " + what, airlockHow, sdkHow, a, r, "<= 1.0", 1.0, ""));
    }

    /** The write alone is timed; the size check after it (a stat) is not, as on the SDK side. */
    private void airlockWrite(Environment env, byte[] bytes) throws IOException {
        long t0 = System.nanoTime();
        env.files().write(AIRLOCK_FILE, Payload.of(bytes));
        long t1 = System.nanoTime();
        long seen = env.files().stat(AIRLOCK_FILE).map(FileStat::size).orElse(-1L);
        Streams.expect(BYTES, seen, "written");
        Meter.reported((t1 - t0) / 1e9);
    }

    private void airlockStdin(Environment env) throws IOException {
        long t0 = System.nanoTime();
        try (ExecResult r = env.exec(ExecRequest.builder("cat > /dev/null").stdin(Payload.of(payload)).build())) {
            long t1 = System.nanoTime();
            Transfers.check(r);
            Meter.reported((t1 - t0) / 1e9);
        }
    }

    private static Path harness(Spec spec) {
        String root = System.getenv(SDK_ROOT);
        return Path.of(root == null || root.isBlank() ? "." : root).resolve(spec.harness()).toAbsolutePath().normalize();
    }

    private static String whyNot(Spec spec, Path harness) {
        if (SdkProcess.node() == null) {
            return "node is not on PATH";
        }
        if (!Files.isRegularFile(Path.of("bench/sdk", spec.script()))) {
            return "run the bench from the repository root (bench/sdk/" + spec.script() + " not found)";
        }
        if (!Files.isDirectory(harness.resolve("node_modules").resolve(spec.npm()))) {
            return "the SDK is not installed: run `npm ci` in " + spec.harness() + " (or set " + SDK_ROOT + " to a checkout where it ran)";
        }
        return null;
    }

    /** The installed SDK's version, from its package.json (the table names what was measured). */
    private static String version(Path harness, String npm) {
        try {
            String json = Files.readString(harness.resolve("node_modules").resolve(npm).resolve("package.json"));
            Matcher m = Pattern.compile("\"version\"\\s*:\\s*\"([^\"]+)\"").matcher(json);
            return m.find() ? m.group(1) : "?";
        } catch (IOException e) {
            return "?";
        }
    }
}

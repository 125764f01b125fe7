package dev.airlock.bench;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The memory scenarios, run in a child JVM started with {@code -Xmx64m}: {@code stdin} sends 1 GiB
 * through {@code wc -c}; {@code fanout} runs 16 commands at once that print 8 MiB each, captured
 * the default way. Writes "ok HEAP_PEAK_BYTES" or "fail REASON" to the result file.
 * Arguments: MODE RESULT_FILE KEY=VALUE...
 */
public final class MemoryProbe {
    private static final long GIB = 1L << 30;
    private static final long EIGHT_MIB = 8L << 20;

    private MemoryProbe() {
    }

    public static void main(String[] args) throws Exception {
        Path result = Path.of(args[1]);
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        String outcome;
        try (Environment env = Environments.open(Settings.of(settings))) {
            Memory.reset();
            outcome = args[0].equals("stdin") ? stdin(env) : fanout(env);
        } catch (Exception | Error e) {
            outcome = "fail " + e;
        }
        if (outcome.isEmpty()) {
            outcome = "ok " + Memory.heapPeak();
        }
        Files.writeString(result, outcome.lines().findFirst().orElse(""));
        System.exit(outcome.startsWith("ok") ? 0 : 1);
    }

    private static String stdin(Environment env) {
        try (ExecResult r = env.exec(ExecRequest.builder("wc -c").stdin(Payload.ofStream(Streams.generated(GIB), GIB)).build())) {
            String out = r.stdout().text().strip();
            return r.exitCode() == 0 && out.equals(Long.toString(GIB)) ? "" : "fail exit " + r.exitCode() + ", wc said " + out;
        }
    }

    private static String fanout(Environment env) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<String>> fs = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                fs.add(pool.submit(() -> {
                    try (ExecResult r = env.exec(ExecRequest.of("head -c " + EIGHT_MIB + " /dev/zero"))) {
                        long size = r.stdout().size(); // kept, spilled to disk past the heap budget, not dropped
                        return r.exitCode() == 0 && size == EIGHT_MIB ? "" : "fail exit " + r.exitCode() + ", " + size + " bytes";
                    }
                }));
            }
            for (Future<String> f : fs) {
                String s = f.get();
                if (!s.isEmpty()) {
                    return s;
                }
            }
            return "";
        } finally {
            pool.shutdownNow();
        }
    }
}

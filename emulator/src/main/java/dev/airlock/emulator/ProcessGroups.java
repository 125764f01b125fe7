package dev.airlock.emulator;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Signals by process group, and finds a sandbox's stragglers by the marker variable every one
 * of its processes inherits (a child that called {@code setsid} leaves the group, not the
 * environment). A group id is never reused while the group has members, so signalling one we
 * created cannot hit a stranger.
 */
final class ProcessGroups {
    private ProcessGroups() {
    }

    static void signal(long pgid, int signal) {
        run("kill", "-" + signal, "--", "-" + pgid);
    }

    /** Pids of live processes whose environment holds {@code NAME=value}. */
    static List<Long> withMarker(String name, String value) {
        byte[] needle = (name + "=" + value).getBytes(StandardCharsets.UTF_8);
        List<Long> out = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String n = p.getFileName().toString();
                if (!n.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                try {
                    byte[] env = Files.readAllBytes(p.resolve("environ"));
                    if (containsEntry(env, needle)) {
                        out.add(Long.parseLong(n));
                    }
                } catch (IOException gone) {
                    // exited, or not ours to read
                }
            }
        } catch (IOException e) {
            // no /proc: nothing more to find than the groups we killed
        }
        return out;
    }

    private static boolean containsEntry(byte[] env, byte[] entry) {
        int start = 0;
        for (int i = 0; i <= env.length; i++) {
            if (i == env.length || env[i] == 0) {
                if (i - start == entry.length) {
                    boolean eq = true;
                    for (int j = 0; j < entry.length && eq; j++) {
                        eq = env[start + j] == entry[j];
                    }
                    if (eq) {
                        return true;
                    }
                }
                start = i + 1;
            }
        }
        return false;
    }

    private static void run(String... argv) {
        try {
            Process p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            // kill(1) missing: the marker scan still kills what it finds
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

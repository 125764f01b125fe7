package dev.airlock.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Reads /proc: which processes are alive and what their argv holds. */
final class Procs {
    private Procs() {
    }

    /** Pids whose argv, joined by spaces, contains {@code needle}. */
    static List<Long> withArgv(byte[] needle) {
        List<Long> out = new ArrayList<>();
        for (Path p : pids()) {
            byte[] cmd = read(p.resolve("cmdline"));
            for (int i = 0; i < cmd.length; i++) {
                cmd[i] = cmd[i] == 0 ? (byte) ' ' : cmd[i];
            }
            if (indexOf(cmd, needle) >= 0) {
                out.add(Long.parseLong(p.getFileName().toString()));
            }
        }
        return out;
    }

    static List<Long> withArgv(String needle) {
        return withArgv(needle.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether the process exists and has not exited (a zombie counts as gone). */
    static boolean alive(long pid) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        byte[] s = read(stat);
        if (s.length == 0) {
            return false;
        }
        String text = new String(s, StandardCharsets.UTF_8);
        // A zombie has exited; only its parent's wait remains.
        return text.charAt(text.lastIndexOf(')') + 2) != 'Z';
    }

    /** Waits up to {@code millis} for the condition; for process teardown that is asynchronous by nature. */
    static boolean eventually(long millis, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() < end) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(20);
        }
        return condition.getAsBoolean();
    }

    private static List<Path> pids() {
        try (Stream<Path> s = Files.list(Path.of("/proc"))) {
            return s.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] read(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            return new byte[0];
        }
    }

    static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}

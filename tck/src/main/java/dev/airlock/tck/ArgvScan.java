package dev.airlock.tck;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads every {@code /proc/PID/cmdline} on this machine in a loop, on its own thread, looking for
 * secret values, and traces every {@code execve} of this JVM's descendants ({@link ExecTrace}), so
 * a process that lives too briefly for the loop is still seen. A hit is recorded by the secret's
 * label and the process's name, never the value.
 */
final class ArgvScan implements AutoCloseable {
    private static final Path PROC = Path.of("/proc");

    private final Map<String, byte[]> needles = new LinkedHashMap<>();
    private final byte[] sighting;
    private final Set<String> hits = new TreeSet<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long passes;
    private volatile long processesRead;
    private volatile boolean sighted;
    private final ExecTrace trace;
    private final String untraced;

    /**
     * @param secrets  label to value; the values must never be in any argv
     * @param sighting a harmless marker that the command text carries, to tell whether the
     *                 backend's processes run on this machine at all
     */
    ArgvScan(Map<String, String> secrets, String sighting) {
        secrets.forEach((k, v) -> needles.putAll(encodings(k, v.getBytes(StandardCharsets.UTF_8))));
        this.sighting = sighting.getBytes(StandardCharsets.UTF_8);
        ExecTrace.Result t = ExecTrace.start();
        this.trace = t.trace();
        this.untraced = t.whyNot();
        if (trace == null && Services.required()) {
            throw new org.opentest4j.AssertionFailedError("[airlock-tck] execve cannot be traced: " + untraced + " ("
                    + Services.REQUIRE_VARIABLE + "=1)");
        }
        this.thread = new Thread(this::loop, "airlock-tck-argv-scan");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * What to look for so a secret is found however a helper process carries it: its bytes, its
     * hex (either case), and its base64 (standard and URL-safe) at each of the three alignments
     * it can have inside a longer encoded chunk: the characters that depend only on the secret's
     * own bytes, which any base64 of a payload holding it contains.
     */
    static Map<String, byte[]> encodings(String label, byte[] secret) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        out.put(label, secret);
        String hex = java.util.HexFormat.of().formatHex(secret);
        out.put(label + ", hex-encoded", hex.getBytes(StandardCharsets.US_ASCII));
        out.put(label + ", hex-encoded (upper case)", hex.toUpperCase(java.util.Locale.ROOT).getBytes(StandardCharsets.US_ASCII));
        for (int lead = 0; lead < 3; lead++) {
            byte[] shifted = new byte[lead + secret.length];
            System.arraycopy(secret, 0, shifted, lead, secret.length);
            // Characters before the secret's first whole 3-byte group mix in the bytes before it;
            // those after its last whole group, the bytes after it: only the middle is its own.
            int first = (lead == 0 ? 0 : 3) * 4 / 3;
            int wholeGroups = (shifted.length - (lead == 0 ? 0 : 3)) / 3;
            String std = java.util.Base64.getEncoder().withoutPadding().encodeToString(shifted);
            String own = std.substring(first, first + wholeGroups * 4);
            if (own.length() >= 16) {
                out.put(label + ", base64-encoded (alignment " + lead + ")", own.getBytes(StandardCharsets.US_ASCII));
                out.put(label + ", base64url-encoded (alignment " + lead + ")",
                        own.replace('+', '-').replace('/', '_').getBytes(StandardCharsets.US_ASCII));
            }
        }
        return out;
    }

    static boolean supported() {
        return Files.isReadable(PROC.resolve("self/cmdline"));
    }

    private void loop() {
        while (running) {
            scanOnce();
            passes++;
            try {
                Thread.sleep(2); // a command under test lives far longer; spare the machine's cores
            } catch (InterruptedException e) {
                return;
            }
        }
        scanOnce();
    }

    private void scanOnce() {
        List<Path> pids = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(PROC, p -> p.getFileName().toString().chars().allMatch(Character::isDigit))) {
            ds.forEach(pids::add);
        } catch (IOException e) {
            return;
        }
        for (Path pid : pids) {
            byte[] argv;
            try {
                argv = Files.readAllBytes(pid.resolve("cmdline"));
            } catch (IOException e) {
                continue; // the process ended meanwhile
            }
            processesRead++;
            if (indexOf(argv, sighting) >= 0) {
                sighted = true;
            }
            for (Map.Entry<String, byte[]> n : needles.entrySet()) {
                if (indexOf(argv, n.getValue()) >= 0) {
                    synchronized (hits) {
                        hits.add(n.getKey() + " in the argv of " + comm(pid));
                    }
                }
            }
        }
    }

    private static String comm(Path pid) {
        try {
            return Files.readString(pid.resolve("comm")).strip() + " (pid " + pid.getFileName() + ")";
        } catch (IOException e) {
            return "pid " + pid.getFileName();
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

    /** Labelled hits so far; the traced ones once closed. */
    Set<String> hits() {
        Set<String> out;
        synchronized (hits) {
            out = new TreeSet<>(hits);
        }
        if (trace != null) {
            out.addAll(trace.hits(needles));
        }
        return out;
    }

    /** Whether some argv on this machine carried the command's harmless marker. */
    boolean sighted() {
        return sighted;
    }

    String summary() {
        return passes + " passes over /proc, " + processesRead + " argv read, "
                + (trace != null ? trace.execs() + " execve traced" : "execve not traced: " + untraced);
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join();
        if (trace != null) {
            trace.close();
        }
    }
}

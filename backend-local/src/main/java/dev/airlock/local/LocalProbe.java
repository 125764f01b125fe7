package dev.airlock.local;

import dev.airlock.shell.KernelRandom;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The target probe answered in Java for commands on this host: the records
 * {@link dev.airlock.containment.TargetProbe#script} prints, read from this process's /proc, the
 * files the script's commands read and the environment the script would get, without its ~10
 * processes. Wherever the script's answer could differ it gives none, and the script runs: a base
 * that is neither a path nor {@code ${TMPDIR:-/tmp}} or does not exist yet, a set-uid JVM, users
 * not found first in /etc/passwd, a PATH with relative entries, a value that is not ASCII.
 */
final class LocalProbe {
    private static final String DEFAULT_BASE = "${TMPDIR:-/tmp}";
    /** mktemp's alphabet and length for {@code airlock-XXXXXXXXXX}. */
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final SecureRandom RANDOM = KernelRandom.create();
    private static final int CGROUP_BYTES = 4096;
    /** The variables whose values the probe reports (Java has them decoded, the script passes bytes). */
    private static final List<String> REPORTED = List.of("HOME", "TMPDIR", "AIRLOCK_HOME", "PATH", "KUBERNETES_SERVICE_HOST");

    private final Map<String, String> env;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    private LocalProbe(Map<String, String> env) {
        this.env = env;
    }

    /** The probe's records with {@code env} as the script's environment, its private dir made; empty to run the script. */
    static Optional<byte[]> answer(String privateDirBase, Map<String, String> env) {
        try {
            return new LocalProbe(env).facts(privateDirBase);
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // the script answers, and reports what fails for it too
        }
    }

    private Optional<byte[]> facts(String privateDirBase) throws IOException {
        Optional<String> base = base(privateDirBase);
        Optional<String> uid = effectiveUid();
        Optional<String[]> passwd = uid.flatMap(LocalProbe::passwdEntry);
        Optional<String> bash = bashOnPath();
        Optional<byte[]> os = kernel("ostype");
        Optional<byte[]> hostname = kernel("hostname");
        if (base.isEmpty() || passwd.isEmpty() || bash.isEmpty() || os.isEmpty() || hostname.isEmpty()
                || !REPORTED.stream().allMatch(v -> ascii(variable(v)))) {
            return Optional.empty();
        }
        put("private", privateDir(base.get()));
        put("os", os.get());
        put("hostname", hostname.get());
        put("uid", uid.get());
        put("user", passwd.get()[0]);
        put("passwd_home", passwd.get()[5]);
        put("home", variable("HOME"));
        put("tmpdir", variable("TMPDIR"));
        put("airlock_home", variable("AIRLOCK_HOME"));
        put("bash", bash.get());
        put("path", variable("PATH"));
        if (Files.exists(Path.of("/.dockerenv"))) {
            put("dockerenv", "1");
        }
        if (Files.exists(Path.of("/run/.containerenv"))) {
            put("containerenv", "1");
        }
        if (!variable("KUBERNETES_SERVICE_HOST").isEmpty()) {
            put("k8s", "1");
        }
        put("cgroup1", head(Path.of("/proc/1/cgroup")));
        put("rootmount", rootMount());
        return Optional.of(out.toByteArray());
    }

    private String variable(String name) {
        return env.getOrDefault(name, "");
    }

    /** {@code ${TMPDIR:-/tmp}} or an absolute path, when it is a directory already (mkdir -p's modes are the script's business). */
    private Optional<String> base(String expression) {
        String b = expression.equals(DEFAULT_BASE) ? (variable("TMPDIR").isEmpty() ? "/tmp" : variable("TMPDIR")) : expression;
        if (b.contains("$") || !b.startsWith("/") || !ascii(b) || !Files.isDirectory(Path.of(b))) {
            return Optional.empty();
        }
        return Optional.of(b);
    }

    /** As {@code mktemp -d "$b/airlock-XXXXXXXXXX"} and {@code mkdir "$d/run" "$d/tmp"} under umask 077: all 0700. */
    private static String privateDir(String base) throws IOException {
        while (true) {
            char[] x = new char[10];
            for (int i = 0; i < x.length; i++) {
                x[i] = ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length()));
            }
            // Concatenated, not resolved: mktemp keeps the base as written ("/tmp/" gives "/tmp//airlock-...").
            String dir = base + "/airlock-" + new String(x);
            try {
                HostDirs.mkdir700(Path.of(dir));
            } catch (FileAlreadyExistsException e) {
                continue;
            }
            HostDirs.mkdir700(Path.of(dir, "run"));
            HostDirs.mkdir700(Path.of(dir, "tmp"));
            return dir;
        }
    }

    /** {@code id -u}, when it is also the real uid (a set-uid JVM is the script's business). */
    private static Optional<String> effectiveUid() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
            if (line.startsWith("Uid:")) {
                String[] ids = line.substring(4).trim().split("\\s+");
                return ids.length >= 2 && ids[0].equals(ids[1]) ? Optional.of(ids[1]) : Optional.empty();
            }
        }
        return Optional.empty();
    }

    /**
     * The first /etc/passwd entry with this uid, as {@code id -un} and {@code getent passwd UID}
     * find it, when /etc/nsswitch.conf looks in /etc/passwd first and the file has no +/- lines.
     */
    private static Optional<String[]> passwdEntry(String uid) {
        try {
            Optional<String> sources = Files.readAllLines(Path.of("/etc/nsswitch.conf"), StandardCharsets.ISO_8859_1).stream()
                    .map(String::trim).filter(l -> l.startsWith("passwd:")).findFirst();
            if (sources.isEmpty() || !sources.get().substring(7).trim().startsWith("files")) {
                return Optional.empty();
            }
            List<String> lines = Files.readAllLines(Path.of("/etc/passwd"), StandardCharsets.ISO_8859_1);
            // Only a plain file: no NIS +/- lines, and none glibc would read otherwise than a split
            // does (comments, leading blanks, a uid written another way such as 007).
            if (lines.stream().anyMatch(l -> !l.isEmpty() && !plainPasswdLine(l))) {
                return Optional.empty();
            }
            return lines.stream().map(l -> l.split(":", -1)).filter(f -> f.length > 2 && f[2].equals(uid))
                    .findFirst().filter(f -> f.length == 7 && !f[0].isEmpty() && ascii(f[0]) && ascii(f[5]));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** A line glibc's files lookup reads as this split does. */
    static boolean plainPasswdLine(String l) {
        String[] f = l.split(":", -1);
        return f.length == 7 && !f[0].isEmpty() && "+-#".indexOf(l.charAt(0)) < 0 && !Character.isWhitespace(l.charAt(0))
                && f[2].matches("0|[1-9][0-9]*");
    }

    /** {@code command -v bash}: the first regular file {@code DIR/bash} along an all-absolute PATH, if executable. */
    private Optional<String> bashOnPath() {
        String path = env.get("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(":", -1)) {
            if (!dir.startsWith("/") || dir.endsWith("/") && dir.length() > 1) {
                return Optional.empty();
            }
            Path candidate = Path.of(dir, "bash");
            if (Files.isRegularFile(candidate)) {
                return Files.isExecutable(candidate) ? Optional.of((dir.equals("/") ? "" : dir) + "/bash") : Optional.empty();
            }
        }
        return Optional.of("");
    }

    /** What {@code uname} prints from the kernel: /proc/sys/kernel/ostype is uname -s, hostname uname -n. */
    private static Optional<byte[]> kernel(String name) {
        try {
            return Optional.of(stripNewlines(Files.readAllBytes(Path.of("/proc/sys/kernel", name))));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** {@code "$(head -c 4096 FILE 2>/dev/null)"}. */
    private static byte[] head(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return stripNewlines(in.readNBytes(CGROUP_BYTES));
        } catch (IOException e) {
            return new byte[0];
        }
    }

    /** The first line of this process's mountinfo whose fifth field is {@code /} (as the script's loop finds it). */
    private static byte[] rootMount() {
        byte[] all;
        try {
            all = Files.readAllBytes(Path.of("/proc/self/mountinfo"));
        } catch (IOException e) {
            return new byte[0];
        }
        int start = 0;
        while (start < all.length) {
            int end = start;
            while (end < all.length && all[end] != '\n') {
                end++;
            }
            byte[] line = Arrays.copyOfRange(all, start, end);
            String[] fields = new String(line, StandardCharsets.ISO_8859_1).trim().split("[ \t]+");
            if (fields.length >= 5 && fields[4].equals("/")) {
                return line;
            }
            start = end + 1;
        }
        return new byte[0];
    }

    private static byte[] stripNewlines(byte[] b) {
        int n = b.length;
        while (n > 0 && b[n - 1] == '\n') {
            n--;
        }
        return Arrays.copyOf(b, n);
    }

    private static boolean ascii(String s) {
        return s.chars().allMatch(c -> c < 128);
    }

    private void put(String key, String value) {
        put(key, value.getBytes(StandardCharsets.US_ASCII));
    }

    private void put(String key, byte[] value) {
        out.writeBytes((key + "=").getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(value);
        out.write(0);
    }
}

package dev.airlock.local.containment;

import dev.airlock.tck.Services;

import dev.airlock.containment.Shims;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The same crontab invocations against Debian's real crontab (for a throwaway user) and against
 * the eval profile's shim (for the same user): same stdout, same stderr once the temp path and the
 * user name are normalised, same exit codes.
 */
class CrontabShimDifferentialTest {
    /** Where each side's {@code crontab -e} puts its temp copy; the real one ignores TMPDIR (it is setgid). */
    private static final Pattern EDIT_COPY = Pattern.compile("(/[^\\s\"]*)?/crontab\\.[A-Za-z0-9]{6}");

    private static final List<String> CASES = List.of(
            "crontab -r",
            "crontab -l",
            "printf '0 3 * * * /bin/true\\n' | crontab -",
            "crontab -l",
            "printf '5 4 * * * echo a\\n' | crontab",
            "crontab -l",
            "crontab $D/good.txt",
            "crontab -l",
            "crontab -n $D/bad.txt",
            "crontab $D/bad.txt",
            "crontab - < $D/bad2.txt",
            "printf '* * * * * x' | crontab -",
            "printf '@daily * x\\n' | crontab -",
            "crontab -x",
            "crontab --help",
            "crontab -l -r",
            "crontab -u root -l",
            "crontab -u nosuchuser -l",
            "crontab -u $ME -l",
            "crontab -u",
            "crontab -l extra",
            "crontab /nonexistent",
            "crontab /tmp",
            "crontab -i",
            "crontab -h",
            "crontab -n $D/good.txt",
            "EDITOR=$D/append.sh crontab -e",
            "crontab -l",
            "EDITOR=$D/noop.sh crontab -e",
            "EDITOR=$D/fail.sh crontab -e",
            "printf 'x\\nn\\n' | EDITOR=$D/badappend.sh crontab -e",
            "printf 'x\\ny\\n' | crontab -ir",
            "crontab -r",
            "VISUAL=$D/append.sh EDITOR=$D/fail.sh crontab -e",
            "crontab -l",
            "printf 'n\\n' | crontab -ir",
            "crontab -l");

    private static String user;
    private static Path dir;

    @BeforeAll
    static void throwawayUser() throws IOException {
        Services.require(Operator.executable("/usr/bin/crontab"), "Debian's cron is not installed (apt-get install cron)");
        Services.require(Operator.isRoot(), "creating a throwaway user for the real crontab needs root");
        for (String tool : List.of("/usr/sbin/useradd", "/usr/sbin/userdel", "/usr/sbin/runuser")) {
            Services.require(Operator.executable(tool), tool + " is missing (Debian's passwd and util-linux provide them)");
        }
        user = "alct" + Long.toHexString(System.nanoTime() & 0xffffffL);
        Operator.Result add = Operator.run(List.of("/usr/sbin/useradd", "-M", "-s", "/bin/sh", user), null);
        assertEquals(0, add.exit(), add.stderr());
        dir = Files.createTempDirectory("airlock-crontab-diff-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path files = Files.createDirectories(dir.resolve("files"));
        write(files.resolve("good.txt"), "# my jobs\nMAILTO=\"\"\nSHELL=/bin/sh\n@daily /usr/bin/backup\n*/5 1-3 * jan,Feb mon-fri echo \"x%y\"\n", "rw-r--r--");
        write(files.resolve("bad.txt"), "# c\n* * * * * a\n\nbad line\n", "rw-r--r--");
        write(files.resolve("bad2.txt"), "61 * * * * a\n", "rw-r--r--");
        // cron notices an edit by the file's mtime in whole seconds, so the editors wait one out
        write(files.resolve("append.sh"), "#!/bin/sh\nsleep 1\necho \"7 7 * * * /bin/echo edited\" >> \"$1\"\n", "rwxr-xr-x");
        write(files.resolve("noop.sh"), "#!/bin/sh\nexit 0\n", "rwxr-xr-x");
        write(files.resolve("fail.sh"), "#!/bin/sh\nexit 3\n", "rwxr-xr-x");
        write(files.resolve("badappend.sh"), "#!/bin/sh\nsleep 1\necho bad >> \"$1\"\n", "rwxr-xr-x");
        Files.setPosixFilePermissions(files, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path run = Files.createDirectories(dir.resolve("run/bin"));
        write(run.resolve("crontab"), new String(Shims.script("crontab", dir.resolve("run").toString()), StandardCharsets.UTF_8), "rwxr-xr-x");
        for (String d : List.of("run", "run/bin", "tmp-real", "tmp-shim")) {
            Files.createDirectories(dir.resolve(d));
            Operator.run(List.of("chown", user, dir.resolve(d).toString()), null);
        }
    }

    @AfterAll
    static void removeUser() {
        if (user == null) {
            return;
        }
        Operator.run(List.of("/usr/bin/crontab", "-u", user, "-r"), null);
        Operator.run(List.of("sh", "-c", "find /tmp -maxdepth 1 -user " + user + " -name 'crontab.*' -exec rm -rf {} +"), null);
        Operator.run(List.of("/usr/sbin/userdel", user), null);
        Operator.deleteTree(dir);
    }

    private static void write(Path p, String text, String perms) throws IOException {
        Files.writeString(p, text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(perms));
    }

    private static Operator.Result side(String command, boolean shim) {
        String path = (shim ? dir.resolve("run/bin") + ":" : "") + "/usr/bin:/bin";
        Operator.Result r = Operator.run(List.of("/usr/sbin/runuser", "-u", user, "--", "env", "-i", "PATH=" + path,
                "TMPDIR=" + dir.resolve(shim ? "tmp-shim" : "tmp-real"), "D=" + dir.resolve("files"), "ME=" + user, "LC_ALL=C",
                "sh", "-c", command), null);
        return new Operator.Result(r.exit(), normalise(r.stdout()), normalise(r.stderr()));
    }

    private static String normalise(String s) {
        return EDIT_COPY.matcher(s).replaceAll("<edit copy>").replace(user, "<user>");
    }

    @Test
    void theShimAnswersLikeTheRealCrontab() {
        List<String> differences = new ArrayList<>();
        for (int i = 0; i < CASES.size(); i++) {
            String c = CASES.get(i);
            Operator.Result real = side(c, false);
            Operator.Result shim = side(c, true);
            if (!real.equals(shim)) {
                differences.add("#" + (i + 1) + " " + c + "\n  real: " + real + "\n  shim: " + shim);
            }
        }
        assertEquals(List.of(), differences, String.join("\n", differences));
        assertTrue(CASES.size() >= 20);
    }
}

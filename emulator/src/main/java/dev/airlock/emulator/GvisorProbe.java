package dev.airlock.emulator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Whether {@code runsc} can run an emulated sandbox on this machine, found the only sure way: a
 * throwaway sandbox started exactly as the emulators start theirs, one command in it, then
 * removed. Once per binary per JVM (about two seconds: runsc's delete is slow).
 *
 * <p>The command also runs coreutils' {@code stat}: the runsc Debian 12 ships (0.0~20221219)
 * answers EINVAL to the {@code statx} flag {@code AT_NO_AUTOMOUNT} that {@code ls} and
 * {@code stat} pass, so they fail inside (and with them the shell file writes that run
 * {@code stat}, as the Vercel backend's do); that is a caveat the isolation's description carries,
 * not a reason to refuse it: the sandboxes hold, and the rest of the work runs.
 */
final class GvisorProbe {
    /** What the probe found: why runsc cannot be used, or its version and any caveat. */
    record Result(Optional<String> unusable, String version, Optional<String> caveat) {
        static Result unusable(String why) {
            return new Result(Optional.of(why), "", Optional.empty());
        }
    }

    private static final Map<Path, Result> RESULTS = new ConcurrentHashMap<>();
    private static final int STAT_FAILS = 3;

    private GvisorProbe() {
    }

    static Result of(Path runsc) {
        return RESULTS.computeIfAbsent(runsc, GvisorProbe::probe);
    }

    private static Result probe(Path runsc) {
        String version = version(runsc);
        Path dir = null;
        try {
            dir = Files.createTempDirectory("airlock-gvisor-probe-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            try (EmulatedSandbox sb = EmulatedSandbox.create("gvisor-probe", "probe", dir.resolve("root"), "/root",
                    SandboxIsolation.gvisorUnprobed(runsc), new CallJournal())) {
                SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("probe",
                        "stat / >/dev/null 2>&1 || exit " + STAT_FAILS + "; echo ok", "/", Map.of(), "probe"));
                p.stdin().close();
                String out = new String(p.stdout().readNBytes(64), StandardCharsets.UTF_8).strip();
                String err = new String(p.stderr().readNBytes(4096), StandardCharsets.UTF_8).strip();
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    return Result.unusable("a command under runsc did not finish within 30 s");
                }
                if (p.exitValue() == STAT_FAILS) {
                    return new Result(Optional.empty(), version,
                            Optional.of("ls and stat fail inside, and so do file writes that run stat (Vercel's):"
                                    + " this runsc answers EINVAL to statx's AT_NO_AUTOMOUNT flag"));
                }
                if (p.exitValue() != 0 || !out.equals("ok")) {
                    return Result.unusable("runsc cannot run a sandbox here (exit " + p.exitValue() + ": "
                            + err.lines().reduce((a, b) -> b).orElse("no message") + ")");
                }
                return new Result(Optional.empty(), version, Optional.empty());
            }
        } catch (IOException | RuntimeException e) {
            return Result.unusable("runsc cannot run a sandbox here (" + e.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Result.unusable("interrupted while trying runsc");
        } finally {
            if (dir != null) {
                try {
                    EmulatedSandbox.deleteTree(dir);
                } catch (IOException ignored) {
                    // a temp dir left behind; nothing runs in it
                }
            }
        }
    }

    /** {@code runsc --version}'s version word, or "" when it says none. */
    private static String version(Path runsc) {
        try {
            Process p = new ProcessBuilder(runsc.toString(), "--version").redirectErrorStream(true).start();
            String first = new String(p.getInputStream().readNBytes(512), StandardCharsets.UTF_8).lines().findFirst().orElse("");
            p.waitFor(10, TimeUnit.SECONDS);
            return first.startsWith("runsc version ") ? first.substring("runsc version ".length()).strip() : "";
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}

package dev.airlock.emulator;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hostile command, run as the emulator's user (root in CI), tries the doors a sandbox must
 * keep shut, under each isolation an emulator can have: bubblewrap, util-linux's unshare (what a
 * machine without bubblewrap gets) and gVisor ({@code isolation=gvisor}). All must hold the same,
 * but for the seccomp filter, which only bubblewrap loads (gVisor's commands never reach the
 * host's kernel at all).
 */
class SandboxEscapeTest {
    @TempDir
    Path dir;

    enum Isolation {
        BWRAP, UNSHARE, GVISOR;

        SandboxIsolation get() {
            return switch (this) {
                case BWRAP -> Services.bwrap();
                case UNSHARE -> Services.unshare();
                case GVISOR -> Services.gvisor();
            };
        }
    }

    private EmulatedSandbox sandbox(Isolation iso) {
        return EmulatedSandbox.create("sb-" + iso.name().toLowerCase(), "debian:12", dir.resolve("sb"), "/root", iso.get(),
                new CallJournal());
    }

    /** Exit code, stdout and stderr of one command. */
    private record Run(int code, String out, String err) {
    }

    private static Run run(EmulatedSandbox sb, String script) throws Exception {
        SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", script, "/root", Map.of(), UUID.randomUUID().toString()));
        p.stdin().close();
        byte[] out = p.stdout().readAllBytes();
        String err = new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.waitFor(), new String(out, StandardCharsets.UTF_8), err);
    }

    @ParameterizedTest
    @EnumSource(Isolation.class)
    void noProcessOfTheSandboxLeadsToTheHostsRoot(Isolation iso) throws Exception {
        // A file only the host has: outside the sandbox's root, at a path the sandbox lacks.
        Path hostOnly = Files.createDirectories(dir.resolve("host-only")).resolve("marker-" + UUID.randomUUID());
        Files.writeString(hostOnly, "host");
        String tag = "proof-" + UUID.randomUUID();
        try (EmulatedSandbox sb = sandbox(iso)) {
            Run r = run(sb, "for p in /proc/[0-9]*; do cat $p/root" + hostOnly + " 2>/dev/null && echo \"via $p\"; done;"
                    + " echo X > /proc/1/root/tmp/" + tag + "; for s in /run/docker.sock /var/run/docker.sock; do"
                    + " for p in /proc/[0-9]*; do [ -S $p/root$s ] && echo \"socket $p/root$s\"; done; done; echo end");
            assertEquals("end\n", r.out(), "a process of the sandbox showed the host's root: " + r.out());
            // Where pid 1's root is open to the command at all (bwrap's init has no capability), it is the sandbox's.
            assertFalse(Files.exists(Path.of("/tmp", tag)), "a command wrote the host's /tmp through /proc/1/root");
        }
    }

    /** The host's loopback ports and abstract sockets (what bubblewrap's shared network would leave open) are not reachable. */
    @ParameterizedTest
    @EnumSource(Isolation.class)
    void noHostSocketIsReachable(Isolation iso) throws Exception {
        Assumptions.assumeTrue(SandboxIsolation.onPath("python3").isPresent(), "python3 (the probe's client) is not installed");
        String name = "airlock-probe-" + UUID.randomUUID();
        Process abstractSocket = new ProcessBuilder("python3", "-c", "import socket, sys\n"
                + "s = socket.socket(socket.AF_UNIX); s.bind('\\0' + sys.argv[1]); s.listen(1)\n"
                + "print('up', flush=True); sys.stdin.read()", name).start();
        try (ServerSocket tcp = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()); EmulatedSandbox sb = sandbox(iso)) {
            assertEquals("up\n", new String(abstractSocket.getInputStream().readNBytes(3), StandardCharsets.UTF_8));
            Run r = run(sb, "python3 -c \"import socket\n"
                    + "for fam, addr in ((socket.AF_INET, ('127.0.0.1', " + tcp.getLocalPort() + ")), (socket.AF_UNIX, '\\0" + name + "')):\n"
                    + "  s = socket.socket(fam)\n"
                    + "  try:\n    s.connect(addr); print('reached', addr)\n"
                    + "  except OSError as e:\n    print('refused')\n\"");
            assertEquals("refused\nrefused\n", r.out(), r.err());
        } finally {
            abstractSocket.destroyForcibly();
        }
    }

    @ParameterizedTest
    @EnumSource(Isolation.class)
    void noWriteLeavesTheRoot(Isolation iso) throws Exception {
        String tag = "airlock-escape-" + UUID.randomUUID();
        Path hostOutside = Files.createDirectories(dir.resolve("outside"));
        try (EmulatedSandbox sb = sandbox(iso)) {
            Run r = run(sb, "echo t > /tmp/" + tag + " && echo r > /" + tag + " && mkdir -p /work && echo w > /work/" + tag
                    + " && echo h > ~/" + tag + "; echo u > /usr/" + tag + " 2>/dev/null; echo e > /etc/" + tag
                    + " 2>/dev/null; echo o > " + hostOutside + "/" + tag + " 2>/dev/null; echo done");
            assertEquals("done\n", r.out(), r.err());
            // Inside: every write the command could make is in the sandbox's root.
            for (String p : List.of("tmp/", "", "work/", "root/")) {
                assertTrue(Files.isRegularFile(sb.root().resolve(p + tag)), "not in the sandbox: /" + p + tag);
            }
            // Outside: nothing, not in the host's /tmp, /, /usr, /etc, /root or the emulator's own directory.
            for (Path p : List.of(Path.of("/tmp", tag), Path.of("/", tag), Path.of("/usr", tag), Path.of("/etc", tag),
                    hostOutside.resolve(tag), Path.of("/root", tag))) {
                assertFalse(Files.exists(p), "escaped to " + p);
            }
        }
    }

    /**
     * The host's password hashes and SSH host keys are not the sandbox's: a command (root here, as
     * in a Modal sandbox) and the file API both find them empty, as the local backend's bubblewrap
     * shows them.
     */
    @ParameterizedTest
    @EnumSource(Isolation.class)
    void theHostsSecretsUnderEtcAreEmptyInside(Isolation iso) throws Exception {
        List<String> secrets = new java.util.ArrayList<>(List.of("/etc/shadow"));
        try (var keys = Files.newDirectoryStream(Path.of("/etc/ssh"), "ssh_host_*_key")) {
            keys.forEach(k -> secrets.add(k.toString()));
        } catch (java.io.IOException e) {
            // no host keys on this machine
        }
        Assumptions.assumeTrue(Files.size(Path.of("/etc/shadow")) > 0, "this machine has no /etc/shadow to hide");
        try (EmulatedSandbox sb = sandbox(iso)) {
            for (String f : secrets) {
                Run r = run(sb, "wc -c < " + f);
                assertEquals("0\n", r.out(), f + " as a command reads it; " + r.err());
                assertEquals(0, sb.read(f).readAllBytes().length, f + " through the file API");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Isolation.class)
    void commandsRunWithoutCapabilitiesOrNewPrivileges(Isolation iso) throws Exception {
        try (EmulatedSandbox sb = sandbox(iso)) {
            Run r = run(sb, "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status");
            assertEquals(0, r.code(), r.err());
            // gVisor has no ambient set at all (checked below): its status has no CapAmb line.
            for (String set : iso == Isolation.GVISOR ? List.of("CapInh", "CapPrm", "CapEff")
                    : List.of("CapInh", "CapPrm", "CapEff", "CapAmb")) {
                assertTrue(r.out().contains(set + ":\t0000000000000000"), set + " is not empty: " + r.out());
            }
            if (iso != Isolation.BWRAP) {
                // bwrap leaves the bounding set; with no-new-privileges a root exec cannot take anything back from it.
                assertTrue(r.out().contains("CapBnd:\t0000000000000000"), r.out());
            }
            if (iso == Isolation.GVISOR) { // gVisor's /proc/self/status has no NoNewPrivs line; prctl answers
                Run nnp = run(sb, "setpriv --dump | grep -E '^(no_new_privs|Ambient)'");
                assertEquals("no_new_privs: 1\nAmbient capabilities: [unsupported]\n", nnp.out(), nnp.err());
            } else {
                assertTrue(r.out().contains("NoNewPrivs:\t1"), r.out());
            }
            if (iso == Isolation.BWRAP) {
                assertTrue(r.out().contains("Seccomp:\t2"), "no seccomp filter: " + r.out());
            }
            // Without a capability a root command cannot mount or remount its way out.
            Run m = run(sb, "mount -t tmpfs x /tmp && echo mounted; mount -o remount,rw /usr && echo remounted; echo end");
            assertEquals("end\n", m.out(), m.err());
        }
    }

    @ParameterizedTest
    @EnumSource(value = Isolation.class, names = "BWRAP")
    void theSeccompFilterRefusesNamespacesAndTracingButNotOrdinaryWork(Isolation iso) throws Exception {
        try (EmulatedSandbox sb = sandbox(iso)) {
            // Creating a user namespace needs no capability: only the filter stops it.
            Run u = run(sb, "unshare --user --map-root-user true");
            assertTrue(u.code() != 0 && u.err().contains("Operation not permitted"), u.code() + " " + u.err());
            Run n = run(sb, "unshare --net true");
            assertTrue(n.code() != 0, n.err());
            // Ordinary work: pipes, background jobs, subshells (clone without namespace flags), files.
            Run ok = run(sb, "(echo a; sleep 0.1 & wait) | cat; x=$(printf b); echo $x > /tmp/y; cat /tmp/y");
            assertEquals(0, ok.code(), ok.err());
            assertEquals("a\nb\n", ok.out());
        }
    }

    /**
     * Issue 32: the process whose status is the exec's must be none the command can reach. As root
     * the command's parent is outside the sandbox's pid namespace (pid 0 there), as with a
     * service's exec, so killing, stopping or rewriting "its parent" is not possible.
     */
    @ParameterizedTest
    @EnumSource(Isolation.class)
    void theCommandsParentIsOutsideTheSandbox(Isolation iso) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(SandboxIsolation.privileged(), "as another user bwrap stays the parent");
        try (EmulatedSandbox sb = sandbox(iso)) {
            Run r = run(sb, "echo $PPID; exit 7");
            assertEquals(7, r.code(), r.err());
            assertEquals("0\n", r.out());
            // Pid 1 is the sandbox's init (the anchor: a bwrap with no capability); no launcher step is there.
            Run procs = run(sb, "for p in /proc/[0-9]*; do [ $p = /proc/1 ] || { tr '\\0' ' ' < $p/cmdline; echo; }; done");
            assertFalse(procs.out().contains("bwrap") || procs.out().contains("nsenter") || procs.out().contains("setpriv"),
                    "a launcher process is visible in the sandbox: " + procs.out());
        }
    }

    /** Issue 38: without bubblewrap a command's absolute paths and the file API are one place. */
    @ParameterizedTest
    @EnumSource(Isolation.class)
    void aCommandAndTheFileApiSeeTheSameFiles(Isolation iso) throws Exception {
        String tag = "same-" + UUID.randomUUID();
        try (EmulatedSandbox sb = sandbox(iso)) {
            Run w = run(sb, "printf cmd > /root/f && mkdir -p /work && printf tmp > /tmp/" + tag + " && printf w > /work/w"
                    + " && pwd && echo $HOME");
            assertEquals(0, w.code(), w.err());
            assertEquals("/root\n/root\n", w.out());
            assertEquals("cmd", new String(sb.read("/root/f").readAllBytes(), StandardCharsets.UTF_8));
            assertEquals("tmp", new String(sb.read("/tmp/" + tag).readAllBytes(), StandardCharsets.UTF_8));
            assertEquals("w", new String(sb.read("/work/w").readAllBytes(), StandardCharsets.UTF_8));
            assertFalse(Files.exists(Path.of("/tmp", tag)), "the command's /tmp is the sandbox's");

            sb.write("/root/g", new ByteArrayInputStream(new byte[] {'a', 0, (byte) 0xff}), 0640);
            // find, not stat: Debian 12's runsc refuses coreutils' statx flags (GvisorProbe).
            Run r = run(sb, "od -An -tx1 /root/g; find /root/g -printf '%m\\n'");
            assertEquals(" 61 00 ff\n640\n", r.out(), r.err());
        }
    }

    @ParameterizedTest
    @EnumSource(Isolation.class)
    void aBackgroundProcessOutlivesItsExecUntilTheSandboxStops(Isolation iso) throws Exception {
        try (EmulatedSandbox sb = sandbox(iso)) {
            assertEquals(0, run(sb, "sleep 600 >/dev/null 2>&1 & echo $! > /tmp/bg").code());
            Run r = run(sb, "kill -0 $(cat /tmp/bg) && echo alive");
            assertEquals("alive\n", r.out(), r.err());
            sb.stop();
            assertTrue(sb.livePids().isEmpty(), "processes left after stop: " + sb.livePids());
        }
    }
}

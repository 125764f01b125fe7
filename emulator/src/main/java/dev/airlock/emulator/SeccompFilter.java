package dev.airlock.emulator;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The seccomp program an emulated sandbox's commands run under (bubblewrap's {@code --seccomp FD}
 * takes it compiled: classic BPF, one 8-byte {@code sock_filter} per instruction, native order).
 *
 * <p>It refuses with EPERM what a sandbox command could use against its host or its neighbours
 * and no ordinary program needs: tracing and other processes' memory ({@code ptrace},
 * {@code process_vm_*}, {@code kcmp}, {@code pidfd_getfd}), mounts and namespaces ({@code mount},
 * the new mount API, {@code unshare}, {@code setns}, {@code clone} with a namespace flag; {@code
 * clone3}, whose flags a filter cannot read, answers ENOSYS so libc falls back to {@code clone}),
 * the kernel's keyring, BPF, perf, userfaultfd and io_uring (whose operations bypass the filter),
 * modules, kexec, reboot, swap and the kernel log. A foreign syscall ABI (x32, i386 on x86_64)
 * kills the process, since its numbers mean other calls. Docker's default profile refuses the
 * same calls (with more besides); this list is the part that matters to an escape.
 */
public final class SeccompFilter {
    private static final int EPERM = 1;
    private static final int ENOSYS = 38;
    private static final int RET_ALLOW = 0x7fff0000;
    private static final int RET_ERRNO = 0x00050000;
    private static final int RET_KILL_PROCESS = 0x80000000;
    /** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (NEWTIME is clone3's and unshare's only). */
    private static final int CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
            | 0x20000000 | 0x40000000;
    private static final int X32_BIT = 0x40000000;

    /** One architecture: its audit id and the numbers of the calls refused. */
    private record Arch(int audit, boolean x32Possible, int cloneNr, int clone3Nr, Map<String, Integer> refused) {
    }

    private static final Map<String, Arch> ARCHES = Map.of(
            "amd64", new Arch(0xc000003e, true, 56, 435, Map.ofEntries(
                    Map.entry("ptrace", 101), Map.entry("process_vm_readv", 310), Map.entry("process_vm_writev", 311),
                    Map.entry("kcmp", 312), Map.entry("pidfd_getfd", 438), Map.entry("mount", 165),
                    Map.entry("umount2", 166), Map.entry("pivot_root", 155), Map.entry("open_tree", 428),
                    Map.entry("move_mount", 429), Map.entry("fsopen", 430), Map.entry("fsconfig", 431),
                    Map.entry("fsmount", 432), Map.entry("fspick", 433), Map.entry("mount_setattr", 442),
                    Map.entry("unshare", 272), Map.entry("setns", 308), Map.entry("keyctl", 250),
                    Map.entry("add_key", 248), Map.entry("request_key", 249), Map.entry("bpf", 321),
                    Map.entry("perf_event_open", 298), Map.entry("userfaultfd", 323), Map.entry("io_uring_setup", 425),
                    Map.entry("io_uring_enter", 426), Map.entry("io_uring_register", 427), Map.entry("kexec_load", 246),
                    Map.entry("kexec_file_load", 320), Map.entry("init_module", 175), Map.entry("finit_module", 313),
                    Map.entry("delete_module", 176), Map.entry("open_by_handle_at", 304), Map.entry("reboot", 169),
                    Map.entry("swapon", 167), Map.entry("swapoff", 168), Map.entry("syslog", 103),
                    Map.entry("acct", 163), Map.entry("iopl", 172), Map.entry("ioperm", 173))),
            "aarch64", new Arch(0xc00000b7, false, 220, 435, Map.ofEntries(
                    Map.entry("ptrace", 117), Map.entry("process_vm_readv", 270), Map.entry("process_vm_writev", 271),
                    Map.entry("kcmp", 272), Map.entry("pidfd_getfd", 438), Map.entry("mount", 40),
                    Map.entry("umount2", 39), Map.entry("pivot_root", 41), Map.entry("open_tree", 428),
                    Map.entry("move_mount", 429), Map.entry("fsopen", 430), Map.entry("fsconfig", 431),
                    Map.entry("fsmount", 432), Map.entry("fspick", 433), Map.entry("mount_setattr", 442),
                    Map.entry("unshare", 97), Map.entry("setns", 268), Map.entry("keyctl", 219),
                    Map.entry("add_key", 217), Map.entry("request_key", 218), Map.entry("bpf", 280),
                    Map.entry("perf_event_open", 241), Map.entry("userfaultfd", 282), Map.entry("io_uring_setup", 425),
                    Map.entry("io_uring_enter", 426), Map.entry("io_uring_register", 427), Map.entry("kexec_load", 104),
                    Map.entry("kexec_file_load", 294), Map.entry("init_module", 105), Map.entry("finit_module", 273),
                    Map.entry("delete_module", 106), Map.entry("open_by_handle_at", 265), Map.entry("reboot", 142),
                    Map.entry("swapon", 224), Map.entry("swapoff", 225), Map.entry("syslog", 116),
                    Map.entry("acct", 89))));

    private SeccompFilter() {
    }

    /** The names of the refused calls, for a reader of {@code doctor} or a test. */
    public static List<String> refusedCalls() {
        return ARCHES.get("amd64").refused().keySet().stream().sorted().toList();
    }

    /** The compiled program for this JVM's architecture, or empty where none is defined. */
    public static Optional<byte[]> forThisMachine() {
        return Optional.ofNullable(ARCHES.get(System.getProperty("os.arch"))).map(SeccompFilter::compile);
    }

    /** Writes the program to {@code file} (0600), for bwrap to read through a descriptor. */
    public static Optional<Path> writeTo(Path file) throws IOException {
        Optional<byte[]> program = forThisMachine();
        if (program.isEmpty()) {
            return Optional.empty();
        }
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.write(file, program.get());
        return Optional.of(file);
    }

    static byte[] compile(Arch a) {
        List<Integer> refused = a.refused().values().stream().sorted().toList();
        Program p = new Program();
        p.load(4);                                        // seccomp_data.arch
        p.jumpIfEqual(a.audit(), 1, 0);
        p.ret(RET_KILL_PROCESS);
        p.load(0);                                        // seccomp_data.nr
        if (a.x32Possible()) {
            p.jumpIfAtLeast(X32_BIT, 0, 1);
            p.ret(RET_KILL_PROCESS);
        }
        // Each refused number jumps to the EPERM return: past the checks after it and the five
        // instructions between the last check and that return.
        int checks = refused.size();
        for (int i = 0; i < checks; i++) {
            int remaining = checks - i - 1;
            p.jumpIfEqual(refused.get(i), remaining + 5, 0);
        }
        p.jumpIfEqual(a.clone3Nr(), 5, 0);                  // -> ENOSYS
        p.jumpIfEqual(a.cloneNr(), 1, 0);                   // -> the flags check
        p.ret(RET_ALLOW);
        p.load(16);                                       // args[0], low half: clone's flags
        p.jumpIfAnySet(CLONE_NAMESPACES, 0, 2);
        p.ret(RET_ERRNO | EPERM);                         // the refused calls land here
        p.ret(RET_ERRNO | ENOSYS);                        // clone3
        p.ret(RET_ALLOW);                                 // clone without a namespace flag
        return p.bytes();
    }

    /** Classic BPF, as {@code struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }}. */
    private static final class Program {
        private static final int LD_W_ABS = 0x20;
        private static final int JEQ_K = 0x15;
        private static final int JGE_K = 0x35;
        private static final int JSET_K = 0x45;
        private static final int RET_K = 0x06;
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        void load(int offset) {
            add(LD_W_ABS, 0, 0, offset);
        }

        void jumpIfEqual(int k, int ifTrue, int ifFalse) {
            add(JEQ_K, ifTrue, ifFalse, k);
        }

        void jumpIfAtLeast(int k, int ifTrue, int ifFalse) {
            add(JGE_K, ifTrue, ifFalse, k);
        }

        void jumpIfAnySet(int k, int ifTrue, int ifFalse) {
            add(JSET_K, ifTrue, ifFalse, k);
        }

        void ret(int k) {
            add(RET_K, 0, 0, k);
        }

        private void add(int code, int jt, int jf, int k) {
            if (jt > 255 || jf > 255) {
                throw new IllegalStateException("a jump past 255 instructions");
            }
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
            b.putShort((short) code).put((byte) jt).put((byte) jf).putInt(k);
            out.writeBytes(b.array());
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }
}

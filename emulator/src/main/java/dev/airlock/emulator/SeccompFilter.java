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

    /** A refused call and its number on each architecture (x86_64's table, then the generic one aarch64 uses). */
    private record Call(String name, int amd64, int aarch64) {
    }

    private static final List<Call> REFUSED = List.of(
            new Call("ptrace", 101, 117), new Call("process_vm_readv", 310, 270), new Call("process_vm_writev", 311, 271),
            new Call("kcmp", 312, 272), new Call("pidfd_getfd", 438, 438), new Call("mount", 165, 40),
            new Call("umount2", 166, 39), new Call("pivot_root", 155, 41), new Call("open_tree", 428, 428),
            new Call("move_mount", 429, 429), new Call("fsopen", 430, 430), new Call("fsconfig", 431, 431),
            new Call("fsmount", 432, 432), new Call("fspick", 433, 433), new Call("mount_setattr", 442, 442),
            new Call("unshare", 272, 97), new Call("setns", 308, 268), new Call("keyctl", 250, 219),
            new Call("add_key", 248, 217), new Call("request_key", 249, 218), new Call("bpf", 321, 280),
            new Call("perf_event_open", 298, 241), new Call("userfaultfd", 323, 282), new Call("io_uring_setup", 425, 425),
            new Call("io_uring_enter", 426, 426), new Call("io_uring_register", 427, 427), new Call("kexec_load", 246, 104),
            new Call("kexec_file_load", 320, 294), new Call("init_module", 175, 105), new Call("finit_module", 313, 273),
            new Call("delete_module", 176, 106), new Call("open_by_handle_at", 304, 265), new Call("reboot", 169, 142),
            new Call("swapon", 167, 224), new Call("swapoff", 168, 225), new Call("syslog", 103, 116),
            new Call("acct", 163, 89), new Call("iopl", 172, -1), new Call("ioperm", 173, -1));

    /** One architecture: its audit id, whether the x32 ABI shares it, clone's and clone3's numbers, and the refused ones. */
    private record Arch(int audit, boolean x32Possible, int cloneNr, int clone3Nr, List<Integer> refused) {
    }

    private static final Map<String, Arch> ARCHES = Map.of(
            "amd64", new Arch(0xc000003e, true, 56, 435, REFUSED.stream().map(Call::amd64).toList()),
            "aarch64", new Arch(0xc00000b7, false, 220, 435,
                    REFUSED.stream().map(Call::aarch64).filter(n -> n >= 0).toList()));

    private SeccompFilter() {
    }

    /** The names of the refused calls, for a reader of {@code doctor} or a test. */
    public static List<String> refusedCalls() {
        return REFUSED.stream().map(Call::name).sorted().toList();
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
        List<Integer> refused = a.refused().stream().sorted().toList();
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

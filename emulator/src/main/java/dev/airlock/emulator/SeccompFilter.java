package dev.airlock.emulator;

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
 * same calls (with more besides); this list is the part that matters to an escape. {@code setns},
 * {@code unshare} and {@code mount} pass only with the launcher's own arguments ({@link #compile}).
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
            new Call("kcmp", 312, 272), new Call("pidfd_getfd", 438, 438),
            new Call("umount2", 166, 39), new Call("pivot_root", 155, 41), new Call("open_tree", 428, 428),
            new Call("move_mount", 429, 429), new Call("fsopen", 430, 430), new Call("fsconfig", 431, 431),
            new Call("fsmount", 432, 432), new Call("fspick", 433, 433), new Call("mount_setattr", 442, 442),
            new Call("keyctl", 250, 219),
            new Call("add_key", 248, 217), new Call("request_key", 249, 218), new Call("bpf", 321, 280),
            new Call("perf_event_open", 298, 241), new Call("userfaultfd", 323, 282), new Call("io_uring_setup", 425, 425),
            new Call("io_uring_enter", 426, 426), new Call("io_uring_register", 427, 427), new Call("kexec_load", 246, 104),
            new Call("kexec_file_load", 320, 294), new Call("init_module", 175, 105), new Call("finit_module", 313, 273),
            new Call("delete_module", 176, 106), new Call("open_by_handle_at", 304, 265), new Call("reboot", 169, 142),
            new Call("swapon", 167, 224), new Call("swapoff", 168, 225), new Call("syslog", 103, 116),
            new Call("acct", 163, 89), new Call("iopl", 172, -1), new Call("ioperm", 173, -1));

    /**
     * One architecture: its audit id, whether the x32 ABI shares it, the numbers of the calls
     * judged by their arguments (clone, clone3, mount, unshare, setns) and the refused ones.
     */
    private record Arch(int audit, boolean x32Possible, int cloneNr, int clone3Nr, int mountNr, int unshareNr, int setnsNr,
                        List<Integer> refused) {
    }

    private static final Map<String, Arch> ARCHES = Map.of(
            "amd64", new Arch(0xc000003e, true, 56, 435, 165, 272, 308, REFUSED.stream().map(Call::amd64).toList()),
            "aarch64", new Arch(0xc00000b7, false, 220, 435, 40, 97, 268,
                    REFUSED.stream().map(Call::aarch64).filter(n -> n >= 0).toList()));
    private static final int CLONE_NEWNS = 0x00020000;
    private static final int CLONE_NEWPID = 0x20000000;
    /** mount(2) flags of the launcher's {@code unshare --mount-proc}: MS_REC|MS_PRIVATE, then MS_NOSUID|MS_NODEV|MS_NOEXEC. */
    private static final int MS_REC_PRIVATE = 0x4000 | 0x40000;
    private static final int MS_PROC = 0x2 | 0x4 | 0x8;

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

    /**
     * The program. Three calls pass only with the arguments the launcher's last steps inside
     * bwrap use, and nothing else: {@code setns} into a pid namespace ({@code nsenter --pid}),
     * {@code unshare} of a mount namespace and the two mounts of {@code unshare --mount-proc}.
     * Each needs CAP_SYS_ADMIN, which the launcher holds until {@code setpriv} drops it and a
     * command never has, so the kernel refuses them to a command all the same.
     */
    static byte[] compile(Arch a) {
        Program p = new Program();
        p.load(4);                                        // seccomp_data.arch
        p.jumpIfEqual(a.audit(), null, "kill");
        p.load(0);                                        // seccomp_data.nr
        if (a.x32Possible()) {
            p.jumpIfAtLeast(X32_BIT, "kill", null);
        }
        for (int nr : a.refused().stream().sorted().toList()) {
            p.jumpIfEqual(nr, "eperm", null);
        }
        p.jumpIfEqual(a.clone3Nr(), "enosys", null);
        p.jumpIfEqual(a.cloneNr(), "clone", null);
        p.jumpIfEqual(a.mountNr(), "mount", null);
        p.jumpIfEqual(a.unshareNr(), "unshare", null);
        p.jumpIfEqual(a.setnsNr(), "setns", null);
        p.ret(RET_ALLOW);
        p.label("clone");
        p.load(16);                                       // args[0], low half: clone's flags
        p.jumpIfAnySet(CLONE_NAMESPACES, "eperm", "allow");
        p.label("mount");
        p.load(40);                                       // args[3]: the mount flags
        p.jumpIfEqual(MS_REC_PRIVATE, "allow", null);
        p.jumpIfEqual(MS_PROC, "allow", "eperm");
        p.label("unshare");
        p.load(16);                                       // args[0]: the flags
        p.jumpIfEqual(CLONE_NEWNS, "allow", "eperm");
        p.label("setns");
        p.load(24);                                       // args[1]: the namespace type
        p.jumpIfEqual(CLONE_NEWPID, "allow", "eperm");
        p.label("eperm");
        p.ret(RET_ERRNO | EPERM);
        p.label("enosys");
        p.ret(RET_ERRNO | ENOSYS);
        p.label("allow");
        p.ret(RET_ALLOW);
        p.label("kill");
        p.ret(RET_KILL_PROCESS);
        return p.bytes();
    }

    /**
     * Classic BPF, as {@code struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }}; jumps name
     * a label (null: the next instruction) and are resolved to offsets at the end.
     */
    private static final class Program {
        private static final int LD_W_ABS = 0x20;
        private static final int JEQ_K = 0x15;
        private static final int JGE_K = 0x35;
        private static final int JSET_K = 0x45;
        private static final int RET_K = 0x06;

        private record Insn(int code, String ifTrue, String ifFalse, int k) {
        }

        private final List<Insn> insns = new java.util.ArrayList<>();
        private final Map<String, Integer> labels = new java.util.HashMap<>();

        void label(String name) {
            labels.put(name, insns.size());
        }

        void load(int offset) {
            insns.add(new Insn(LD_W_ABS, null, null, offset));
        }

        void jumpIfEqual(int k, String ifTrue, String ifFalse) {
            insns.add(new Insn(JEQ_K, ifTrue, ifFalse, k));
        }

        void jumpIfAtLeast(int k, String ifTrue, String ifFalse) {
            insns.add(new Insn(JGE_K, ifTrue, ifFalse, k));
        }

        void jumpIfAnySet(int k, String ifTrue, String ifFalse) {
            insns.add(new Insn(JSET_K, ifTrue, ifFalse, k));
        }

        void ret(int k) {
            insns.add(new Insn(RET_K, null, null, k));
        }

        byte[] bytes() {
            ByteBuffer b = ByteBuffer.allocate(insns.size() * 8).order(ByteOrder.nativeOrder());
            for (int i = 0; i < insns.size(); i++) {
                Insn in = insns.get(i);
                b.putShort((short) in.code()).put((byte) offset(i, in.ifTrue())).put((byte) offset(i, in.ifFalse())).putInt(in.k());
            }
            return b.array();
        }

        private int offset(int from, String label) {
            if (label == null) {
                return 0;
            }
            Integer to = labels.get(label);
            if (to == null || to <= from || to - from - 1 > 255) {
                throw new IllegalStateException("a jump to " + label + " that classic BPF cannot make");
            }
            return to - from - 1;
        }
    }
}

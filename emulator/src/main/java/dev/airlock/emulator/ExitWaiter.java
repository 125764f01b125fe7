package dev.airlock.emulator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The parent that tells a signal from an exit: a short perl program (Debian's perl-base is
 * essential, so it is on every host the emulator runs on) that forks the rest of the exec chain,
 * waits for it, and writes the raw wait status to a descriptor of its own.
 *
 * <p>Why: every other link of the chain loses the difference. Java's {@link Process#exitValue()}
 * gives 0x80+N both for a process killed by signal N and for one that ran {@code exit 128+N};
 * bubblewrap turns its child's death by signal N into its own exit with 128+N; util-linux's
 * {@code nsenter} re-raises its child's signal. So the waiter sits where the status is still
 * whole: above the {@code nsenter} that forks the command into the sandbox's pid namespace, in the
 * host's pid namespace, which a command cannot see, signal, trace or read the descriptors of.
 * The descriptor ({@value #FD}) is a file beside the sandbox root, opened by the chain's first
 * shell and marked close-on-exec by the waiter before it forks, so the command never holds it.
 *
 * <p>The waiter ignores the termination signals a kill of the command's group brings (the
 * command is what they are for; it restores their default dispositions before the exec), so it
 * lives to report them; only SIGKILL takes it with the group, and then the status is missing
 * ({@link #read} says so) and the emulator, the only one who can send that to a host group, knows
 * what it sent. It runs with perl's taint checks ({@code -T}): the exec's environment, which is
 * the client's, cannot load code into it ({@code PERL5OPT}, {@code PERL5LIB} are not consulted);
 * the command still gets that environment whole. It exits as a shell would report the status
 * (128+N after signal N), so the chain's exit value stays what it was.
 */
final class ExitWaiter {
    /** The descriptor the waiter writes the status to. */
    static final int FD = 4;

    private static final String PROGRAM = String.join("\n",
            "my ($fd) = shift(@ARGV) =~ /\\A([0-9]+)\\z/ or die \"airlock exit waiter: no descriptor number\\n\";",
            "open(my $st, '>&=', $fd) or die \"airlock exit waiter: no descriptor $fd: $!\\n\";",
            "fcntl($st, 2, 1) or die \"airlock exit waiter: cannot mark descriptor $fd close-on-exec: $!\\n\";", // F_SETFD, FD_CLOEXEC
            // Taint mode: the arguments and environment are what they are meant to be; passed on as they came.
            "for (keys %ENV) { ($ENV{$_}) = $ENV{$_} =~ /\\A(.*)\\z/s }",
            "my @argv = map { /\\A(.*)\\z/s; $1 } @ARGV;",
            "my @term = qw(HUP INT QUIT PIPE TERM);",
            "$SIG{$_} = 'IGNORE' for @term;",
            "my $pid = fork;",
            "defined $pid or die \"airlock exit waiter: fork: $!\\n\";",
            "if ($pid == 0) {",
            "  $SIG{$_} = 'DEFAULT' for @term;",
            "  exec { $argv[0] } @argv;",
            "  print STDERR \"airlock exit waiter: cannot run $argv[0]: $!\\n\";",
            "  exit 127;",
            "}",
            "waitpid($pid, 0) == $pid or die \"airlock exit waiter: wait: $!\\n\";",
            "my $s = $?;",
            "syswrite($st, \"$s\\n\");",
            "exit(($s & 127) ? 128 + ($s & 127) : $s >> 8);",
            "");

    private ExitWaiter() {
    }

    /**
     * Debian's perl, under {@code /usr}, which every chain sees (inside bubblewrap too). Without it
     * (not a Debian host) chains run without a waiter, and a signal reads as 128+N.
     */
    private static final Path PERL = Path.of("/usr/bin/perl");
    static final boolean AVAILABLE = Files.isExecutable(PERL);

    /** The argv that runs the rest of a chain under the waiter, writing to {@value #FD}. */
    static List<String> argv() {
        return List.of(PERL.toString(), "-T", "-e", PROGRAM, "--", Integer.toString(FD));
    }

    /**
     * The status the waiter wrote to {@code file}: how the chain below it ended. Empty when it
     * wrote none (it was killed with the group, or never started).
     */
    static Optional<SandboxProcess.Exit> read(Path file) {
        String s;
        try {
            s = Files.readString(file, StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            return Optional.empty();
        }
        if (!s.matches("[0-9]{1,6}")) {
            return Optional.empty();
        }
        int status = Integer.parseInt(s);
        int signal = status & 0x7f;
        return Optional.of(signal != 0 ? SandboxProcess.Exit.signal(signal) : SandboxProcess.Exit.code((status >> 8) & 0xff));
    }
}

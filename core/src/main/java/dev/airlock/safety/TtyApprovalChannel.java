package dev.airlock.safety;

import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * The command line's human channel: asks on the controlling terminal ({@code /dev/tty}), never on
 * stdin or stdout, so it works while stdin carries a payload and stdout carries output. Answers:
 * {@code o}nce, {@code s}ession, {@code a}lways, {@code d}eny. Silence is not consent: no answer
 * within the timeout denies. Only one question is on the terminal at a time.
 */
public final class TtyApprovalChannel implements ApprovalChannel {
    private static final Path DEV_TTY = Path.of("/dev/tty");
    private static final long POLL_MILLIS = 50;

    private final Path tty;
    private final Object terminal = new Object();

    public TtyApprovalChannel() {
        this(DEV_TTY);
    }

    /** A channel on another terminal device (a pseudo-terminal's path, say). */
    public TtyApprovalChannel(Path tty) {
        this.tty = tty;
    }

    /**
     * The channel, when this process has a controlling terminal it can read and write; empty
     * otherwise (under cron, CI, or a detached service), in which case approvals fall through to
     * the cron rule or are denied.
     */
    public static Optional<ApprovalChannel> ifAvailable() {
        if (!Files.isReadable(DEV_TTY) || !Files.isWritable(DEV_TTY)) {
            return Optional.empty();
        }
        try {
            new FileInputStream(DEV_TTY.toFile()).close();
            new FileOutputStream(DEV_TTY.toFile()).close();
            return Optional.of(new TtyApprovalChannel());
        } catch (IOException | SecurityException e) {
            return Optional.empty(); // ENXIO: no controlling terminal
        }
    }

    @Override
    public Decision ask(ApprovalRequest request, Duration timeout) {
        synchronized (terminal) {
            try (FileInputStream in = new FileInputStream(tty.toFile()); FileOutputStream out = new FileOutputStream(tty.toFile())) {
                return converse(in, out, request, timeout);
            } catch (IOException e) {
                return Decision.DENY;
            }
        }
    }

    private Decision converse(InputStream in, OutputStream out, ApprovalRequest r, Duration timeout) throws IOException {
        drain(in);
        long seconds = Math.max(1, timeout.toSeconds());
        write(out, "\nairlock: approval needed to write '" + Safety.oneLine(r.path()) + "' on " + Safety.oneLine(r.backend())
                + " (" + Safety.oneLine(r.target()) + ")\n"
                + "  why: " + Safety.oneLine(r.reason()) + "\n"
                + "  asked by: " + Safety.oneLine(r.operation()) + "\n"
                + "  allow [o]nce, for this [s]ession, [a]lways, or [d]eny? (no answer in " + seconds + "s denies) ");
        long deadline = System.nanoTime() + timeout.toNanos();
        StringBuilder line = new StringBuilder();
        byte[] buf = new byte[256];
        while (true) {
            if (Thread.currentThread().isInterrupted()) {
                write(out, "\nairlock: interrupted; denied\n");
                return Decision.DENY;
            }
            if (System.nanoTime() >= deadline) {
                write(out, "\nairlock: no answer within " + seconds + "s; denied\n");
                return Decision.DENY;
            }
            int avail = in.available();
            if (avail <= 0) {
                try {
                    Thread.sleep(POLL_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                continue;
            }
            int n = in.read(buf, 0, Math.min(buf.length, avail));
            if (n < 0) {
                write(out, "\nairlock: the terminal closed; denied\n");
                return Decision.DENY;
            }
            line.append(new String(buf, 0, n, StandardCharsets.UTF_8));
            int nl = line.indexOf("\n");
            while (nl >= 0) {
                String answer = line.substring(0, nl).trim().toLowerCase(Locale.ROOT);
                line.delete(0, nl + 1);
                Decision d = parse(answer);
                if (d != null) {
                    write(out, "airlock: " + describe(d) + "\n");
                    return d;
                }
                write(out, "  please answer o (once), s (session), a (always) or d (deny): ");
                nl = line.indexOf("\n");
            }
        }
    }

    /** Drops type-ahead so a keystroke made before the question cannot answer it. */
    private static void drain(InputStream in) throws IOException {
        int avail = in.available();
        while (avail > 0) {
            long skipped = in.skip(avail);
            if (skipped <= 0) {
                break;
            }
            avail = in.available();
        }
    }

    static Decision parse(String answer) {
        return switch (answer) {
            case "o", "once", "y", "yes" -> Decision.ONCE;
            case "s", "session" -> Decision.SESSION;
            case "a", "always" -> Decision.ALWAYS;
            case "d", "deny", "n", "no", "" -> Decision.DENY;
            default -> null;
        };
    }

    private static String describe(Decision d) {
        return switch (d) {
            case ONCE -> "approved once";
            case SESSION -> "approved for this session";
            case ALWAYS -> "approved always (remembered)";
            case DENY -> "denied";
        };
    }

    private static void write(OutputStream out, String s) throws IOException {
        out.write(s.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}

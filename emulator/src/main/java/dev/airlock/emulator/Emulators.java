package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/**
 * The {@code airlock emulator NAME --listen HOST:PORT} contract, in one place: find the provider
 * by name, start it on a loopback address, print {@code listening on URL} as the first line of
 * stdout (flushed), and run until the process is killed, then stop every sandbox.
 *
 * <p>Settings: {@code airlock.emulator.faults} (a {@link FaultPlan} spec),
 * {@code airlock.emulator.seed} (default 1), {@code airlock.emulator.state-dir} (default a fresh
 * 0700 temp dir, removed on exit), {@code airlock.emulator.isolation} ({@link SandboxIsolation}).
 */
public final class Emulators {
    public static final String DEFAULT_LISTEN = "127.0.0.1:0";

    private Emulators() {
    }

    /** Every provider on the class path, by name; two with one name is an error. */
    public static Map<String, EmulatorProvider> available(ClassLoader loader) {
        Map<String, EmulatorProvider> out = new TreeMap<>();
        for (EmulatorProvider p : ServiceLoader.load(EmulatorProvider.class, loader)) {
            EmulatorProvider prev = out.put(p.name(), p);
            if (prev != null) {
                throw new ConfigurationException("two emulators are named " + p.name() + " (" + prev.getClass().getName()
                        + " and " + p.getClass().getName() + "); remove one from the class path");
            }
        }
        return out;
    }

    public static EmulatorProvider find(String name, ClassLoader loader) {
        Map<String, EmulatorProvider> all = available(loader);
        EmulatorProvider p = all.get(name);
        if (p == null) {
            throw new ConfigurationException("no emulator named " + name + "; available: "
                    + (all.isEmpty() ? "none (each cloud backend module brings its own)" : String.join(", ", all.keySet())));
        }
        return p;
    }

    /** {@code HOST:PORT} ({@code [::1]:PORT} for IPv6) on a loopback address; port 0 picks a free one. */
    public static InetSocketAddress parseListen(String listen) {
        String s = listen.trim();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new ConfigurationException("--listen " + listen + " is not HOST:PORT, e.g. 127.0.0.1:8080 (port 0 picks one)");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw new ConfigurationException("--listen " + listen + ": the port must be 0..65535");
        }
        InetAddress addr;
        try {
            addr = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new ConfigurationException("--listen " + listen + ": unknown host " + host);
        }
        if (!addr.isLoopbackAddress()) {
            // An emulator runs commands for whoever holds its printed credentials: never offer that to the network.
            throw new ConfigurationException("--listen " + listen + ": emulators run commands for anyone with the credentials they print,"
                    + " so they listen on loopback only (127.0.0.1, ::1 or localhost)");
        }
        return new InetSocketAddress(addr, port);
    }

    /** A started emulator with the directory it owns; closing stops it and removes the directory. */
    public record Served(Emulator emulator, Path stateDir, boolean ownsStateDir, FaultPlan faults, CallJournal journal)
            implements AutoCloseable {
        @Override
        public void close() {
            try {
                emulator.close();
            } finally {
                if (ownsStateDir) {
                    try {
                        EmulatedSandbox.deleteTree(stateDir);
                    } catch (IOException e) {
                        System.err.println("airlock: could not remove " + stateDir + ": " + e.getMessage());
                    }
                }
            }
        }
    }

    /**
     * Starts the named emulator from settings, without printing or blocking, with an empty
     * environment: it makes its own credentials ({@code served.emulator().credentials()}).
     */
    public static Served start(String name, String listen, Settings settings, ClassLoader loader) throws IOException {
        return start(name, listen, settings, Map.of(), loader);
    }

    /**
     * Starts the named emulator; it accepts the credentials named by the service's own variables
     * in {@code environment} ({@code MODAL_TOKEN_ID}...) and makes the missing ones.
     */
    public static Served start(String name, String listen, Settings settings, Map<String, String> environment,
                               ClassLoader loader) throws IOException {
        EmulatorProvider p = find(name, loader);
        InetSocketAddress address = parseListen(listen);
        FaultPlan faults = FaultPlan.parse(settings.get("airlock.emulator.faults", ""),
                settings.getInt("airlock.emulator.seed", 1));
        // Before the state dir: a refused isolation leaves nothing behind.
        SandboxIsolation isolation = SandboxIsolation.detect(settings);
        Path state;
        boolean owns;
        if (settings.get("airlock.emulator.state-dir").filter(v -> !v.isBlank()).isPresent()) {
            state = Files.createDirectories(Path.of(settings.get("airlock.emulator.state-dir").get().trim()));
            owns = false;
        } else {
            state = Files.createTempDirectory("airlock-emulator-" + name + "-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            owns = true;
        }
        CallJournal journal = new CallJournal();
        Emulator e = p.start(new EmulatorContext(address, state, isolation, faults, journal, settings, environment));
        return new Served(e, state, owns, faults, journal);
    }

    /**
     * The command: starts the emulator, prints {@code listening on URL} first on {@code out},
     * then {@code ca-file PATH} when it made a certificate, then one line per credential it
     * accepts ({@code credential NAME=VALUE} for one it made, {@code credential NAME from the
     * environment} for one read from this process's environment, whose value is never printed),
     * flushed, and blocks until the thread is interrupted or the JVM exits (a shutdown hook stops
     * the sandboxes). Details (isolation, faults at exit) go to {@code err}.
     */
    public static void serve(String name, String listen, Settings settings, ClassLoader loader, PrintStream out,
                             PrintStream err) throws IOException {
        Served served = start(name, listen, settings, System.getenv(), loader);
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            served.close();
            report(served, err);
            stopped.countDown();
        }, "airlock-emulator-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        out.println("listening on " + served.emulator().url());
        served.emulator().caFile().ifPresent(ca -> out.println("ca-file " + ca));
        for (String line : served.emulator().credentials().describe()) {
            out.println("credential " + line);
        }
        out.flush();
        err.println("airlock: emulator " + name + ": sandboxes under " + served.stateDir() + ", isolation "
                + SandboxIsolation.detect(settings).describe());
        err.flush();
        try {
            new CountDownLatch(1).await(); // until killed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
                served.close();
                report(served, err);
            } catch (IllegalStateException shuttingDown) {
                awaitQuietly(stopped); // the hook is already stopping it
            }
        }
    }

    private static void report(Served served, PrintStream err) {
        String r = served.faults().report();
        if (!r.isEmpty() && !served.faults().faultCounts().isEmpty()) {
            List<String> lines = new ArrayList<>(r.lines().collect(Collectors.toList()));
            err.println("airlock: emulator calls and faults: " + String.join("; ", lines));
            err.flush();
        }
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

package dev.airlock.docker;

import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Container lifecycle against the real daemon: hardening, home, close, attach, up/down/gc, loss. */
@ExtendWith(DockerFixture.class)
class DockerLifecycleTest {

    private static String sh(Environment env, String command) {
        ExecResult r = env.exec(ExecRequest.builder(command).build());
        assertEquals(0, r.exitCode(), command + ": " + r.stderr().text());
        return r.stdout().text().strip();
    }

    private static boolean exists(String containerId) throws Exception {
        return DockerFixture.docker(null, 30, "inspect", containerId).exit() == 0;
    }

    @Test
    void theContainerIsHardenedAsSeenFromInside() {
        try (Environment env = Environments.open(DockerFixture.settings())) {
            String status = sh(env, "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status");
            // CHOWN(0) DAC_OVERRIDE(1) FOWNER(3) FSETID(4): 0x1b, nothing else.
            assertTrue(status.matches("(?s)CapEff:\\s+000000000000001b\\s+NoNewPrivs:\\s+1"), status);
            String pids = sh(env, "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max");
            assertEquals("512", pids);
            assertTrue(sh(env, "cat /proc/1/comm").matches("docker-init|tini"), "pid 1 is the init (--init)");
            assertEquals("lo", sh(env, "ls /sys/class/net"), "network none by default");
            ExecResult chown = env.exec(ExecRequest.builder("touch /tmp/o && chown 65534:65534 /tmp/o && chmod 0640 /tmp/o && stat -c '%u %a' /tmp/o").build());
            assertEquals("65534 640", chown.stdout().text().strip(), "file ownership still works: " + chown.stderr().text());
            ExecResult mknod = env.exec(ExecRequest.builder("mknod /tmp/dev c 1 3").build());
            assertTrue(mknod.exitCode() != 0, "MKNOD was dropped");
        }
    }

    @Test
    void theContainerCarriesLabelsForGc() throws Exception {
        try (Environment env = Environments.open(DockerFixture.settings())) {
            DockerFixture.Result r = DockerFixture.docker(null, 30, "inspect", "-f",
                    "{{index .Config.Labels \"dev.airlock.managed\"}} {{index .Config.Labels \"dev.airlock.environment\"}}"
                            + " {{index .Config.Labels \"dev.airlock.version\"}} {{.HostConfig.Init}} {{.HostConfig.SecurityOpt}}"
                            + " {{.HostConfig.NetworkMode}} {{index .Config.Labels \"dev.airlock.created\"}}"
                            + " {{index .Config.Labels \"" + DockerFixture.RUN_LABEL + "\"}}",
                    DockerBackend.of(env).containerId());
            assertEquals(0, r.exit(), r.err());
            String[] f = r.out().strip().split(" ");
            assertEquals("true", f[0]);
            assertEquals(env.id(), f[1]);
            assertEquals(DockerFixture.RUN, f[f.length - 1], "airlock.docker.labels.NAME reaches the container");
            assertTrue(f[2].matches("\\d+\\.\\d+\\.\\d+.*"), "version label: " + f[2]);
            assertEquals("true", f[3]);
            assertEquals("[no-new-privileges]", f[4]);
            assertEquals("none", f[5]);
            assertTrue(Instant.parse(f[6]).isAfter(Instant.now().minus(Duration.ofMinutes(10))));
        }
    }

    @Test
    void aTcpDaemonAddressWorksWithEndOfInput() throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"));
             Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, proxy.url()))) {
            byte[] data = new byte[(2 << 20) + 3];
            new Random(9).nextBytes(data);
            ExecResult r = env.exec(ExecRequest.builder("wc -c").stdin(data).build());
            assertEquals(String.valueOf(data.length), r.stdout().text().strip());
        }
    }

    @Test
    void aBrokenOutputConnectionIsAnErrorNotAShortOutput() throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"));
             Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, proxy.url()))) {
            Execution e = env.start(ExecRequest.builder("echo started; sleep 1; echo finished").build());
            while (!sh(env, "ps -o args").contains("sleep 1")) {
                Thread.sleep(20);
            }
            proxy.breakExecConnections();
            dev.airlock.AirlockException failed = assertThrows(dev.airlock.AirlockException.class, e::await);
            assertTrue(failed.getMessage().contains("output is incomplete"), failed.getMessage());
            assertEquals("again", sh(env, "echo again"), "the environment still works through new connections");
        }
    }

    @Test
    void aDaemonThatNeverAnswersTheExecStartCannotHoldACommandPastItsTimeout() throws Exception {
        // The start's own deadline (api-timeout) is far off: only the command's timeout can end it in time.
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"));
             Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, proxy.url(),
                     DockerSettings.API_TIMEOUT, "10m"))) {
            proxy.stallExecStarts();
            try {
                ExecResult r = env.exec(ExecRequest.builder("echo ran").timeout(Duration.ofSeconds(2)).build());
                assertTrue(r.timedOut(), "timed out, not an error at the start's own deadline");
                assertEquals(124, r.exitCode());
                assertEquals("", r.stdout().text());
                assertEquals(1, proxy.stalledExecStarts());
            } finally {
                proxy.resumeExecStarts(); // close runs a clean-up exec
            }
        }
    }

    @Test
    void withoutATimeoutAnUnansweredExecStartEndsAtTheApiTimeout() throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"));
             Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, proxy.url(),
                     DockerSettings.API_TIMEOUT, "3s"))) {
            proxy.stallExecStarts();
            try {
                dev.airlock.DispatchOutcomeUnknownException e = assertThrows(dev.airlock.DispatchOutcomeUnknownException.class,
                        () -> env.exec(ExecRequest.builder("echo ran").build()));
                assertTrue(e.getMessage().contains("did not answer") && e.getMessage().contains(DockerSettings.API_TIMEOUT),
                        e.getMessage());
                assertEquals(1, proxy.stalledExecStarts());
            } finally {
                proxy.resumeExecStarts();
            }
            assertEquals("again", sh(env, "echo again"), "the environment still works");
        }
    }

    @Test
    void limitsAndOptionsFromSettingsApply() {
        try (Environment env = Environments.open(DockerFixture.settings(
                DockerSettings.PIDS_LIMIT, "64", DockerSettings.MEMORY, "64m", DockerSettings.CPUS, "0.5",
                DockerSettings.ENV + ".GREETING", "hello there", DockerSettings.WORKDIR, "/tmp",
                DockerSettings.USER, "65534:65534", "airlock.home", "/tmp/airlock-home"))) {
            assertEquals("64", sh(env, "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max"));
            assertEquals(String.valueOf(64L << 20), sh(env, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max"));
            assertEquals("hello there", sh(env, "printf '%s' \"$GREETING\""));
            assertEquals("65534", sh(env, "id -u"));
            assertEquals("0000000000000000", sh(env, "sed -n 's/^CapEff:\\s*//p' /proc/self/status"), "a non-root user has no capabilities");
        }
    }

    @Test
    void homeModeAutoGivesTheProfileHomeInsideTheContainer() {
        try (Environment env = Environments.open(DockerFixture.settings())) {
            assertTrue(env.target().container());
            assertEquals("/.dockerenv exists", env.target().containerSignal());
            assertEquals("/root/.airlock/home", env.target().home());
            assertEquals("/root/.airlock/home", sh(env, "echo $HOME"));
            assertEquals("/root", sh(env, "echo $AIRLOCK_REAL_HOME"));
            assertTrue(sh(env, "echo $TMPDIR").startsWith(env.target().privateDir()));
        }
    }

    @Test
    void closeRemovesTheContainerOnceWhateverRaces() throws Exception {
        Environment env = Environments.open(DockerFixture.settings());
        String id = DockerBackend.of(env).containerId();
        assertTrue(exists(id));
        Execution running = env.start(ExecRequest.builder("sleep 300").build());
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> closers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                closers.add(pool.submit(() -> {
                    go.await();
                    env.close();
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : closers) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertFalse(exists(id), "the container is gone after close");
        ExecResult r = running.await(Duration.ofSeconds(30)).orElseThrow();
        assertTrue(r.cancelled(), "close cancelled the running command");
        assertThrows(dev.airlock.EnvironmentClosedException.class, () -> env.exec(ExecRequest.builder("true").build()));
    }

    @Test
    void aKilledJvmRemovesItsContainer() throws Exception {
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), ChildJvm.class.getName())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String id;
        try (var out = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream()))) {
            id = out.readLine();
            assertTrue(id != null && exists(id), "the child opened a container: " + id);
            child.destroy(); // SIGTERM: the shutdown hook closes the environment
            assertTrue(child.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "the child JVM ended");
        } finally {
            child.destroyForcibly();
        }
        assertFalse(exists(id), "the shutdown hook removed the container");
    }

    @Test
    void aSigkilledJvmLeavesNoContainerRunning() throws Exception {
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), ChildJvm.class.getName())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String id;
        try (var out = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream()))) {
            id = out.readLine();
            assertTrue(id != null && exists(id), "the child opened a container: " + id);
            child.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertTrue(child.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "the child JVM ended");
        } finally {
            child.destroyForcibly();
        }
        // The lease's end stops the container and the daemon removes it; wait for that (bounded).
        for (int i = 0; i < 600 && exists(id); i++) {
            Thread.sleep(100);
        }
        assertFalse(exists(id), "the container of a SIGKILLed JVM is gone, with no gc");
    }

    @Test
    void aBrokenLeaseEndsTheContainerWithAClearError() throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"));
             Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, proxy.url()))) {
            assertEquals("up", sh(env, "echo up"));
            proxy.breakLeases(); // as a dropped tcp:// connection, or a dead JVM, would
            for (int i = 0; i < 600 && exists(DockerBackend.of(env).containerId()); i++) {
                Thread.sleep(100);
            }
            assertFalse(exists(DockerBackend.of(env).containerId()), "the container ended with its lease");
            BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                    () -> env.exec(ExecRequest.builder("true").build()));
            assertTrue(e.getMessage().contains("was removed"), e.getMessage());
        }
    }

    @Test
    void anOpenEnvironmentsContainerIsLeasedAndUpsIsNot() throws Exception {
        DockerProvider provider = new DockerProvider();
        String kept = provider.up(DockerFixture.settings(), dev.airlock.spi.SandboxLifecycle.DEFAULT_TTL);
        try (Environment env = Environments.open(DockerFixture.settings())) {
            DockerFixture.Result r = DockerFixture.docker(null, 30, "inspect", "-f",
                    "{{.HostConfig.AutoRemove}} {{.Config.OpenStdin}} {{.Config.StdinOnce}}", DockerBackend.of(env).containerId(), kept);
            assertEquals(0, r.exit(), r.err());
            assertEquals(List.of("true true true", "false false false"), r.out().strip().lines().toList());
            assertEquals("alive", sh(env, "echo alive"), "the lease holds while the environment is open");
        } finally {
            provider.down(DockerFixture.settings(), kept);
        }
    }

    @Test
    void cancelKillsOnlyThatCommand() throws Exception {
        try (Environment env = Environments.open(DockerFixture.settings())) {
            Execution e = env.start(ExecRequest.builder("sleep 303").build());
            while (!sh(env, "ps -o args").contains("sleep 303")) {
                Thread.sleep(20);
            }
            e.cancel();
            ExecResult r = e.await();
            assertEquals(130, r.exitCode());
            assertTrue(r.cancelled());
            assertFalse(sh(env, "ps -o args").contains("sleep 303"));
            assertEquals("still here", sh(env, "echo still here"));
        }
    }

    @Test
    void aBackgroundProcessHoldingStdoutDoesNotHangTheCommand() {
        try (Environment env = Environments.open(DockerFixture.settings("airlock.exec.output-grace", "300ms"))) {
            ExecResult r = env.exec(ExecRequest.builder("sleep 304 & echo hi; exit 3").build());
            assertEquals(3, r.exitCode());
            assertEquals("hi\n", r.stdout().text());
            assertFalse(sh(env, "ps -o args").contains("sleep 304"), "the background job ends with its exec");
        }
    }

    @Test
    void concurrentCommandsKeepTheirOwnBytes() throws Exception {
        try (Environment env = Environments.open(DockerFixture.settings())) {
            ExecutorService pool = Executors.newFixedThreadPool(6);
            try {
                List<Future<Boolean>> results = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    byte[] data = new byte[(1 << 20) + i];
                    new Random(i).nextBytes(data);
                    results.add(pool.submit(() -> {
                        ExecResult r = env.exec(ExecRequest.builder("cat; cat /dev/null >&2").stdin(data).build());
                        assertArrayEquals(data, r.stdout().bytes());
                        return r.exitCode() == 0;
                    }));
                }
                for (Future<Boolean> f : results) {
                    assertTrue(f.get());
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void aContainerRemovedMidRunGivesAClearErrorNotARetry() throws Exception {
        Environment env = Environments.open(DockerFixture.settings());
        try {
            Execution running = env.start(ExecRequest.builder("sleep 305").build());
            while (!sh(env, "ps -o args").contains("sleep 305")) {
                Thread.sleep(20);
            }
            assertEquals(0, DockerFixture.docker(null, 60, "rm", "-f", "-v", DockerBackend.of(env).containerId()).exit());
            BackendUnavailableException lost = assertThrows(BackendUnavailableException.class, running::await);
            assertTrue(lost.getMessage().contains("was removed"), lost.getMessage());
            BackendUnavailableException next = assertThrows(BackendUnavailableException.class,
                    () -> env.exec(ExecRequest.builder("true").build()));
            assertTrue(next.getMessage().contains("did not run"), next.getMessage());
        } finally {
            env.close();
        }
    }

    @Test
    void upAttachDownAcrossEnvironments() throws Exception {
        DockerProvider provider = new DockerProvider();
        Settings settings = DockerFixture.settings();
        String id = provider.up(settings, dev.airlock.spi.SandboxLifecycle.DEFAULT_TTL);
        try {
            try (Environment a = Environments.open(settings.with(DockerSettings.CONTAINER, id))) {
                a.files().write("/tmp/kept.txt", "kept\n".getBytes());
            }
            assertTrue(exists(id), "an attached container outlives close");
            try (Environment b = Environments.open(settings.with(DockerSettings.CONTAINER, id))) {
                assertEquals("kept", sh(b, "cat /tmp/kept.txt"));
                assertTrue(DockerBackend.of(b).isAttached());
                assertFalse(b.capabilities().disposable());
            }
        } finally {
            provider.down(settings, id);
        }
        assertFalse(exists(id));
        assertThrows(ConfigurationException.class, () -> provider.down(settings, id));
    }

    @Test
    void downRefusesAContainerAirlockDidNotMake() throws Exception {
        DockerFixture.Result made = DockerFixture.docker(null, 60, "create", DockerFixture.IMAGE, "true");
        assertEquals(0, made.exit(), made.err());
        String id = made.out().strip();
        try {
            assertThrows(DeniedException.class, () -> new DockerProvider().down(DockerFixture.settings(), id));
            assertTrue(exists(id));
            ConfigurationException notRunning = assertThrows(ConfigurationException.class,
                    () -> Environments.open(DockerFixture.settings(DockerSettings.CONTAINER, "airlock-no-such-container")));
            assertTrue(notRunning.getMessage().contains(DockerSettings.CONTAINER), notRunning.getMessage());
            BackendUnavailableException stopped = assertThrows(BackendUnavailableException.class,
                    () -> Environments.open(DockerFixture.settings(DockerSettings.CONTAINER, id)));
            assertTrue(stopped.getMessage().contains("not running"), stopped.getMessage());
        } finally {
            DockerFixture.docker(null, 60, "rm", "-f", "-v", id);
        }
    }

    /** The holder of a process that has ended: this boot, its pid and start time, no longer running. */
    @Test
    void gcRemovesOnlyStaleLabelledContainers() throws Exception {
        DockerSettings s = DockerSettings.from(DockerFixture.settings(), Map.of());
        String stale;
        String staleKept;
        String fresh;
        String foreign;
        String held;
        String threeHoursAgo = Instant.now().minus(Duration.ofHours(3)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
        try (DockerDaemon daemon = new DockerDaemon(s)) {
            // Held by this JVM, which still runs: an environment open for three hours is not an orphan.
            Map<String, String> live = new java.util.LinkedHashMap<>(DockerDaemon.labels(s, "gc-test-held", false));
            live.put(DockerDaemon.LABEL_CREATED, threeHoursAgo);
            held = daemon.createAndStart(s, "airlock-gc-held-" + System.nanoTime(), live, false).id();
            Map<String, String> old = new java.util.LinkedHashMap<>(live);
            old.put(DockerDaemon.LABEL_HOLDER, dev.airlock.tck.GoneHolder.label());
            stale = daemon.createAndStart(s, "airlock-gc-old-" + System.nanoTime(), old, false).id();
            Map<String, String> theirs = new java.util.LinkedHashMap<>(old);
            theirs.put(DockerDaemon.LABEL_OWNER, "someone-else@" + dev.airlock.spi.ResourceLabels.currentOwner());
            foreign = daemon.createAndStart(s, "airlock-gc-foreign-" + System.nanoTime(), theirs, false).id();
            Map<String, String> kept = new java.util.LinkedHashMap<>(DockerDaemon.labels(s, "gc-test-kept", true));
            kept.put(DockerDaemon.LABEL_CREATED, threeHoursAgo);
            staleKept = daemon.createAndStart(s, "airlock-gc-kept-" + System.nanoTime(), kept, false).id();
            fresh = daemon.createAndStart(s, "airlock-gc-new-" + System.nanoTime(), DockerDaemon.labels(s, "gc-test-new", false), false).id();
        }
        try {
            DockerProvider provider = new DockerProvider();
            List<String> removed = provider.gc(DockerFixture.settings(), Duration.ofHours(1), false);
            assertTrue(removed.contains(stale), removed.toString());
            assertFalse(removed.contains(fresh));
            assertFalse(removed.contains(staleKept), "what up made stays unless asked");
            assertFalse(removed.contains(foreign), "another owner's sandbox on a shared daemon is not ours to remove");
            assertFalse(removed.contains(held), "a container whose holder still runs is not an orphan, however old");
            assertTrue(exists(held));
            assertTrue(exists(foreign));
            assertFalse(exists(stale));
            assertTrue(exists(fresh));
            assertTrue(exists(staleKept));
            List<String> all = provider.gc(DockerFixture.settings(), Duration.ofHours(1), true);
            assertTrue(all.contains(staleKept));
            assertFalse(all.contains(foreign));
            assertFalse(exists(staleKept));
            assertTrue(exists(foreign));
        } finally {
            DockerFixture.docker(null, 60, "rm", "-f", "-v", stale, staleKept, fresh, foreign, held);
        }
    }

    @Test
    void aTaglessImageIsPulledAsLatestAndAFailedPullIsOneLine() throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"))) {
            // No such image (a usage error), or, offline, an unreachable registry: one line either way.
            dev.airlock.AirlockException e = assertThrows(dev.airlock.AirlockException.class, () -> Environments.open(DockerFixture.settings(
                    DockerSettings.HOST, proxy.url(), DockerSettings.IMAGE, "airlock-test/absent", DockerSettings.PULL, "missing")));
            assertTrue(e instanceof ConfigurationException || e instanceof dev.airlock.BackendUnavailableException, e.toString());
            assertTrue(e.getMessage().startsWith("image airlock-test/absent:latest is not on the Docker host and pulling it failed: "),
                    e.getMessage());
            assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
            List<String> pulls = proxy.requests().stream().filter(l -> l.contains("/images/create?")).toList();
            assertEquals(1, pulls.size(), proxy.requests().toString());
            assertTrue(pulls.get(0).matches("POST (/v[0-9.]+)?/images/create\\?(.*&)?tag=latest(&.*)?")
                    && pulls.get(0).contains("fromImage=airlock-test%2Fabsent"), "one tag is pulled, not all: " + pulls.get(0));
        }
    }

    @Test
    void aDockerContextLeadsToItsDaemon(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"))) {
            DockerSettingsTest.writeContext(dir, "through-proxy", proxy.url());
            Settings settings = DockerFixture.settings();
            DockerSettings s = DockerSettings.from(settings, Map.of("DOCKER_CONFIG", dir.toString(), "DOCKER_CONTEXT", "through-proxy"));
            try (Environment env = DockerBackend.open(dev.airlock.spi.OpenContext.of(settings), s)) {
                assertEquals("via the context", sh(env, "echo via the context"));
            }
            assertTrue(proxy.requests().stream().anyMatch(l -> l.matches("POST /exec/[0-9a-f]+/start")), proxy.requests().toString());
        }
    }

    @Test
    void registryCredentialsComeFromTheDockerConfig(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String auth = java.util.Base64.getEncoder().encodeToString("airlock-user:s3cret-pw".getBytes());
        java.nio.file.Files.writeString(dir.resolve("config.json"),
                "{\"auths\":{\"registry.airlock.invalid:5000\":{\"auth\":\"" + auth + "\"}}}");
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"))) {
            Settings settings = DockerFixture.settings(DockerSettings.HOST, proxy.url(),
                    DockerSettings.IMAGE, "registry.airlock.invalid:5000/team/tool:1", DockerSettings.PULL, "missing");
            DockerSettings s = DockerSettings.from(settings, Map.of("DOCKER_CONFIG", dir.toString()));
            // the registry does not resolve: a registry that cannot be reached, after the pull was sent with its credentials
            dev.airlock.BackendUnavailableException e = assertThrows(dev.airlock.BackendUnavailableException.class,
                    () -> DockerBackend.open(dev.airlock.spi.OpenContext.of(settings), s));
            assertFalse(e.getMessage().contains("s3cret-pw"), e.getMessage());
            String head = proxy.heads().stream().filter(h -> h.contains("/images/create?")).findFirst().orElseThrow();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)X-Registry-Auth: *(\\S+)").matcher(head);
            assertTrue(m.find(), "the pull carries credentials: " + head.lines().findFirst().orElse(""));
            String json = new String(java.util.Base64.getUrlDecoder().decode(m.group(1).replace('+', '-').replace('/', '_')));
            assertTrue(json.contains("airlock-user") && json.contains("s3cret-pw"), "the config's credentials, for that registry");
        }
    }

    /** A credential helper (credHelpers, as docker-credential-gcloud or -ecr-login are set up) wins over auths, as in the CLI. */
    @Test
    void aCredentialHelperGivesThePullItsCredentials(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path bin = java.nio.file.Files.createDirectories(dir.resolve("bin"));
        java.nio.file.Path helper = bin.resolve("docker-credential-airlocktest");
        java.nio.file.Files.writeString(helper, "#!/bin/sh\n[ \"$1\" = get ] || exit 3\nread -r url\n"
                + "printf '%s' \"$url\" > \"$0.asked\"\n"
                + "printf '{\"ServerURL\":\"%s\",\"Username\":\"helper-user\",\"Secret\":\"h3lper-s3cret\"}' \"$url\"\n");
        helper.toFile().setExecutable(true);
        String other = java.util.Base64.getEncoder().encodeToString("file-user:file-pw".getBytes());
        java.nio.file.Files.writeString(dir.resolve("config.json"), "{\"auths\":{\"registry.airlock.invalid:5000\":{\"auth\":\""
                + other + "\"}},\"credHelpers\":{\"registry.airlock.invalid:5000\":\"airlocktest\"}}");
        Map<String, String> environment = Map.of("DOCKER_CONFIG", dir.toString(), "PATH", bin + ":/usr/bin:/bin");
        try (UnixSocketProxy proxy = new UnixSocketProxy(java.nio.file.Path.of("/var/run/docker.sock"))) {
            Settings settings = DockerFixture.settings(DockerSettings.HOST, proxy.url(),
                    DockerSettings.IMAGE, "registry.airlock.invalid:5000/team/tool:1", DockerSettings.PULL, "missing");
            DockerSettings s = DockerSettings.from(settings, environment);
            // the registry does not resolve: a registry that cannot be reached, after the pull was sent with its credentials
            dev.airlock.BackendUnavailableException e = assertThrows(dev.airlock.BackendUnavailableException.class,
                    () -> DockerBackend.open(dev.airlock.spi.OpenContext.of(settings), s));
            assertFalse(e.getMessage().contains("h3lper-s3cret"), e.getMessage());
            assertEquals("registry.airlock.invalid:5000", java.nio.file.Files.readString(bin.resolve("docker-credential-airlocktest.asked")));
            String head = proxy.heads().stream().filter(h -> h.contains("/images/create?")).findFirst().orElseThrow();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)X-Registry-Auth: *(\\S+)").matcher(head);
            assertTrue(m.find(), "the pull carries credentials");
            String json = new String(java.util.Base64.getUrlDecoder().decode(m.group(1).replace('+', '-').replace('/', '_')));
            assertTrue(json.contains("helper-user") && json.contains("h3lper-s3cret") && !json.contains("file-user"),
                    "the helper's credentials, not the file's");
        }
        // A helper that fails is one line naming it and what it said; one missing from PATH is named too.
        java.nio.file.Files.writeString(helper, "#!/bin/sh\necho 'keychain locked' >&2\nexit 1\n");
        Settings settings = DockerFixture.settings(DockerSettings.IMAGE, "registry.airlock.invalid:5000/team/tool:1",
                DockerSettings.PULL, "missing");
        ConfigurationException failed = assertThrows(ConfigurationException.class, () -> DockerBackend.open(
                dev.airlock.spi.OpenContext.of(settings), DockerSettings.from(settings, environment)));
        assertTrue(failed.getMessage().contains("docker-credential-airlocktest failed") && failed.getMessage().contains("keychain locked")
                && !failed.getMessage().contains("\n"), failed.getMessage());
        ConfigurationException missing = assertThrows(ConfigurationException.class, () -> DockerBackend.open(
                dev.airlock.spi.OpenContext.of(settings), DockerSettings.from(settings, Map.of("DOCKER_CONFIG", dir.toString(),
                        "PATH", "/usr/bin:/bin"))));
        assertTrue(missing.getMessage().contains("docker-credential-airlocktest is not on PATH"), missing.getMessage());
    }

    @Test
    void aMissingImageIsAConfigurationError() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Environments.open(DockerFixture.settings(DockerSettings.IMAGE, "airlock-test/absent:0")));
        assertTrue(e.getMessage().contains("airlock-test/absent:0") && e.getMessage().contains(DockerSettings.IMAGE), e.getMessage());
    }
}

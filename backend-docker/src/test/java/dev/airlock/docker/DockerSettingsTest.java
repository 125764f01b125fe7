package dev.airlock.docker;

import dev.airlock.ConfigurationException;
import dev.airlock.Environments;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Settings parsing and the errors that name the setting; needs no daemon. */
class DockerSettingsTest {

    @Test
    void theImageIsRequiredAndTheErrorNamesIt() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Environments.open(Settings.of("airlock.backend", "docker")));
        assertTrue(e.getMessage().contains("airlock.docker.image"), e.getMessage());
        assertTrue(e.getMessage().contains("AIRLOCK_DOCKER_IMAGE"), e.getMessage());
    }

    @Test
    void theHostComesFromTheSettingThenDockerHostThenTheLocalSocket() {
        assertEquals("unix:///var/run/docker.sock", DockerSettings.from(Settings.empty(), Map.of()).host().toString());
        assertEquals("tcp://127.0.0.1:2375", DockerSettings.from(Settings.empty(),
                Map.of("DOCKER_HOST", "tcp://127.0.0.1:2375")).host().toString());
        assertEquals("unix:///x.sock", DockerSettings.from(Settings.of(DockerSettings.HOST, "unix:///x.sock"),
                Map.of("DOCKER_HOST", "tcp://127.0.0.1:2375")).host().toString());
        // DOCKER_HOST is a native variable: above the config file and defaults.
        Settings fromDefaults = Settings.builder().defaults(Map.of(DockerSettings.HOST, "unix:///default.sock")).build();
        assertEquals("tcp://127.0.0.1:2375", DockerSettings.from(fromDefaults,
                Map.of("DOCKER_HOST", "tcp://127.0.0.1:2375")).host().toString());
        Settings mapped = Settings.builder().environment(Map.of("DOCKER_HOST", "unix:///mapped.sock"))
                .nativeVariable(DockerSettings.HOST, DockerSettings.DOCKER_HOST).build();
        assertEquals("unix:///mapped.sock", DockerSettings.from(mapped, Map.of()).host().toString());
    }

    /** A published port needs a network; docker's default without airlock.network is none, so the user is told to turn it on. */
    @Test
    void portsWithoutANetworkAreOneLineSayingToTurnItOn() {
        String expected = "airlock.ports=3000,8080 needs the container on a network to publish them, and its network is"
                + " none (docker's default while airlock.network is unset); set airlock.network=on";
        for (Settings s : new Settings[] {Settings.of("airlock.ports", "8080,3000"),
                Settings.of("airlock.ports", "8080,3000", "airlock.network", "off")}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> DockerSettings.from(s, Map.of()));
            assertEquals(expected, e.getMessage());
        }
        assertEquals(java.util.List.of(3000, 8080), java.util.List.copyOf(DockerSettings.from(
                Settings.of("airlock.ports", "8080,3000", "airlock.network", "on"), Map.of()).ports()));
        // An attached container publishes what it was created with: nothing to refuse here.
        assertEquals("none", DockerSettings.from(Settings.of("airlock.ports", "8080", DockerSettings.CONTAINER, "c1"), Map.of()).network());
    }

    @Test
    void aTcpHostWithoutAPortTakesDockersAsTheCliDoes() {
        assertEquals("tcp://box.example:2375", DockerSettings.from(Settings.empty(),
                Map.of("DOCKER_HOST", "tcp://box.example")).host().toString());
        assertEquals("tcp://[::1]:2375", DockerSettings.from(Settings.of(DockerSettings.HOST, "tcp://[::1]"), Map.of()).host().toString());
        assertEquals("tcp://box.example:2376", DockerSettings.withDefaultPort(java.net.URI.create("tcp://box.example"), true).toString());
        assertEquals("tcp://box.example:9999", DockerSettings.withDefaultPort(java.net.URI.create("tcp://box.example:9999"), true).toString());
    }

    @Test
    void aBadDockerHostIsReportedAsTheVariableItCameFrom() {
        Settings mapped = Settings.builder().environment(Map.of("DOCKER_HOST", "tcp:///no-host"))
                .nativeVariable(DockerSettings.HOST, DockerSettings.DOCKER_HOST).build();
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> DockerSettings.from(mapped, Map.of()));
        assertTrue(e.getMessage().startsWith("the environment variable DOCKER_HOST has invalid value 'tcp:///no-host'"), e.getMessage());
        assertTrue(!e.getMessage().contains(DockerSettings.HOST) && !e.getMessage().contains("\n"), e.getMessage());
        ConfigurationException unmapped = assertThrows(ConfigurationException.class,
                () -> DockerSettings.from(Settings.empty(), Map.of("DOCKER_HOST", "ftp://box")));
        assertTrue(unmapped.getMessage().startsWith("the environment variable DOCKER_HOST 'ftp://box' is not supported"), unmapped.getMessage());
    }

    @Test
    void anSshDaemonIsTakenAsTheDockerCliTakesItAndItsConfigFileChecked(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        DockerSettings s = DockerSettings.from(Settings.empty(), Map.of("DOCKER_HOST", "ssh://me@box:2222"));
        assertEquals(java.net.URI.create("ssh://me@box:2222"), s.host());
        assertEquals(java.util.List.of("-p", "2222", "--", "me@box"), SshDialer.sshArgs(s.host(), s.sshConfig()));
        java.nio.file.Path config = java.nio.file.Files.writeString(dir.resolve("config"), "Host box\n");
        DockerSettings withConfig = DockerSettings.from(Settings.of(DockerSettings.HOST, "ssh://box",
                DockerSettings.SSH_CONFIG, config.toString()), Map.of());
        assertEquals(java.util.List.of("-F", config.toString(), "--", "box"), SshDialer.sshArgs(withConfig.host(), withConfig.sshConfig()));
        assertNames(DockerSettings.SSH_CONFIG, Settings.of(DockerSettings.HOST, "ssh://box",
                DockerSettings.SSH_CONFIG, dir.resolve("missing").toString()));
        ConfigurationException path = assertThrows(ConfigurationException.class,
                () -> DockerSettings.from(Settings.empty(), Map.of("DOCKER_HOST", "ssh://me@box/var/run/docker.sock")));
        assertTrue(path.getMessage().startsWith("the environment variable DOCKER_HOST has invalid value 'ssh://me@box/var/run/docker.sock':"
                + " expected ssh://[USER@]HOST[:PORT]"), path.getMessage());
    }

    @Test
    void badValuesAreOneLineErrorsNamingTheSetting() {
        assertNames(DockerSettings.HOST, Settings.of(DockerSettings.HOST, "ssh://user@box/path"));
        assertNames(DockerSettings.HOST, Settings.of(DockerSettings.HOST, "tcp:///nohost"));
        assertNames(DockerSettings.VOLUMES, Settings.of(DockerSettings.VOLUMES, "/only-one-part"));
        assertNames(DockerSettings.CPUS, Settings.of(DockerSettings.CPUS, "lots"));
        assertNames(DockerSettings.PIDS_LIMIT, Settings.of(DockerSettings.PIDS_LIMIT, "2"));
        assertNames(DockerSettings.MEMORY, Settings.of(DockerSettings.MEMORY, "1k"));
        assertNames(DockerSettings.PULL, Settings.of(DockerSettings.PULL, "always-maybe"));
        assertNames(DockerSettings.ENV, Settings.of(DockerSettings.ENV + ".1BAD", "x"));
        assertNames(DockerSettings.LABELS, Settings.of(DockerSettings.LABELS + ".dev.airlock.keep", "true"));
        ConfigurationException tls = assertThrows(ConfigurationException.class, () -> DockerSettings.from(
                Settings.of(DockerSettings.HOST, "tcp://127.0.0.1:2376"),
                Map.of("DOCKER_TLS_VERIFY", "1", "DOCKER_CERT_PATH", "/nonexistent/certs")));
        assertTrue(tls.getMessage().contains("DOCKER_CERT_PATH") && tls.getMessage().contains("/nonexistent/certs")
                && tls.getMessage().contains("ca.pem, cert.pem, key.pem are missing"), tls.getMessage());
    }

    @Test
    void defaultsAreTheHardenedOnes() {
        DockerSettings s = DockerSettings.from(Settings.of(DockerSettings.IMAGE, "img", DockerSettings.VOLUMES, "/a:/b:ro,/c:/d"), Map.of());
        assertEquals("none", s.network());
        assertEquals(512, s.pidsLimit());
        assertEquals(2, s.volumes().size());
        assertTrue(s.pullMissing());
    }

    @Test
    void airlockNetworkPicksTheContainersNetworkUnlessDockersOwnSettingSaysOtherwise() {
        assertEquals("none", DockerSettings.from(Settings.of("airlock.network", "off"), Map.of()).network());
        assertEquals("bridge", DockerSettings.from(Settings.of("airlock.network", "on"), Map.of()).network());
        assertEquals("mynet", DockerSettings.from(Settings.of("airlock.network", "on", DockerSettings.NETWORK, "mynet"),
                Map.of()).network());
        assertEquals("none", DockerSettings.from(Settings.of("airlock.network", "off", DockerSettings.NETWORK, "none"),
                Map.of()).network());
    }

    @Test
    void offWithAnotherDockerNetworkIsOneLineConflict() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> DockerSettings.from(
                Settings.of("airlock.network", "off", DockerSettings.NETWORK, "bridge"), Map.of()));
        assertEquals("airlock.network=off and airlock.docker.network=bridge disagree: off means --network none;"
                + " remove one of them", e.getMessage());
    }

    @Test
    void anAllowlistWithARemoteDaemonIsRefusedBeforeAnyContainerIsMade() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(
                Settings.of("airlock.backend", "docker", DockerSettings.IMAGE, "img", DockerSettings.HOST, "tcp://192.0.2.1:2375",
                        "airlock.network", "allowlist", "airlock.network.allow.a", "10.0.0.0/8")));
        assertEquals("airlock.network=allowlist on docker needs the daemon on this machine, and tcp://192.0.2.1:2375 is"
                + " remote (the rules are written from the daemon's host into the container's network namespace); run"
                + " Airlock on that host with its unix:// socket, or use airlock.network=off", e.getMessage());
    }

    @Test
    void anImageWithoutATagMeansLatestAsInTheDockerCli() {
        assertEquals("python:latest", DockerSettings.from(Settings.of(DockerSettings.IMAGE, "python"), Map.of()).image().orElseThrow());
        assertEquals("python:3.12", DockerSettings.withDefaultTag("python:3.12"));
        assertEquals("localhost:5000/team/tool:latest", DockerSettings.withDefaultTag("localhost:5000/team/tool"));
        assertEquals("localhost:5000/team/tool:1", DockerSettings.withDefaultTag("localhost:5000/team/tool:1"));
        String digest = "busybox@sha256:" + "a".repeat(64);
        assertEquals(digest, DockerSettings.withDefaultTag(digest), "a digest is never given a tag");
        assertEquals(java.util.List.of("localhost:5000/team/tool", "latest"),
                java.util.List.of(DockerSettings.splitReference("localhost:5000/team/tool")));
        assertEquals(java.util.List.of("busybox", "sha256:" + "a".repeat(64)), java.util.List.of(DockerSettings.splitReference(digest)));
    }

    @Test
    void hardeningOptionsParseAndBadOnesNameTheirSetting() {
        DockerHardening h = DockerSettings.from(Settings.of(DockerHardening.TMPFS, "/tmp:size=64m,mode=1777,/run",
                DockerHardening.ULIMITS, "nofile=1024:2048,nproc=64", DockerHardening.SHM_SIZE, "256m"), Map.of()).hardening();
        assertEquals(Map.of("/tmp", "size=64m,mode=1777", "/run", ""), h.tmpfs());
        assertEquals(2048, ((Number) h.ulimits().get(0).getHard()).longValue());
        assertEquals(64, ((Number) h.ulimits().get(1).getSoft()).longValue());
        assertEquals(256L << 20, h.shmSize().getAsLong());
        assertEquals(Map.of("/tmp", "mode=1777"),
                DockerSettings.from(Settings.of(DockerHardening.READ_ONLY, "true"), Map.of()).hardening().tmpfs(),
                "a read-only root gets a writable /tmp");
        assertNames(DockerHardening.TMPFS, Settings.of(DockerHardening.TMPFS, "tmp"));
        assertNames(DockerHardening.ULIMITS, Settings.of(DockerHardening.ULIMITS, "files=10"));
        assertNames(DockerHardening.ULIMITS, Settings.of(DockerHardening.ULIMITS, "nofile=20:10"));
        assertNames(DockerHardening.STORAGE_SIZE, Settings.of(DockerHardening.STORAGE_SIZE, "big"));
        assertNames(DockerHardening.DEVICES, Settings.of(DockerHardening.DEVICES, "dev/null"));
        assertNames(DockerHardening.GPUS, Settings.of(DockerHardening.GPUS, "some"));
        assertNames(DockerHardening.PLATFORM, Settings.of(DockerHardening.PLATFORM, "amd64"));
    }

    /** A context as {@code docker context create NAME --docker host=HOST} stores it. */
    static void writeContext(java.nio.file.Path dockerConfig, String name, String host) throws Exception {
        String id = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(name.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        java.nio.file.Path meta = java.nio.file.Files.createDirectories(dockerConfig.resolve("contexts/meta").resolve(id));
        java.nio.file.Files.writeString(meta.resolve("meta.json"), "{\"Name\":\"" + name + "\",\"Metadata\":{},"
                + "\"Endpoints\":{\"docker\":{\"Host\":\"" + host + "\",\"SkipTLSVerify\":false}}}");
    }

    @Test
    void dockerContextAndTheCurrentContextNameTheDaemonAsInTheDockerCli(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        writeContext(dir, "remote", "tcp://10.0.0.5:2375");
        writeContext(dir, "other", "unix:///other.sock");
        String cfg = dir.toString();
        assertEquals("tcp://10.0.0.5:2375", DockerSettings.from(Settings.empty(),
                Map.of("DOCKER_CONFIG", cfg, "DOCKER_CONTEXT", "remote")).host().toString());
        assertEquals("unix:///x.sock", DockerSettings.from(Settings.empty(),
                Map.of("DOCKER_CONFIG", cfg, "DOCKER_CONTEXT", "remote", "DOCKER_HOST", "unix:///x.sock")).host().toString(),
                "DOCKER_HOST wins over a context, as in the CLI");
        assertEquals("unix:///var/run/docker.sock", DockerSettings.from(Settings.empty(),
                Map.of("DOCKER_CONFIG", cfg, "DOCKER_CONTEXT", "default")).host().toString());
        java.nio.file.Files.writeString(dir.resolve("config.json"), "{\"currentContext\":\"other\"}");
        assertEquals("unix:///other.sock", DockerSettings.from(Settings.empty(), Map.of("DOCKER_CONFIG", cfg)).host().toString());
        assertEquals("tcp://10.0.0.5:2375", DockerSettings.from(Settings.empty(),
                Map.of("DOCKER_CONFIG", cfg, "DOCKER_CONTEXT", "remote")).host().toString(), "DOCKER_CONTEXT over currentContext");
        ConfigurationException missing = assertThrows(ConfigurationException.class, () -> DockerSettings.from(Settings.empty(),
                Map.of("DOCKER_CONFIG", cfg, "DOCKER_CONTEXT", "nowhere")));
        assertTrue(missing.getMessage().contains("DOCKER_CONTEXT") && missing.getMessage().contains("nowhere")
                && !missing.getMessage().contains("\n"), missing.getMessage());
        writeContext(dir, "tls", "tcp://10.0.0.6:2376");
        java.nio.file.Files.createDirectories(dir.resolve("contexts/tls").resolve(java.util.HexFormat.of().formatHex(
                java.security.MessageDigest.getInstance("SHA-256").digest("tls".getBytes(java.nio.charset.StandardCharsets.UTF_8))))
                .resolve("docker"));
        // A context with TLS material uses it (here empty, so the one-line error names the context and the files).
        ConfigurationException tls = assertThrows(ConfigurationException.class, () -> DockerSettings.from(Settings.empty(),
                Map.of("DOCKER_CONFIG", cfg, "DOCKER_CONTEXT", "tls")));
        assertTrue(tls.getMessage().contains("Docker context 'tls'") && tls.getMessage().contains("ca.pem"), tls.getMessage());
        assertTrue(DockerSettings.from(Settings.of(DockerSettings.TLS_VERIFY, "false"),
                Map.of("DOCKER_CONFIG", cfg, "DOCKER_CONTEXT", "tls")).tls().isEmpty(), DockerSettings.TLS_VERIFY + "=false wins");
        assertTrue(DockerSettings.from(Settings.empty(), Map.of("DOCKER_HOST", "unix:///x.sock", "DOCKER_TLS_VERIFY", "1"))
                .tls().isEmpty(), "a unix socket never uses TLS, as in the CLI");
    }

    private static void assertNames(String key, Settings s) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> DockerSettings.from(s, Map.of()));
        assertTrue(e.getMessage().contains(key), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }
}

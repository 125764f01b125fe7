package dev.airlock.docker;

import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerConfigFile;
import dev.airlock.ConfigurationException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;

/**
 * The Docker CLI's own configuration, read as the CLI reads it: the directory
 * ({@code DOCKER_CONFIG}, else {@code ~/.docker}), whose {@code config.json} holds registry
 * credentials and the current context, and the contexts ({@code DOCKER_CONTEXT} first) that name
 * a daemon. Problems are one line naming the variable or file.
 */
final class DockerCliConfig {
    static final String DOCKER_CONFIG = "DOCKER_CONFIG";
    static final String DOCKER_CONTEXT = "DOCKER_CONTEXT";

    private DockerCliConfig() {
    }

    /** The configuration directory. */
    static Path dir(Map<String, String> environment) {
        String d = environment.getOrDefault(DOCKER_CONFIG, "");
        return d.isBlank() ? Path.of(System.getProperty("user.home"), ".docker") : Path.of(d);
    }

    /**
     * A context's daemon: its host, and the directory of its TLS material when the context has
     * some ({@code contexts/tls/ID/docker}, as {@code docker context create --docker ca=...,cert=...,key=...} stores it).
     */
    record Endpoint(String host, Optional<Path> tlsDir, String origin) {
    }

    /** The daemon of the context {@code DOCKER_CONTEXT} names; empty when unset or {@code default}. */
    static Optional<Endpoint> namedContext(Map<String, String> environment) {
        return context(dir(environment), environment.getOrDefault(DOCKER_CONTEXT, "").trim(), DOCKER_CONTEXT);
    }

    /** The daemon of config.json's {@code currentContext}; empty when unset or {@code default}. */
    static Optional<Endpoint> currentContext(Map<String, String> environment) {
        Path dir = dir(environment);
        return context(dir, currentContextName(dir), "currentContext in " + dir.resolve("config.json"));
    }

    private static Optional<Endpoint> context(Path dir, String name, String origin) {
        if (name == null || name.isEmpty() || name.equals("default")) {
            return Optional.empty();
        }
        String id = sha256(name);
        if (!Files.isRegularFile(dir.resolve("contexts").resolve("meta").resolve(id).resolve("meta.json"))) {
            throw new ConfigurationException("Docker context '" + name + "' (" + origin + ") is not in " + dir.resolve("contexts")
                    + ": list them with docker context ls, or unset it");
        }
        Path tls = dir.resolve("contexts").resolve("tls").resolve(id).resolve("docker");
        try {
            DefaultDockerClientConfig c = new DefaultDockerClientConfig.Builder().withDockerConfig(dir.toString())
                    .withDockerContext(name).build();
            return Optional.of(new Endpoint(c.getDockerHost().toString(), Files.isDirectory(tls) ? Optional.of(tls) : Optional.empty(),
                    "Docker context '" + name + "'"));
        } catch (RuntimeException e) {
            throw new ConfigurationException("cannot read Docker context '" + name + "' (" + origin + ") in "
                    + dir.resolve("contexts") + ": " + DockerDaemon.oneLine(String.valueOf(e.getMessage())));
        }
    }

    private static String currentContextName(Path dir) {
        if (!Files.isRegularFile(dir.resolve("config.json"))) {
            return null;
        }
        try {
            return DockerConfigFile.loadConfig(dir.toString()).getCurrentContext();
        } catch (IOException | RuntimeException e) {
            throw new ConfigurationException("cannot read " + dir.resolve("config.json") + ": "
                    + DockerDaemon.oneLine(String.valueOf(e.getMessage())) + "; fix it or set " + DOCKER_CONFIG);
        }
    }

    /** The CLI stores a context under the SHA-256 of its name. */
    private static String sha256(String name) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

package dev.airlock.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.model.AuthConfig;
import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Registry credentials from the Docker CLI's credential helpers, as {@code docker pull} gets them:
 * {@code credHelpers[REGISTRY]} in {@code config.json}, else {@code credsStore}, run as
 * {@code docker-credential-NAME get} with the registry's server URL on stdin. Plain {@code auths}
 * entries are docker-java's business; a configured helper wins over them, as with the CLI.
 * The secret the helper prints never reaches a log or an error message.
 */
final class CredentialHelpers {
    private static final Pattern HELPER_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final String DOCKER_HUB = "https://index.docker.io/v1/";
    private static final int MAX_OUTPUT = 64 * 1024;
    private static final ObjectMapper JSON = new ObjectMapper();

    private CredentialHelpers() {
    }

    /** The registry an image comes from, as the CLI decides it: a first part with a dot, a colon or {@code localhost}. */
    static String registry(String image) {
        int slash = image.indexOf('/');
        if (slash > 0) {
            String first = image.substring(0, slash);
            if (first.contains(".") || first.contains(":") || first.equals("localhost")) {
                return first;
            }
        }
        return "docker.io";
    }

    /** What the helper is asked for: Docker Hub's legacy URL, else the registry's host. */
    static String serverUrl(String registry) {
        return registry.equals("docker.io") ? DOCKER_HUB : registry;
    }

    /**
     * The credentials for {@code image}'s registry from a configured helper; empty when none is
     * configured or it holds none for that registry (an anonymous pull, as with the CLI).
     *
     * @param path the directories to find {@code docker-credential-NAME} in ({@code PATH})
     */
    static Optional<AuthConfig> lookup(Path dockerConfig, List<Path> path, String image, Duration timeout) {
        String registry = registry(image);
        Optional<String> helper = helperFor(dockerConfig.resolve("config.json"), registry);
        if (helper.isEmpty()) {
            return Optional.empty();
        }
        String program = "docker-credential-" + helper.get();
        Path exe = path.stream().map(d -> d.resolve(program)).filter(Files::isExecutable).findFirst()
                .orElseThrow(() -> new ConfigurationException("config.json in " + dockerConfig + " names the credential helper "
                        + helper.get() + " for " + registry + ", but " + program + " is not on PATH: install it, or remove it"
                        + " from credHelpers/credsStore"));
        return run(exe, program, serverUrl(registry), registry, timeout);
    }

    /** {@code credHelpers[registry]}, else {@code credsStore}; empty when neither is set. */
    private static Optional<String> helperFor(Path configJson, String registry) {
        if (!Files.isRegularFile(configJson)) {
            return Optional.empty();
        }
        JsonNode root;
        try {
            root = JSON.readTree(configJson.toFile());
        } catch (IOException e) {
            throw new ConfigurationException("cannot read " + configJson + ": " + DockerDaemon.oneLine(e.getMessage())
                    + "; fix it or set DOCKER_CONFIG");
        }
        JsonNode named = root.path("credHelpers").path(registry);
        String name = named.isTextual() ? named.asText() : root.path("credsStore").asText("");
        if (name.isEmpty()) {
            return Optional.empty();
        }
        if (!HELPER_NAME.matcher(name).matches()) {
            throw new ConfigurationException("config.json's credential helper name '" + name + "' for " + registry
                    + " is not a helper name (letters, digits, . _ -): fix " + configJson);
        }
        return Optional.of(name);
    }

    private static Optional<AuthConfig> run(Path exe, String program, String serverUrl, String registry, Duration timeout) {
        Process p;
        try {
            p = new ProcessBuilder(exe.toString(), "get").start();
        } catch (IOException e) {
            throw new ConfigurationException("cannot run " + program + ": " + e.getMessage());
        }
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readCapped(p.getInputStream()));
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readCapped(p.getErrorStream()));
        try (OutputStream in = p.getOutputStream()) {
            in.write(serverUrl.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // the helper did not read its input; its exit status says why
        }
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new BackendException(program + " did not answer for " + registry + " within " + timeout.toSeconds()
                        + "s; check it with: echo " + serverUrl + " | " + program + " get");
            }
            String stdout = new String(out.get(5, TimeUnit.SECONDS), StandardCharsets.UTF_8);
            String stderr = new String(err.get(5, TimeUnit.SECONDS), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                // The helpers' own wording for "nothing stored": an anonymous pull, as the CLI does.
                if ((stdout + stderr).toLowerCase(java.util.Locale.ROOT).contains("credentials not found")) {
                    return Optional.empty();
                }
                String why = firstLine(stderr.isBlank() ? "exit " + p.exitValue() : stderr);
                throw new ConfigurationException(program + " failed for " + registry + " (exit " + p.exitValue() + "): " + why
                        + "; fix the helper, or remove it from credHelpers/credsStore in config.json");
            }
            return Optional.of(parse(stdout, program, serverUrl));
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new BackendException("interrupted while asking " + program + " for credentials");
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            p.destroyForcibly();
            throw new BackendException("could not read the answer of " + program + " for " + registry);
        }
    }

    /** {@code {"ServerURL","Username","Secret"}}; a Username of {@code <token>} marks an identity token. */
    private static AuthConfig parse(String stdout, String program, String serverUrl) {
        JsonNode answer;
        try {
            answer = JSON.readTree(stdout);
        } catch (IOException e) {
            answer = null;
        }
        if (answer == null || !answer.path("Secret").isTextual()) {
            // Never the text itself: it may hold the secret.
            throw new ConfigurationException(program + " answered something other than its JSON credentials; check it with: echo "
                    + serverUrl + " | " + program + " get");
        }
        String user = answer.path("Username").asText("");
        String secret = answer.path("Secret").asText();
        AuthConfig auth = new AuthConfig().withRegistryAddress(serverUrl);
        return user.equals("<token>") ? auth.withIdentityToken(secret) : auth.withUsername(user).withPassword(secret);
    }

    private static byte[] readCapped(InputStream in) {
        try (in) {
            byte[] b = in.readNBytes(MAX_OUTPUT);
            in.transferTo(OutputStream.nullOutputStream());
            return b;
        } catch (IOException e) {
            return new byte[0];
        }
    }

    private static String firstLine(String s) {
        String t = s.strip();
        int nl = t.indexOf('\n');
        t = nl < 0 ? t : t.substring(0, nl);
        return t.length() > 200 ? t.substring(0, 200) + "..." : t;
    }
}

package dev.airlock.emulator.reference;

import dev.airlock.emulator.EmulatedSandbox;
import dev.airlock.emulator.Emulator;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.EmulatorHttpServer;
import dev.airlock.emulator.EmulatorHttpServer.Request;
import dev.airlock.emulator.EmulatorHttpServer.Response;
import dev.airlock.emulator.Jsons;
import dev.airlock.emulator.SandboxProcess;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The smallest REST sandbox service that uses every part of the emulator plumbing; the pattern
 * the Daytona and Vercel emulators follow (Modal's swaps the HTTP server for a gRPC one and keeps
 * the rest). Not a real service's API:
 *
 * <pre>
 * POST   /sandboxes?image=NAME              sandbox-create  201 {"id","image","state"}
 * GET    /sandboxes/{id}                    sandbox-get     200 {...} | 404
 * DELETE /sandboxes/{id}                    sandbox-delete  204 | 404   (stops it: no process left)
 * POST   /sandboxes/{id}/exec               exec            body = the command text; X-Exec-Id: the
 *        (X-Cwd, X-Env: NAME=VALUE...)                      dispatch key; answers NDJSON lines
 *                                                            {"stream","data"} then {"exitCode"}
 * PUT    /sandboxes/{id}/files?path=&amp;mode=  file-write      body = bytes; 204
 * GET    /sandboxes/{id}/files?path=        file-read       200 bytes | 404
 * </pre>
 */
final class ReferenceEmulator implements Emulator {
    private final EmulatorContext context;
    private final EmulatorHttpServer server;
    private final Map<String, EmulatedSandbox> sandboxes = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    ReferenceEmulator(EmulatorContext context) throws IOException {
        this.context = context;
        this.server = EmulatorHttpServer.builder()
                .faults(context.faults())
                .journal(context.journal())
                .route("POST", "/sandboxes", "sandbox-create", this::create)
                .route("GET", "/sandboxes/{id}", "sandbox-get", this::get)
                .route("DELETE", "/sandboxes/{id}", "sandbox-delete", this::delete)
                .route("POST", "/sandboxes/{id}/exec", "exec", this::exec)
                .route("PUT", "/sandboxes/{id}/files", "file-write", this::writeFile)
                .route("GET", "/sandboxes/{id}/files", "file-read", this::readFile)
                .start(context.listen());
    }

    @Override
    public URI url() {
        return server.url();
    }

    @Override
    public void close() {
        server.close();
        sandboxes.values().forEach(EmulatedSandbox::close);
        sandboxes.clear();
    }

    private void create(Request req, Response resp) throws IOException {
        String image = req.query("image").filter(s -> !s.isBlank()).orElse("debian:12");
        String id = "sb-" + ids.incrementAndGet();
        EmulatedSandbox sb = EmulatedSandbox.create(id, image, context.stateDir().resolve(id), "/root",
                context.isolation(), context.journal());
        sandboxes.put(id, sb);
        resp.json(201, describe(sb));
    }

    private void get(Request req, Response resp) throws IOException {
        Optional<EmulatedSandbox> sb = sandbox(req, resp);
        if (sb.isPresent()) {
            resp.json(200, describe(sb.get()));
        }
    }

    private void delete(Request req, Response resp) throws IOException {
        EmulatedSandbox sb = sandboxes.remove(req.param("id"));
        if (sb == null) {
            resp.error(404, "not_found", "no sandbox " + req.param("id"));
            return;
        }
        sb.close();
        resp.empty(204);
    }

    private void exec(Request req, Response resp) throws IOException {
        Optional<EmulatedSandbox> sb = sandbox(req, resp);
        if (sb.isEmpty()) {
            return;
        }
        Optional<String> key = req.header("X-Exec-Id").filter(k -> !k.isBlank());
        if (key.isEmpty()) {
            resp.error(400, "bad_request", "X-Exec-Id is required: it identifies the exec and is never reused");
            return;
        }
        String command = new String(req.bodyBytes(128 * 1024), StandardCharsets.UTF_8);
        if (command.indexOf('\0') >= 0) {
            resp.error(400, "bad_request", "the command contains a NUL byte, which no argv can carry");
            return;
        }
        Map<String, String> env = new LinkedHashMap<>();
        req.header("X-Env").ifPresent(h -> {
            for (String kv : h.split(",")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    env.put(kv.substring(0, eq).trim(), kv.substring(eq + 1));
                }
            }
        });
        SandboxProcess p = sb.get().exec(new EmulatedSandbox.Command("exec", List.of("sh", "-c", command),
                req.header("X-Cwd").orElse(sb.get().home()), env, key.get(), req.bodyBytesRead(), req.fault()));
        p.stdin().close();
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.stderr()));
        byte[] out = readAll(p.stdout());
        int code;
        try {
            code = p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        try (OutputStream o = resp.stream(200, "application/x-ndjson")) {
            lines(o, "stdout", out);
            lines(o, "stderr", err.join());
            o.write(("{\"exitCode\":" + code + "}\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    private void writeFile(Request req, Response resp) throws IOException {
        Optional<EmulatedSandbox> sb = sandbox(req, resp);
        Optional<String> path = req.query("path");
        if (sb.isEmpty()) {
            return;
        }
        if (path.isEmpty() || !path.get().startsWith("/")) {
            resp.error(400, "bad_request", "path must be an absolute path");
            return;
        }
        int mode = Integer.parseInt(req.query("mode").orElse("0644"), 8);
        sb.get().write(path.get(), req.body(), mode);
        resp.empty(204);
    }

    private void readFile(Request req, Response resp) throws IOException {
        Optional<EmulatedSandbox> sb = sandbox(req, resp);
        if (sb.isEmpty()) {
            return;
        }
        String path = req.query("path").orElse("");
        try (InputStream in = sb.get().read(path)) {
            try (OutputStream o = resp.stream(200, "application/octet-stream")) {
                in.transferTo(o);
            }
        } catch (NoSuchFileException | IllegalArgumentException e) {
            resp.error(404, "not_found", "no file " + path);
        }
    }

    private Optional<EmulatedSandbox> sandbox(Request req, Response resp) throws IOException {
        EmulatedSandbox sb = sandboxes.get(req.param("id"));
        if (sb == null) {
            resp.error(404, "not_found", "no sandbox " + req.param("id"));
        }
        return Optional.ofNullable(sb);
    }

    private static String describe(EmulatedSandbox sb) {
        return "{\"id\":" + Jsons.quote(sb.id()) + ",\"image\":" + Jsons.quote(sb.image()) + ",\"state\":"
                + Jsons.quote(sb.stopped() ? "stopped" : "started") + "}";
    }

    private static void lines(OutputStream o, String stream, byte[] data) throws IOException {
        String text = new String(data, StandardCharsets.UTF_8);
        for (String line : text.split("(?<=\n)")) {
            if (!line.isEmpty()) {
                o.write(("{\"stream\":" + Jsons.quote(stream) + ",\"data\":" + Jsons.quote(line) + "}\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    private static byte[] readAll(InputStream in) {
        try (in; ByteArrayOutputStream b = new ByteArrayOutputStream()) {
            in.transferTo(b);
            return b.toByteArray();
        } catch (IOException e) {
            return new byte[0];
        }
    }
}

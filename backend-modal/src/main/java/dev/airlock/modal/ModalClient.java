package dev.airlock.modal;

import dev.airlock.BackendException;
import dev.airlock.remote.Attempt;
import dev.airlock.remote.CallKind;
import dev.airlock.remote.RemoteCalls;
import dev.airlock.remote.Resource;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.remote.Service;
import dev.airlock.remote.WireFailure;
import dev.airlock.modal.proto.ModalClientGrpc;
import dev.airlock.modal.proto.AuthTokenGetRequest;
import dev.airlock.modal.proto.SandboxGetCommandRouterAccessRequest;
import dev.airlock.modal.proto.TaskGetCommandRouterAccessRequest;
import dev.airlock.modal.proto.router.TaskCommandRouterGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

import javax.net.ssl.SSLException;
import java.net.ConnectException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Modal's two gRPC services for one sandbox: the control plane (token headers, the auth token
 * from {@code AuthTokenGet} once fetched, an idempotency key per logical call) and the task's
 * command router (a bearer JWT, fetched again once on UNAUTHENTICATED or within 30 s of its
 * {@code exp}). Every call goes through {@link RemoteCalls}: grpc-java's own retries are off.
 */
final class ModalClient implements AutoCloseable {
    // Both variables named: a refused pair is as often a wrong secret as a wrong id.
    static final Service SERVICE = new Service("Modal", "MODAL_TOKEN_ID and MODAL_TOKEN_SECRET", ModalSettings.SERVER_URL);
    static final int MAX_MESSAGE = 100 * 1024 * 1024;
    private static final Metadata.Key<String> CLIENT_TYPE = key("x-modal-client-type");
    private static final Metadata.Key<String> CLIENT_VERSION = key("x-modal-client-version");
    private static final Metadata.Key<String> TOKEN_ID = key("x-modal-token-id");
    private static final Metadata.Key<String> TOKEN_SECRET = key("x-modal-token-secret");
    private static final Metadata.Key<String> AUTH_TOKEN = key("x-modal-auth-token");
    private static final Metadata.Key<String> IDEMPOTENCY = key(Attempt.IDEMPOTENCY_KEY_HEADER);
    private static final Metadata.Key<String> RETRY_ATTEMPT = key(Attempt.RETRY_ATTEMPT_HEADER);
    private static final Metadata.Key<String> AUTHORIZATION = key("authorization");
    private static final Pattern EXP = Pattern.compile("\"exp\"\\s*:\\s*(\\d+)");

    final ModalSettings settings;
    final RemoteCalls calls;
    private final ManagedChannel control;
    private volatile String authToken;
    private volatile long authExp;
    private ManagedChannel router;
    private URI routerUrl;
    private volatile String routerJwt;
    private volatile long routerExp;
    private volatile String sandboxId;
    private volatile boolean v2;
    private volatile String taskId;

    ModalClient(ModalSettings settings, RetryPolicy policy) {
        this.settings = settings;
        this.calls = new RemoteCalls(SERVICE, policy);
        this.control = channel(settings.serverUrl().getHost(), settings.port(), settings.plaintext());
    }

    private static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }

    private ManagedChannel channel(String host, int port, boolean plaintext) {
        NettyChannelBuilder b = NettyChannelBuilder.forAddress(host, port)
                .disableRetry() // RemoteCalls owns retries
                .maxInboundMessageSize(MAX_MESSAGE)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS);
        if (plaintext) {
            b.usePlaintext();
        } else if (settings.caFile().isPresent()) {
            try {
                b.sslContext(GrpcSslContexts.forClient().trustManager(settings.caFile().get().toFile()).build());
            } catch (SSLException | IllegalArgumentException e) {
                throw new dev.airlock.ConfigurationException(ModalSettings.CA_FILE + " " + settings.caFile().get()
                        + " is not a usable PEM certificate: " + e.getMessage());
            }
        }
        return b.build();
    }

    // ---------------------------------------------------------------- control plane

    /** One idempotent control-plane call: the same x-idempotency-key on every attempt. */
    <T> T control(String name, Resource resource, Function<ModalClientGrpc.ModalClientBlockingStub, T> call) {
        return calls.call(CallKind.KEYED, name, resource, (Attempt a) -> {
            try {
                return call.apply(controlStub(a));
            } catch (StatusRuntimeException e) {
                throw wire(e);
            }
        });
    }

    ModalClientGrpc.ModalClientBlockingStub controlStub(Attempt a) {
        Metadata h = new Metadata();
        h.put(CLIENT_TYPE, "8"); // Modal defines no Java client type; the JS SDK's is the protocol Airlock follows
        h.put(CLIENT_VERSION, "1.0.0");
        h.put(TOKEN_ID, settings.tokenId().reveal());
        h.put(TOKEN_SECRET, settings.tokenSecret().reveal());
        String auth = authToken;
        if (auth != null) {
            h.put(AUTH_TOKEN, auth);
        }
        if (a != null) {
            h.put(IDEMPOTENCY, a.idempotencyKey());
            h.put(RETRY_ATTEMPT, Integer.toString(a.retries()));
        }
        Channel ch = ClientInterceptors.intercept(control, headers(h));
        return ModalClientGrpc.newBlockingStub(ch).withDeadlineAfter(settings.apiTimeout().toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Fetches the auth token the current SDKs attach to every control call (refreshed when near its exp). */
    void authenticate() {
        authenticate(false);
    }

    /**
     * The same; with {@code useKept}, a token another environment of this JVM fetched for the same
     * server and token pair serves too ({@link ModalLookups} says when that is safe: only where a
     * refusal is caught and asked again).
     */
    void authenticate(boolean useKept) {
        long now = Instant.now().getEpochSecond();
        if (authToken != null && now < authExp - 300) {
            return;
        }
        java.util.Optional<String> kept = useKept ? ModalLookups.token(settings, now, 300) : java.util.Optional.empty();
        if (kept.isPresent()) {
            authExp = exp(kept.get()).orElse(now + 3600);
            authToken = kept.get();
            return;
        }
        String t = control("AuthTokenGet", Resource.none(), s -> s.authTokenGet(AuthTokenGetRequest.getDefaultInstance()).getToken());
        if (t.isBlank()) {
            throw new BackendException("Modal's AuthTokenGet returned no token");
        }
        authExp = exp(t).orElse(now + 3600);
        authToken = t;
        ModalLookups.keepToken(settings, t, authExp);
    }

    /** Drops the auth token this client holds, so the next {@link #authenticate} asks the service again. */
    void forgetToken() {
        authToken = null;
    }

    // ---------------------------------------------------------------- router

    /**
     * Points the router calls at this sandbox's task, with access already at hand (SandboxCreateV2
     * gives it); {@code v2} is the sandbox's family, whose RPC fetches the access again.
     */
    synchronized void routeTo(String sandboxId, boolean v2, String taskId, String jwt, String url) {
        this.sandboxId = sandboxId;
        this.v2 = v2;
        this.taskId = taskId;
        if (jwt != null && !jwt.isBlank()) {
            useAccess(jwt, url);
        }
    }

    String taskId() {
        return taskId;
    }

    private synchronized void refreshAccess() {
        String jwt;
        String url;
        if (v2) {
            var r = control("SandboxGetCommandRouterAccess", Resource.sandbox(sandboxId),
                    s -> s.sandboxGetCommandRouterAccess(SandboxGetCommandRouterAccessRequest.newBuilder()
                            .setSandboxId(sandboxId).setTaskId(taskId).build()));
            jwt = r.getJwt();
            url = r.getUrl();
        } else {
            var r = control("TaskGetCommandRouterAccess", Resource.sandbox(sandboxId),
                    s -> s.taskGetCommandRouterAccess(TaskGetCommandRouterAccessRequest.newBuilder().setTaskId(taskId).build()));
            jwt = r.getJwt();
            url = r.getUrl();
        }
        useAccess(jwt, url);
    }

    private synchronized void useAccess(String jwt, String url) {
        URI u = URI.create(url);
        if (!"https".equals(u.getScheme()) || u.getHost() == null) {
            throw new BackendException("Modal gave a command router URL that is not https://HOST:PORT");
        }
        if (router == null || !u.equals(routerUrl)) {
            if (router != null) {
                router.shutdownNow();
            }
            // The SDKs' rule: plaintext to the router only when the control plane is on loopback.
            router = channel(u.getHost(), u.getPort() > 0 ? u.getPort() : 443, settings.loopback());
            routerUrl = u;
        }
        routerExp = exp(jwt).orElse(Long.MAX_VALUE);
        routerJwt = jwt;
    }

    /** A router stub with a live JWT (fetched again when missing or within 30 s of its exp). */
    TaskCommandRouterGrpc.TaskCommandRouterBlockingStub router(long deadlineMillis) {
        if (routerJwt == null || Instant.now().getEpochSecond() > routerExp - 30) {
            refreshAccess();
        }
        Metadata h = new Metadata();
        h.put(AUTHORIZATION, "Bearer " + routerJwt);
        ManagedChannel ch;
        synchronized (this) {
            ch = router;
        }
        var stub = TaskCommandRouterGrpc.newBlockingStub(ClientInterceptors.intercept(ch, headers(h)));
        return deadlineMillis > 0 ? stub.withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS) : stub;
    }

    /**
     * A router call; on UNAUTHENTICATED the access is fetched once more and the call made again
     * (the router refused it before doing anything, so this is never a second start).
     */
    <T> T routed(long deadlineMillis, Function<TaskCommandRouterGrpc.TaskCommandRouterBlockingStub, T> call) {
        try {
            return call.apply(router(deadlineMillis));
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.UNAUTHENTICATED) {
                throw e;
            }
            refreshAccess();
            return call.apply(router(deadlineMillis));
        }
    }

    /**
     * An idempotent call bounded by {@code deadline}: each attempt gets what is left of it as its
     * gRPC deadline ({@code call} receives the milliseconds), and once it has passed no attempt is
     * made or retried: an {@link java.io.IOException} saying {@code what} was not done in time.
     */
    <T> T bounded(CallKind kind, String name, Resource resource, dev.airlock.spi.Deadline deadline, String what,
                  java.util.function.BiFunction<Attempt, Long, T> call) throws java.io.IOException {
        try {
            return calls.call(kind, name, resource, (Attempt a) -> {
                long left = deadline.remaining().toMillis();
                if (left <= 0) {
                    throw new OutOfTime();
                }
                try {
                    return call.apply(a, left);
                } catch (StatusRuntimeException e) {
                    if (deadline.passed()) {
                        throw new OutOfTime();
                    }
                    throw wire(e);
                }
            });
        } catch (OutOfTime e) {
            throw new java.io.IOException("Modal did not " + what + " in time (" + name + ")");
        }
    }

    /** The deadline of a {@link #bounded} call passed: never retried (it is no {@link WireFailure}). */
    private static final class OutOfTime extends RuntimeException {
        OutOfTime() {
            super(null, null, false, false);
        }
    }

    // ---------------------------------------------------------------- helpers

    static WireFailure wire(StatusRuntimeException e) {
        Status s = e.getStatus();
        String detail = s.getDescription() == null ? s.getCode().name() : s.getDescription();
        if (s.getCode() == Status.Code.UNAVAILABLE && causedBy(e, ConnectException.class)) {
            return WireFailure.grpcNotSent(detail);
        }
        return WireFailure.grpc(s.getCode().name(), detail, Optional.empty());
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    /** The {@code exp} claim of a JWT, read without checking the signature (the service checks it). */
    static Optional<Long> exp(String jwt) {
        String[] p = jwt.split("\\.");
        if (p.length < 2) {
            return Optional.empty();
        }
        try {
            Matcher m = EXP.matcher(new String(Base64.getUrlDecoder().decode(p[1]), StandardCharsets.UTF_8));
            return m.find() ? Optional.of(Long.parseLong(m.group(1))) : Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static ClientInterceptor headers(Metadata extra) {
        return new ClientInterceptor() {
            @Override
            public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
                return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<A> listener, Metadata headers) {
                        headers.merge(extra);
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    @Override
    public synchronized void close() {
        control.shutdownNow();
        if (router != null) {
            router.shutdownNow();
        }
    }
}

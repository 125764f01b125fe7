package dev.airlock.modal.emulator;

import dev.airlock.emulator.Emulator;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.EmulatorCredentials;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.util.TransmitStatusRuntimeExceptionInterceptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.util.Optional;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A Modal emulator that Modal's own SDKs cannot tell from the service for what Airlock and the
 * SDK's sandbox API use: one plaintext gRPC server on loopback serving both
 * {@code modal.client.ModalClient} (V1 and V2 sandbox families, auth token, app, environment,
 * image) and {@code modal.task_command_router.TaskCommandRouter} (exec start, stdin by offset,
 * stdio read, wait, poll). The router URL it hands out is {@code https://HOST:PORT} on the same
 * port: the official SDKs speak plaintext to a router when the control plane is on loopback.
 *
 * <p>Credentials: {@code MODAL_TOKEN_ID} and {@code MODAL_TOKEN_SECRET} from the emulator's
 * environment ({@link EmulatorContext#environment()}), each made at start when unset; control
 * calls with any other pair are refused UNAUTHENTICATED ({@link #credentials()}).
 *
 * <p>Settings: {@code airlock.modal.emulator.jwt-ttl} (seconds a
 * router JWT lives, default 3600), {@code airlock.modal.emulator.sandbox-timeout} (default
 * sandbox lifetime in seconds when the request leaves it 0, default 300), {@link #TLS} (serve the
 * control plane over TLS with a generated certificate; the router then has a plaintext port of its own),
 * {@code airlock.modal.emulator.rate-limit.sandbox-create=N/SECONDS} (the sandbox creation rate,
 * default 150 per 30 s, {@link SandboxCreationRate}).
 */
public final class ModalEmulator implements Emulator {
    /** The most bytes of argv {@code TaskExecStart} accepts, as the service. */
    public static final int MAX_ARGV_BYTES = 65_536;
    /** The largest stdin chunk the router takes in one message. */
    public static final int MAX_STDIN_CHUNK = 16 * 1024 * 1024;
    /** The service's message limit both ways. */
    public static final int MAX_MESSAGE = 100 * 1024 * 1024;

    /** The service's variables for the token pair this emulator accepts. */
    public static final String TOKEN_ID_VARIABLE = "MODAL_TOKEN_ID";
    public static final String TOKEN_SECRET_VARIABLE = "MODAL_TOKEN_SECRET";

    private final EmulatorCredentials credentials;
    private final Server server;
    private final ModalState state;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "modal-emulator");
        t.setDaemon(true);
        return t;
    });
    private final URI url;
    private final Server routerServer;
    private final Path caFile;

    /** {@code airlock.modal.emulator.tls=true}: TLS with a certificate made at start (see {@link #caFile()}). */
    public static final String TLS = "airlock.modal.emulator.tls";

    public ModalEmulator(EmulatorContext context) throws IOException {
        Jwt jwt = new Jwt();
        String host = context.listen().getAddress().getHostAddress();
        this.state = new ModalState(context, jwt,
                Duration.ofSeconds(context.settings().getInt("airlock.modal.emulator.jwt-ttl", 3600)),
                context.settings().getInt("airlock.modal.emulator.sandbox-timeout", 300));
        this.credentials = EmulatorCredentials.from(context.environment()).variable(TOKEN_ID_VARIABLE, "ak-")
                .variable(TOKEN_SECRET_VARIABLE, "as-").build();
        CallGuard guard = new CallGuard(context.faults(), context.journal(), jwt, credentials);
        boolean tls = context.settings().getBoolean(TLS, false);
        InetSocketAddress address = new InetSocketAddress(context.listen().getAddress(), context.listen().getPort());
        String h = host.contains(":") ? "[" + host + "]" : host;
        if (tls) {
            SelfSignedTls cert = SelfSignedTls.create(context.stateDir());
            this.caFile = cert.caFile;
            this.server = serve(NettyServerBuilder.forAddress(address, cert.credentials), state, guard, true);
            // The official SDKs dial the router without TLS when the control plane is on loopback,
            // so in TLS mode the router gets a plaintext port of its own (as a client expects).
            this.routerServer = serve(NettyServerBuilder.forAddress(new InetSocketAddress(context.listen().getAddress(), 0)),
                    state, guard, false);
            this.url = URI.create("https://" + h + ":" + server.getPort());
            state.routerUrl("https://" + h + ":" + routerServer.getPort());
        } else {
            this.caFile = null;
            this.server = serve(NettyServerBuilder.forAddress(address), state, guard, true);
            this.routerServer = null;
            this.url = URI.create("http://" + h + ":" + server.getPort());
            state.routerUrl("https://" + h + ":" + server.getPort());
        }
    }

    /** One gRPC server: the control plane (when {@code control}) and the router, behind the call guard. */
    private Server serve(NettyServerBuilder b, ModalState state, CallGuard guard, boolean control) throws IOException {
        b.executor(executor)
                .maxInboundMessageSize(MAX_MESSAGE)
                .permitKeepAliveTime(5, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true);
        // Handlers refuse by throwing a Status; the transmit interceptor turns that into the call's status (not UNKNOWN).
        if (control) {
            b.addService(ServerInterceptors.intercept(new ControlPlane(state), TransmitStatusRuntimeExceptionInterceptor.instance(), guard));
        }
        b.addService(ServerInterceptors.intercept(new Router(state), TransmitStatusRuntimeExceptionInterceptor.instance(), guard));
        return b.build().start();
    }

    @Override
    public EmulatorCredentials credentials() {
        return credentials;
    }

    @Override
    public Optional<Path> caFile() {
        return Optional.ofNullable(caFile);
    }

    @Override
    public URI url() {
        return url;
    }

    /** How many sandboxes one SandboxList page holds here (small, so clients' paging is exercised). */
    public static final int LIST_PAGE = ModalState.LIST_PAGE;

    /** The {@code last_entry_id} of every ImageJoinStreaming call so far, in order. */
    public java.util.List<String> imageJoinsFrom() {
        return java.util.List.copyOf(state.imageBuild.joinsFrom());
    }

    /** The builder version of every ImageGetOrCreate call so far, in order. */
    public java.util.List<String> builderVersionsAsked() {
        return java.util.List.copyOf(state.builderVersionsAsked);
    }

    /** Whether the create of this sandbox blocked its network (block_network, or a BLOCKED network_access). */
    public boolean networkBlocked(String sandboxId) {
        return state.sandbox(sandboxId).networkBlocked;
    }

    /** The network access the create of this sandbox asked for, allowlists included. */
    public dev.airlock.modal.proto.NetworkAccess networkAccess(String sandboxId) {
        return state.sandbox(sandboxId).networkAccess;
    }

    /** Sandboxes that exist and are not terminated (for tests: none may be left behind). */
    public int liveSandboxes() {
        return state.live();
    }

    @Override
    public void close() {
        if (routerServer != null) {
            routerServer.shutdownNow();
        }
        server.shutdownNow();
        try {
            server.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        state.close();
        executor.shutdownNow();
    }
}

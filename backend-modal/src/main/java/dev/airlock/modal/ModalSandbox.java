package dev.airlock.modal;

import dev.airlock.BackendException;
import dev.airlock.NetworkMode;
import dev.airlock.remote.Resource;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.modal.proto.*;
import dev.airlock.modal.proto.router.TaskExecStartRequest;
import io.grpc.StatusRuntimeException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * One Modal sandbox through its life: created (app, image from a registry tag, sandbox, task,
 * router access) or attached by id, execs started with a client exec id, and terminated exactly
 * once unless attached.
 */
final class ModalSandbox implements AutoCloseable {
    /** The SDKs' rule: {@code sb-} and 22 alphanumerics is a V1 sandbox, anything else V2. */
    private static final Pattern V1_ID = Pattern.compile("sb-[A-Za-z0-9]{22}");

    private final ModalClient client;
    private final String sandboxId;
    private final boolean attached;
    private final boolean v2;
    private final AtomicBoolean terminated = new AtomicBoolean();

    private ModalSandbox(ModalClient client, String sandboxId, boolean attached, boolean v2) {
        this.client = client;
        this.sandboxId = sandboxId;
        this.attached = attached;
        this.v2 = v2;
    }

    /** Whether {@code sandboxId} names a V2 sandbox, by its shape (as the official SDKs tell). */
    static boolean isV2(String sandboxId) {
        return !V1_ID.matcher(sandboxId).matches();
    }

    String id() {
        return sandboxId;
    }

    boolean attached() {
        return attached;
    }

    boolean v2() {
        return v2;
    }

    /**
     * Runs {@code script} under {@code sh} to its end, waiting at most the API timeout for its exit
     * (past it the caller terminates the sandbox); a failure or non-zero exit is one line naming {@code what}.
     */
    void run(String script, String what) {
        long bound = client.settings.apiTimeout().toMillis();
        ModalProcess p;
        try {
            p = exec(List.of("sh", "-c", script), Map.of());
            p.writeStdin(0, new byte[0], 0, true, dev.airlock.spi.Deadline.in(client.settings.apiTimeout()));
        } catch (IOException e) {
            throw new BackendException("could not " + what + " in Modal sandbox " + sandboxId + ": " + e.getMessage(), e);
        }
        java.util.concurrent.CompletableFuture<Integer> exit = new java.util.concurrent.CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                exit.complete(p.waitFor());
            } catch (InterruptedException e) {
                exit.complete(-1);
            }
        }, "airlock-modal-run-" + sandboxId);
        waiter.setDaemon(true);
        waiter.start();
        int status;
        try {
            status = exit.get(bound, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            waiter.interrupt();
            throw new BackendException("could not " + what + " in Modal sandbox " + sandboxId + " within " + bound + " ms");
        } catch (InterruptedException e) {
            waiter.interrupt();
            Thread.currentThread().interrupt();
            throw new BackendException("interrupted while trying to " + what + " in Modal sandbox " + sandboxId);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new BackendException("could not " + what + " in Modal sandbox " + sandboxId + ": " + e.getCause().getMessage());
        }
        if (status != 0) {
            throw new BackendException("could not " + what + " in Modal sandbox " + sandboxId + " (exit " + status + ")");
        }
    }

    /**
     * The image builder version of the environment, as the official SDK asks for it
     * ({@code EnvironmentGetOrCreate}): an environment-scoped setting of the service, which says
     * how images build there; a version of our own could build a different image, or be refused.
     */
    private static String builderVersion(ModalClient client) {
        return client.control("EnvironmentGetOrCreate", Resource.none(), st -> st.environmentGetOrCreate(
                        EnvironmentGetOrCreateRequest.newBuilder().setDeploymentName(client.settings.environment()).build()))
                .getMetadata().getSettings().getImageBuilderVersion();
    }

    /** Creates a sandbox (V2 family by default, V1 with {@code airlock.modal.sandbox-family=v1}) and waits for its task. */
    static ModalSandbox create(ModalClient client, boolean kept) {
        return create(client, ResourceLabels.now(kept));
    }

    /** The same, tagged with the given labels (a test makes what a process that died left). */
    static ModalSandbox create(ModalClient client, ResourceLabels labels) {
        ModalSettings s = client.settings;
        java.util.Optional<ModalLookups.Found> kept = ModalLookups.found(s);
        if (kept.isPresent()) {
            client.authenticate(true);
            try {
                return create(client, labels, kept.get(), true);
            } catch (StaleLookup e) {
                // The create was refused before anything was made: what this JVM kept may be stale; ask again, once.
                ModalLookups.forget(s);
                client.forgetToken();
            }
        }
        client.authenticate();
        String app = client.control("AppGetOrCreate", Resource.none(), st -> st.appGetOrCreate(AppGetOrCreateRequest.newBuilder()
                .setAppName(s.app()).setEnvironmentName(s.environment()).setObjectCreationType(1).build())).getAppId();
        String imageId = s.snapshot().isPresent() ? ModalSnapshots.image(client, s.snapshot().get()) : image(client, app);
        ModalLookups.Found found = new ModalLookups.Found(app, imageId);
        ModalSandbox sb = create(client, labels, found, false);
        ModalLookups.keep(s, found);
        return sb;
    }

    /** A create with kept lookups that the service refused as {@link ModalLookups#refusedAsStale}: nothing was made. */
    private static final class StaleLookup extends RuntimeException {
        StaleLookup(RuntimeException refused) {
            super(refused.getMessage(), refused, false, false);
        }
    }

    /**
     * The create itself, in the app and of the image {@code found} names; with {@code reused} (they
     * were kept from an earlier open), a refusal that may mean they are stale is a {@link StaleLookup}.
     */
    private static ModalSandbox create(ModalClient client, ResourceLabels labels, ModalLookups.Found found, boolean reused) {
        ModalSettings s = client.settings;
        String app = found.app();
        String imageId = found.image();
        Sandbox.Builder def = Sandbox.newBuilder().setImageId(imageId)
                // No entrypoint: the service's default keeps the sandbox up until its timeout or a terminate.
                .setResources(Resources.newBuilder().setMilliCpu(s.milliCpu()).setMemoryMb(s.memoryMb()))
                .setTimeoutSecs((int) s.sandboxTimeout().toSeconds())
                // airlock.network=off: blocked both ways the service reads it (the SDKs set both);
                // allowlist: ranges and domains as the SDK's outbound allowlists send them (type ALLOWLIST).
                .setBlockNetwork(s.network() == NetworkMode.OFF)
                .setNetworkAccess(NetworkAccess.newBuilder()
                        .setNetworkAccessType(switch (s.network()) {
                            case ON -> 1;
                            case OFF -> 2;
                            case ALLOWLIST -> 3;
                        })
                        .addAllAllowedCidrs(s.allowed().stream().filter(e -> e.cidr()).map(e -> e.destination()).toList())
                        .addAllAllowedDomains(s.allowed().stream().filter(e -> !e.cidr()).map(e -> e.destination()).toList()))
                .setEnvironmentVariables(StringMap.newBuilder().putAllContents(s.env()));
        s.workdir().ifPresent(def::setWorkdir);
        if (!s.ports().isEmpty()) {
            def.setOpenPorts(ModalTunnels.declare(s.ports()));
        }
        // Tagged in the create call itself, so no sandbox of ours ever exists untagged for gc to miss.
        List<SandboxTag> tags = new ArrayList<>(ModalGc.tags(labels));
        // And the snapshot it is made from: gc keeps a snapshot while a sandbox made from it runs.
        s.snapshot().ifPresent(from -> tags.add(SandboxTag.newBuilder().setTagName(ModalSnapshotGc.FROM_SNAPSHOT).setTagValue(from).build()));
        String id;
        if (s.v2()) {
            SandboxCreateV2Response r = refusedStale(reused, () -> RateLimitedCreate.send(client.calls.policy(), () -> client.control(
                    "SandboxCreateV2", Resource.none(), st -> st.sandboxCreateV2(
                            SandboxCreateV2Request.newBuilder().setAppId(app).setDefinition(def).addAllTags(tags).build()))));
            id = r.getSandboxId();
            if (r.hasTaskId() && r.hasCommandRouterAccess()) {
                client.routeTo(id, true, r.getTaskId(), r.getCommandRouterAccess().getJwt(), r.getCommandRouterAccess().getUrl());
                return new ModalSandbox(client, id, false, true);
            }
        } else {
            id = refusedStale(reused, () -> RateLimitedCreate.send(client.calls.policy(), () -> client.control("SandboxCreate", Resource.none(),
                    st -> st.sandboxCreate(SandboxCreateRequest.newBuilder().setAppId(app).setDefinition(def)
                            .setEnvironmentName(s.environment()).addAllTags(tags).build())))).getSandboxId();
        }
        ModalSandbox sb = new ModalSandbox(client, id, false, s.v2());
        try {
            sb.awaitTask();
        } catch (RuntimeException e) {
            sb.close();
            throw e;
        }
        return sb;
    }

    /** The create call's answer; with {@code reused} lookups, a refusal that may mean they are stale is a {@link StaleLookup}. */
    private static <T> T refusedStale(boolean reused, java.util.function.Supplier<T> create) {
        try {
            return create.get();
        } catch (RuntimeException e) {
            if (reused && ModalLookups.refusedAsStale(e)) {
                throw new StaleLookup(e);
            }
            throw e;
        }
    }

    /** The image of the {@code airlock.modal.image} tag, built (or found built) in the app, as the SDKs ask for it. */
    private static String image(ModalClient client, String app) {
        ModalSettings s = client.settings;
        String builder = s.imageBuilderVersion().orElseGet(() -> builderVersion(client));
        ImageGetOrCreateResponse img = client.control("ImageGetOrCreate", Resource.none(), st -> st.imageGetOrCreate(
                ImageGetOrCreateRequest.newBuilder().setAppId(app)
                        .setImage(Image.newBuilder().addDockerfileCommands("FROM " + s.image())).setBuilderVersion(builder).build()));
        if (!img.hasResult() || img.getResult().getStatus() == 0) {
            joinImage(client, img.getImageId());
        } else if (img.getResult().getStatus() != 1) {
            throw new BackendException("Modal could not build the image " + s.image() + ": " + img.getResult().getException());
        }
        return img.getImageId();
    }

    /**
     * Attaches to a running sandbox by id, in the family its id's shape names (so a sandbox made
     * with {@code sandbox-family=v1} is found without that setting); never terminated by this process.
     */
    static ModalSandbox attach(ModalClient client, String sandboxId) {
        client.authenticate();
        ModalSandbox sb = new ModalSandbox(client, sandboxId, true, isV2(sandboxId));
        sb.awaitTask();
        return sb;
    }

    /**
     * Follows an image build to its result: each join streams build entries from the last one
     * seen (so a stream that ends or is cut resumes where it stopped, as the SDKs do) until an
     * entry carries a result.
     */
    private static void joinImage(ModalClient client, String imageId) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
        java.util.concurrent.atomic.AtomicReference<String> last = new java.util.concurrent.atomic.AtomicReference<>("");
        while (System.nanoTime() < deadline) {
            GenericResult r = client.control("ImageJoinStreaming", Resource.none(), st -> {
                Iterator<ImageJoinStreamingResponse> it = st.withDeadlineAfter(60, TimeUnit.SECONDS).imageJoinStreaming(
                        ImageJoinStreamingRequest.newBuilder().setImageId(imageId).setTimeout(55).setLastEntryId(last.get()).build());
                while (it.hasNext()) {
                    ImageJoinStreamingResponse m = it.next();
                    if (!m.getEntryId().isEmpty()) {
                        last.set(m.getEntryId());
                    }
                    if (m.hasResult() && m.getResult().getStatus() != 0) {
                        return m.getResult();
                    }
                }
                return null;
            });
            if (r != null) {
                if (r.getStatus() != 1) {
                    throw new BackendException("Modal could not build the image: " + r.getException());
                }
                return;
            }
        }
        throw new BackendException("Modal did not finish building the image within 30 minutes");
    }

    /** Polls for the task every 500 ms, as the SDKs do, then fetches the router access. */
    private void awaitTask() {
        long deadline = System.nanoTime() + client.settings.apiTimeout().toNanos() * 5;
        while (true) {
            SandboxGetTaskIdResponse r = taskState();
            if (r.hasTaskResult() && r.getTaskResult().getStatus() != 0) {
                throw ended(r);
            }
            if (r.hasTaskId() && !r.getTaskId().isBlank()) {
                client.routeTo(sandboxId, v2, r.getTaskId(), null, null);
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new BackendException("Modal sandbox " + sandboxId + " got no task in time");
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BackendException("interrupted while waiting for Modal sandbox " + sandboxId);
            }
        }
    }

    /** The sandbox's task as the service reports it: its id once it runs, its result once it ended. */
    private SandboxGetTaskIdResponse taskState() {
        return client.control(v2 ? "SandboxGetTaskIdV2" : "SandboxGetTaskId", Resource.sandbox(sandboxId), st -> {
            SandboxGetTaskIdRequest q = SandboxGetTaskIdRequest.newBuilder().setSandboxId(sandboxId).build();
            return v2 ? st.sandboxGetTaskIdV2(q) : st.sandboxGetTaskId(q);
        });
    }

    private dev.airlock.BackendUnavailableException ended(SandboxGetTaskIdResponse r) {
        String why = r.getTaskResult().getException();
        return new dev.airlock.BackendUnavailableException("the Modal sandbox " + sandboxId + " has ended"
                + (why.isBlank() ? "" : " (" + why.strip().replace('\n', ' ') + ")")
                + (attached ? "; make a new one with 'airlock --backend modal up --ttl DURATION' and attach to that" : ""));
    }

    /**
     * Why {@code refused} happened, when it is that the sandbox has ended (its ttl ran out between
     * attaching and this call): the one line {@link #awaitTask} gives, asked of the service rather
     * than read from the refusal's text. Otherwise {@code refused} itself.
     */
    private RuntimeException endedOr(RuntimeException refused) {
        try {
            return askEnded().<RuntimeException>map(e -> e).orElse(refused);
        } catch (RuntimeException unknown) {
            refused.addSuppressed(unknown);
            return refused;
        }
    }

    /**
     * The sandbox's ended line when the service says it has ended (asked after an exec was killed
     * or lost its status: the ttl may have run out under it), else empty, also when the service
     * cannot be asked (the exec's own end then stands).
     */
    private java.util.Optional<dev.airlock.AirlockException> endedNow() {
        try {
            return askEnded().map(e -> e);
        } catch (RuntimeException unknown) {
            return java.util.Optional.empty();
        }
    }

    private java.util.Optional<dev.airlock.BackendUnavailableException> askEnded() {
        SandboxGetTaskIdResponse r = taskState();
        return r.hasTaskResult() && r.getTaskResult().getStatus() != 0 ? java.util.Optional.of(ended(r)) : java.util.Optional.empty();
    }

    /**
     * Starts {@code argv} with a fresh client exec id: sent once, never again. A lost answer is a
     * {@link dev.airlock.DispatchOutcomeUnknownException} from {@code remote/}.
     */
    ModalProcess exec(List<String> argv, Map<String, String> env) throws IOException {
        if (terminated.get()) {
            throw new dev.airlock.EnvironmentClosedException("the Modal sandbox " + sandboxId + " is terminated");
        }
        String execId = UUID.randomUUID().toString();
        String task = client.taskId();
        TaskExecStartRequest.Builder req = TaskExecStartRequest.newBuilder().setTaskId(task).setExecId(execId)
                .addAllCommandArgs(argv).setStdoutConfig(1).setStderrConfig(1).putAllEnv(env);
        client.settings.workdir().ifPresent(req::setWorkdir);
        TaskExecStartRequest built = req.build();
        try {
            client.calls.dispatch("TaskExecStart", Resource.sandbox(sandboxId), () -> {
                try {
                    return client.routed(client.settings.apiTimeout().toMillis(), r -> r.taskExecStart(built));
                } catch (StatusRuntimeException e) {
                    throw ModalClient.wire(e);
                }
            });
        } catch (BackendException refused) {
            throw endedOr(refused);
        }
        ModalProcess p = new ModalProcess(client, task, execId, sandboxId, this::endedNow);
        p.startReaders();
        return p;
    }

    /** Terminates the sandbox exactly once (never an attached one). */
    @Override
    public void close() {
        if (attached || !terminated.compareAndSet(false, true)) {
            return;
        }
        terminate(client, sandboxId, v2);
    }

    static void terminate(ModalClient client, String sandboxId, boolean v2) {
        client.control(v2 ? "SandboxTerminateV2" : "SandboxTerminate", Resource.sandbox(sandboxId), st -> {
            SandboxTerminateRequest q = SandboxTerminateRequest.newBuilder().setSandboxId(sandboxId).build();
            return v2 ? st.sandboxTerminateV2(q) : st.sandboxTerminate(q);
        });
    }
}

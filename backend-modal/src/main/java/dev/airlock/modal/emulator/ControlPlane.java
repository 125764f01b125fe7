package dev.airlock.modal.emulator;

import dev.airlock.emulator.ImageCatalogue;
import dev.airlock.modal.proto.*;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@code modal.client.ModalClient}: what a sandbox's life needs, in both sandbox families. */
final class ControlPlane extends ModalClientGrpc.ModalClientImplBase {
    private final ModalState state;
    /** Answers of creates by idempotency key, as the service deduplicates a resent create. */
    private final java.util.Map<String, Object> created = new java.util.concurrent.ConcurrentHashMap<>();

    ControlPlane(ModalState state) {
        this.state = state;
    }

    private static <T> void answer(StreamObserver<T> out, T value) {
        out.onNext(value);
        out.onCompleted();
    }

    @Override
    public void clientHello(Empty request, StreamObserver<Empty> out) {
        answer(out, Empty.getDefaultInstance());
    }

    @Override
    public void authTokenGet(AuthTokenGetRequest request, StreamObserver<AuthTokenGetResponse> out) {
        answer(out, AuthTokenGetResponse.newBuilder()
                .setToken(state.jwt.issue("client", Instant.now().getEpochSecond() + 3600)).build());
    }

    @Override
    public void appGetOrCreate(AppGetOrCreateRequest request, StreamObserver<AppGetOrCreateResponse> out) {
        if (request.getAppName().isBlank()) {
            throw Status.INVALID_ARGUMENT.withDescription("app_name is empty").asRuntimeException();
        }
        String id = state.apps.computeIfAbsent(ModalState.appKey(request.getEnvironmentName(), request.getAppName()),
                k -> ModalState.id("ap-"));
        answer(out, AppGetOrCreateResponse.newBuilder().setAppId(id).build());
    }

    @Override
    public void environmentGetOrCreate(EnvironmentGetOrCreateRequest request, StreamObserver<EnvironmentGetOrCreateResponse> out) {
        String name = request.getDeploymentName().isEmpty() ? "main" : request.getDeploymentName();
        answer(out, EnvironmentGetOrCreateResponse.newBuilder().setEnvironmentId("en-" + name)
                .setMetadata(EnvironmentMetadata.newBuilder().setName(name)
                        .setSettings(EnvironmentSettings.newBuilder().setImageBuilderVersion(state.imageBuilderVersion)))
                .build());
    }

    /**
     * An image from a registry tag, by name only ({@link ImageCatalogue}): a known tag is built
     * (at once, or after the configured build entries), an unknown one fails its build, as the
     * service's build of a tag no registry has: the client joins the build and reads a FAILURE
     * result with the reason.
     */
    @Override
    public void imageGetOrCreate(ImageGetOrCreateRequest request, StreamObserver<ImageGetOrCreateResponse> out) {
        String version = request.getBuilderVersion();
        state.builderVersionsAsked.add(version);
        if (!version.isEmpty() && !ModalState.BUILDER_VERSIONS.contains(version)) {
            // Emulator wording; the service refuses a version it does not have.
            throw Status.INVALID_ARGUMENT.withDescription("image builder version " + version + " is not supported (supported: "
                    + String.join(", ", ModalState.BUILDER_VERSIONS) + ")").asRuntimeException();
        }
        String tag = request.getImage().getDockerfileCommandsList().stream().filter(c -> c.startsWith("FROM "))
                .findFirst().map(c -> c.substring(5).trim()).orElse("debian:12");
        String id = "im-" + Integer.toHexString(tag.hashCode());
        state.images.put(id, tag);
        ImageGetOrCreateResponse.Builder r = ImageGetOrCreateResponse.newBuilder().setImageId(id);
        if (state.imageBuild.entries() == 0 && ImageCatalogue.lookup(tag).isPresent()) {
            r.setResult(GenericResult.newBuilder().setStatus(1)); // built already
        } // else: no result, so the client joins the build
        answer(out, r.build());
    }

    /**
     * Streams the build's entries after {@code last_entry_id}, then the result; with a cut
     * configured, the first join of an image ends early (no result), as a dropped stream does.
     */
    @Override
    public void imageJoinStreaming(ImageJoinStreamingRequest request, StreamObserver<ImageJoinStreamingResponse> out) {
        String tag = state.images.get(request.getImageId());
        if (tag != null && ImageCatalogue.lookup(tag).isEmpty()) {
            out.onNext(ImageJoinStreamingResponse.newBuilder().setEntryId("1").setEof(true)
                    .setResult(GenericResult.newBuilder().setStatus(2).setException("Could not pull the image " + tag
                            + ": the registry has no such repository or tag (emulated: this emulator knows "
                            + String.join(", ", ImageCatalogue.KNOWN) + ")"))
                    .build());
            out.onCompleted();
            return;
        }
        state.imageBuild.joinsFrom().add(request.getLastEntryId());
        int from = request.getLastEntryId().isEmpty() ? 0 : Integer.parseInt(request.getLastEntryId());
        int entries = state.imageBuild.entries();
        boolean cut = state.imageBuild.cutAfter() > 0 && state.imageBuild.joinsFrom().size() == 1;
        for (int e = from + 1; e <= entries; e++) {
            out.onNext(ImageJoinStreamingResponse.newBuilder().setEntryId(Integer.toString(e)).build());
            if (cut && e == state.imageBuild.cutAfter()) {
                out.onCompleted();
                return;
            }
        }
        out.onNext(ImageJoinStreamingResponse.newBuilder().setEntryId(Integer.toString(entries + 1))
                .setResult(GenericResult.newBuilder().setStatus(1)).setEof(true).build());
        out.onCompleted();
    }

    /** An image by id: one ImageGetOrCreate made or a snapshot's; else refused as the service refuses it. */
    @Override
    public void imageFromId(ImageFromIdRequest request, StreamObserver<ImageFromIdResponse> out) {
        if (!state.knowsImage(request.getImageId())) {
            throw SnapshotImages.unknown(request.getImageId());
        }
        answer(out, ImageFromIdResponse.newBuilder().setImageId(request.getImageId()).build());
    }

    /** Deletes a snapshot's image (its files go); an unknown id is refused. Images built from a tag are shared: kept. */
    @Override
    public void imageDelete(ImageDeleteRequest request, StreamObserver<Empty> out) {
        if (state.images.containsKey(request.getImageId())) {
            answer(out, Empty.getDefaultInstance());
            return;
        }
        state.snapshots.remove(request.getImageId());
        answer(out, Empty.getDefaultInstance());
    }

    /**
     * The legacy filesystem snapshot, V1 sandboxes only (the SDKs call it only for those): a copy of
     * the running sandbox's root as a new image; a finished sandbox is refused.
     */
    @Override
    public void sandboxSnapshotFs(SandboxSnapshotFsRequest request, StreamObserver<SandboxSnapshotFsResponse> out) {
        ModalState.Box b = family(state.sandbox(request.getSandboxId()), false);
        running(b);
        String id = state.snapshots.take(b.sandbox.root(), "");
        answer(out, SandboxSnapshotFsResponse.newBuilder().setImageId(id).setResult(GenericResult.newBuilder().setStatus(1))
                .build());
    }

    @Override
    public void sandboxGetTunnels(SandboxGetTunnelsRequest request, StreamObserver<SandboxGetTunnelsResponse> out) {
        answer(out, tunnels(request, false));
    }

    @Override
    public void sandboxGetTunnelsV2(SandboxGetTunnelsRequest request, StreamObserver<SandboxGetTunnelsResponse> out) {
        answer(out, tunnels(request, true));
    }

    /**
     * The tunnel of each declared port, up from the create on: its edge on loopback is the TLS
     * endpoint's host and port (plain TCP here: the emulator terminates no TLS) and, for an
     * unencrypted port, the raw TCP endpoint too. A finished sandbox answers its result and no tunnels.
     */
    private SandboxGetTunnelsResponse tunnels(SandboxGetTunnelsRequest request, boolean v2) {
        ModalState.Box b = family(state.sandbox(request.getSandboxId()), v2);
        SandboxGetTunnelsResponse.Builder r = SandboxGetTunnelsResponse.newBuilder();
        if (b.result.isDone()) {
            return r.setResult(b.result.join()).build();
        }
        b.tunnels.forEach((port, t) -> {
            TunnelData.Builder d = TunnelData.newBuilder().setContainerPort(port).setHost(t.edge().host()).setPort(t.edge().port());
            if (t.unencrypted()) {
                d.setUnencryptedHost(t.edge().host()).setUnencryptedPort(t.edge().port());
            }
            r.addTunnels(d);
        });
        return r.setResult(GenericResult.newBuilder().setStatus(1)).build();
    }

    @Override
    public void sandboxCreate(SandboxCreateRequest request, StreamObserver<SandboxCreateResponse> out) {
        answer(out, (SandboxCreateResponse) once(() -> {
            state.creationRate.acquire(); // a resend of a create already made is answered above, not counted
            ModalState.Box b = state.create(request.getDefinition(), false, request.getAppId(), tags(request.getTagsList()));
            return SandboxCreateResponse.newBuilder().setSandboxId(b.id).build();
        }));
    }

    @Override
    public void sandboxCreateV2(SandboxCreateV2Request request, StreamObserver<SandboxCreateV2Response> out) {
        answer(out, (SandboxCreateV2Response) once(() -> {
            state.creationRate.acquire();
            ModalState.Box b = state.create(request.getDefinition(), true, request.getAppId(), tags(request.getTagsList()));
            return SandboxCreateV2Response.newBuilder().setSandboxId(b.id).setTaskId(b.taskId)
                    .setCommandRouterAccess(CommandRouterAccess.newBuilder().setJwt(state.routerJwt(b.taskId))
                            .setUrl(state.routerUrl()))
                    .build();
        }));
    }

    /** Lookup by name: the V1 call finds V1 sandboxes, the V2 call V2 ones, as the SDK expects. */
    @Override
    public void sandboxGetFromName(SandboxGetFromNameRequest request, StreamObserver<SandboxGetFromNameResponse> out) {
        answer(out, fromName(request, false));
    }

    @Override
    public void sandboxGetFromNameV2(SandboxGetFromNameRequest request, StreamObserver<SandboxGetFromNameResponse> out) {
        answer(out, fromName(request, true));
    }

    private SandboxGetFromNameResponse fromName(SandboxGetFromNameRequest request, boolean v2) {
        if (request.getSandboxName().isEmpty() || request.getAppName().isEmpty()) {
            throw Status.INVALID_ARGUMENT.withDescription("sandbox_name and app_name are required").asRuntimeException();
        }
        ModalState.Box b = state.byName(request.getEnvironmentName(), request.getAppName(), request.getSandboxName(), v2,
                v2 && request.getIncludeTerminated());
        return SandboxGetFromNameResponse.newBuilder().setSandboxId(b.id).build();
    }

    @Override
    public void sandboxTagsSet(SandboxTagsSetRequest request, StreamObserver<Empty> out) {
        setTags(request, false);
        answer(out, Empty.getDefaultInstance());
    }

    @Override
    public void sandboxTagsSetV2(SandboxTagsSetRequest request, StreamObserver<Empty> out) {
        setTags(request, true);
        answer(out, Empty.getDefaultInstance());
    }

    /** Replaces the sandbox's whole tag set (an empty list clears it); a tag without a name is INVALID_ARGUMENT. */
    private void setTags(SandboxTagsSetRequest request, boolean v2) {
        ModalState.Box b = family(state.sandbox(request.getSandboxId()), v2);
        if (request.getTagsList().stream().anyMatch(t -> t.getTagName().isEmpty())) {
            throw Status.INVALID_ARGUMENT.withDescription("a tag needs a name").asRuntimeException();
        }
        b.tags = java.util.Map.copyOf(tags(request.getTagsList()));
    }

    @Override
    public void sandboxTagsGet(SandboxTagsGetRequest request, StreamObserver<SandboxTagsGetResponse> out) {
        answer(out, getTags(request, false));
    }

    @Override
    public void sandboxTagsGetV2(SandboxTagsGetRequest request, StreamObserver<SandboxTagsGetResponse> out) {
        answer(out, getTags(request, true));
    }

    private SandboxTagsGetResponse getTags(SandboxTagsGetRequest request, boolean v2) {
        ModalState.Box b = family(state.sandbox(request.getSandboxId()), v2);
        SandboxTagsGetResponse.Builder r = SandboxTagsGetResponse.newBuilder();
        new java.util.TreeMap<>(b.tags).forEach((k, v) -> r.addTags(SandboxTag.newBuilder().setTagName(k).setTagValue(v)));
        return r.build();
    }

    @Override
    public void sandboxGetTaskId(SandboxGetTaskIdRequest request, StreamObserver<SandboxGetTaskIdResponse> out) {
        answer(out, taskId(request, false));
    }

    @Override
    public void sandboxGetTaskIdV2(SandboxGetTaskIdRequest request, StreamObserver<SandboxGetTaskIdResponse> out) {
        answer(out, taskId(request, true));
    }

    private SandboxGetTaskIdResponse taskId(SandboxGetTaskIdRequest request, boolean v2) {
        ModalState.Box b = family(state.sandbox(request.getSandboxId()), v2);
        SandboxGetTaskIdResponse.Builder r = SandboxGetTaskIdResponse.newBuilder().setTaskId(b.taskId);
        if (b.result.isDone()) {
            r.setTaskResult(b.result.join());
        }
        return r.build();
    }

    @Override
    public void sandboxGetCommandRouterAccess(SandboxGetCommandRouterAccessRequest request,
                                              StreamObserver<SandboxGetCommandRouterAccessResponse> out) {
        ModalState.Box b = family(state.sandbox(request.getSandboxId()), true);
        running(b);
        answer(out, SandboxGetCommandRouterAccessResponse.newBuilder().setJwt(state.routerJwt(b.taskId))
                .setUrl(state.routerUrl()).setWorkerIpv4Address("127.0.0.1").build());
    }

    @Override
    public void taskGetCommandRouterAccess(TaskGetCommandRouterAccessRequest request,
                                           StreamObserver<TaskGetCommandRouterAccessResponse> out) {
        ModalState.Box b = state.task(request.getTaskId());
        running(b);
        answer(out, TaskGetCommandRouterAccessResponse.newBuilder().setJwt(state.routerJwt(b.taskId))
                .setUrl(state.routerUrl()).build());
    }

    @Override
    public void sandboxTerminate(SandboxTerminateRequest request, StreamObserver<SandboxTerminateResponse> out) {
        answer(out, terminate(request, false));
    }

    @Override
    public void sandboxTerminateV2(SandboxTerminateRequest request, StreamObserver<SandboxTerminateResponse> out) {
        answer(out, terminate(request, true));
    }

    private SandboxTerminateResponse terminate(SandboxTerminateRequest request, boolean v2) {
        ModalState.Box b = family(state.sandbox(request.getSandboxId()), v2);
        // A no-op on a finished sandbox, as the service: the existing result is returned.
        return SandboxTerminateResponse.newBuilder().setExistingResult(state.finish(b, 3, "terminated")).build();
    }

    @Override
    public void sandboxWait(SandboxWaitRequest request, StreamObserver<SandboxWaitResponse> out) {
        answer(out, await(request, false));
    }

    @Override
    public void sandboxWaitV2(SandboxWaitRequest request, StreamObserver<SandboxWaitResponse> out) {
        answer(out, await(request, true));
    }

    private SandboxWaitResponse await(SandboxWaitRequest request, boolean v2) {
        ModalState.Box b = family(state.sandbox(request.getSandboxId()), v2);
        try {
            GenericResult r = b.result.get(Math.max(0, (long) (request.getTimeout() * 1000)), TimeUnit.MILLISECONDS);
            return SandboxWaitResponse.newBuilder().setResult(r).build();
        } catch (TimeoutException e) {
            return SandboxWaitResponse.getDefaultInstance(); // still running: no result yet
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
        } catch (java.util.concurrent.ExecutionException e) {
            throw Status.INTERNAL.withDescription(String.valueOf(e.getCause())).asRuntimeException();
        }
    }

    @Override
    public void sandboxList(SandboxListRequest request, StreamObserver<SandboxListResponse> out) {
        answer(out, list(request, false));
    }

    @Override
    public void sandboxListV2(SandboxListRequest request, StreamObserver<SandboxListResponse> out) {
        answer(out, list(request, true));
    }

    private SandboxListResponse list(SandboxListRequest request, boolean v2) {
        SandboxListResponse.Builder r = SandboxListResponse.newBuilder();
        for (ModalState.Box b : state.list(v2, request.getAppId(), request.getBeforeTimestamp(), tags(request.getTagsList()),
                request.getIncludeFinished())) {
            SandboxInfo.Builder info = SandboxInfo.newBuilder().setId(b.id).setCreatedAt(b.createdAt).setAppId(b.appId);
            b.tags.forEach((k, v) -> info.addTags(SandboxTag.newBuilder().setTagName(k).setTagValue(v)));
            r.addSandboxes(info);
        }
        return r.build();
    }

    private static java.util.Map<String, String> tags(java.util.List<SandboxTag> tags) {
        java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
        tags.forEach(t -> m.put(t.getTagName(), t.getTagValue()));
        return m;
    }

    private Object once(java.util.function.Supplier<Object> create) {
        String key = CallGuard.IDEMPOTENCY_KEY.get();
        return key == null ? create.get() : created.computeIfAbsent(key, k -> create.get());
    }

    /** A V1 call on a V2 sandbox (or the reverse) is refused, as the service does. */
    private static ModalState.Box family(ModalState.Box b, boolean v2) {
        if (b.v2 != v2) {
            throw Status.INVALID_ARGUMENT.withDescription("sandbox " + b.id + " is a " + (b.v2 ? "V2" : "V1")
                    + " sandbox; use the " + (b.v2 ? "V2" : "V1") + " RPCs").asRuntimeException();
        }
        return b;
    }

    private static void running(ModalState.Box b) {
        if (b.result.isDone()) {
            throw Status.FAILED_PRECONDITION.withDescription("sandbox " + b.id + " has finished").asRuntimeException();
        }
    }
}

package dev.airlock.modal;

import dev.airlock.modal.proto.AppGetOrCreateRequest;
import dev.airlock.modal.proto.ModalClientGrpc;
import dev.airlock.modal.proto.Sandbox;
import dev.airlock.modal.proto.SandboxCreateRequest;
import dev.airlock.modal.proto.SandboxCreateV2Request;
import dev.airlock.modal.proto.SandboxGetFromNameRequest;
import dev.airlock.modal.proto.SandboxTag;
import dev.airlock.modal.proto.SandboxTagsGetRequest;
import dev.airlock.modal.proto.SandboxTagsSetRequest;
import dev.airlock.modal.proto.SandboxTerminateRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Sandboxes by name and their tags, as the service serves them: a name is unique among an app's
 * running sandboxes (ALREADY_EXISTS), a lookup finds the running one of its family (NOT_FOUND
 * otherwise, and for a finished one unless {@code include_terminated}), tags-set replaces the
 * whole set. Calls the SDKs make that the emulator does not serve stay UNIMPLEMENTED.
 */
class ModalNamesAndTagsTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private ManagedChannel channel;
    private ModalClientGrpc.ModalClientBlockingStub cp;

    @BeforeEach
    void connect() {
        var u = EMULATOR.served.emulator().url();
        channel = NettyChannelBuilder.forAddress(u.getHost(), u.getPort()).usePlaintext().build();
        Metadata m = new Metadata();
        m.put(Metadata.Key.of("x-modal-token-id", Metadata.ASCII_STRING_MARSHALLER), ModalFixture.TOKEN_ID);
        m.put(Metadata.Key.of("x-modal-token-secret", Metadata.ASCII_STRING_MARSHALLER), ModalFixture.TOKEN_SECRET);
        cp = ModalClientGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(m));
    }

    @AfterEach
    void close() {
        channel.shutdownNow();
    }

    @Test
    void aNameIsUniqueAmongTheAppsRunningSandboxesAndFoundByItsFamily() {
        String app = cp.appGetOrCreate(AppGetOrCreateRequest.newBuilder().setAppName("names").setObjectCreationType(1).build()).getAppId();
        String other = cp.appGetOrCreate(AppGetOrCreateRequest.newBuilder().setAppName("names-other").setObjectCreationType(1).build())
                .getAppId();
        Sandbox named = Sandbox.newBuilder().setTimeoutSecs(300).setImageId(image(app)).setName("web").build();
        String v1 = cp.sandboxCreate(SandboxCreateRequest.newBuilder().setAppId(app).setDefinition(named).build()).getSandboxId();

        StatusRuntimeException twin = assertThrows(StatusRuntimeException.class,
                () -> cp.sandboxCreate(SandboxCreateRequest.newBuilder().setAppId(app).setDefinition(named).build()));
        assertEquals(Status.Code.ALREADY_EXISTS, twin.getStatus().getCode());
        assertEquals("a sandbox named 'web' is already running in this app; names are unique among an app's running sandboxes",
                twin.getStatus().getDescription());
        StatusRuntimeException twinV2 = assertThrows(StatusRuntimeException.class,
                () -> cp.sandboxCreateV2(SandboxCreateV2Request.newBuilder().setAppId(app).setDefinition(named).build()));
        assertEquals(Status.Code.ALREADY_EXISTS, twinV2.getStatus().getCode());
        // Another app has its own names.
        String elsewhere = cp.sandboxCreate(SandboxCreateRequest.newBuilder().setAppId(other).setDefinition(named).build()).getSandboxId();

        assertEquals(v1, fromName(false, "names", "web", false));
        assertEquals(elsewhere, fromName(false, "names-other", "web", false));
        assertNotFound(() -> fromName(true, "names", "web", false), "Sandbox with name 'web' not found in App 'names'");
        assertNotFound(() -> fromName(false, "names", "nobody", false), "Sandbox with name 'nobody' not found in App 'names'");
        assertNotFound(() -> fromName(false, "no-such-app", "web", false), "Sandbox with name 'web' not found in App 'no-such-app'");

        cp.sandboxTerminate(SandboxTerminateRequest.newBuilder().setSandboxId(v1).build());
        assertNotFound(() -> fromName(false, "names", "web", false), "Sandbox with name 'web' not found in App 'names'");
        // Finished, the name is free: a V2 sandbox takes it; the V2 lookup finds it, and with
        // include_terminated a finished one when none runs.
        String v2 = cp.sandboxCreateV2(SandboxCreateV2Request.newBuilder().setAppId(app).setDefinition(named).build()).getSandboxId();
        assertEquals(v2, fromName(true, "names", "web", false));
        cp.sandboxTerminateV2(SandboxTerminateRequest.newBuilder().setSandboxId(v2).build());
        assertNotFound(() -> fromName(true, "names", "web", false), "Sandbox with name 'web' not found in App 'names'");
        assertEquals(v2, fromName(true, "names", "web", true));
        cp.sandboxTerminate(SandboxTerminateRequest.newBuilder().setSandboxId(elsewhere).build());

        StatusRuntimeException empty = assertThrows(StatusRuntimeException.class, () -> fromName(false, "names", "", false));
        assertEquals(Status.Code.INVALID_ARGUMENT, empty.getStatus().getCode());
    }

    @Test
    void tagsSetReplacesTheWholeSetAndTagsGetReadsIt() {
        String app = cp.appGetOrCreate(AppGetOrCreateRequest.newBuilder().setAppName("tags").setObjectCreationType(1).build()).getAppId();
        String id = cp.sandboxCreateV2(SandboxCreateV2Request.newBuilder().setAppId(app)
                .setDefinition(Sandbox.newBuilder().setTimeoutSecs(300).setImageId(image(app))).addTags(tag("born", "yes")).build())
                .getSandboxId();
        assertEquals(List.of(tag("born", "yes")), getTags(id));
        cp.sandboxTagsSetV2(SandboxTagsSetRequest.newBuilder().setSandboxId(id).addTags(tag("owner", "airlock"))
                .addTags(tag("a", "1")).build());
        assertEquals(List.of(tag("a", "1"), tag("owner", "airlock")), getTags(id));
        cp.sandboxTagsSetV2(SandboxTagsSetRequest.newBuilder().setSandboxId(id).build());
        assertEquals(List.of(), getTags(id));

        StatusRuntimeException nameless = assertThrows(StatusRuntimeException.class, () -> cp.sandboxTagsSetV2(
                SandboxTagsSetRequest.newBuilder().setSandboxId(id).addTags(tag("", "x")).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, nameless.getStatus().getCode());
        // The V1 calls refuse a V2 sandbox, as every V1 call does.
        StatusRuntimeException family = assertThrows(StatusRuntimeException.class, () -> cp.sandboxTagsGet(
                SandboxTagsGetRequest.newBuilder().setSandboxId(id).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, family.getStatus().getCode());
        StatusRuntimeException unknown = assertThrows(StatusRuntimeException.class, () -> cp.sandboxTagsGetV2(
                SandboxTagsGetRequest.newBuilder().setSandboxId("sb2-nosuchsandbox").build()));
        assertEquals(Status.Code.NOT_FOUND, unknown.getStatus().getCode());
        cp.sandboxTerminateV2(SandboxTerminateRequest.newBuilder().setSandboxId(id).build());
    }

    @Test
    void callsTheEmulatorDoesNotServeAreUnimplemented() {
        var empty = io.grpc.protobuf.ProtoUtils.marshaller(dev.airlock.modal.proto.Empty.getDefaultInstance());
        var tunnels = io.grpc.MethodDescriptor.<dev.airlock.modal.proto.Empty, dev.airlock.modal.proto.Empty>newBuilder()
                .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
                .setFullMethodName("modal.client.ModalClient/SandboxSnapshot")
                .setRequestMarshaller(empty).setResponseMarshaller(empty).build();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> io.grpc.stub.ClientCalls.blockingUnaryCall(
                cp.getChannel(), tunnels, cp.getCallOptions(), dev.airlock.modal.proto.Empty.getDefaultInstance()));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
    }

    /** An image the service made (it refuses a create from an image id it does not know). */
    private String image(String app) {
        return cp.imageGetOrCreate(dev.airlock.modal.proto.ImageGetOrCreateRequest.newBuilder().setAppId(app).setImage(
                dev.airlock.modal.proto.Image.newBuilder().addDockerfileCommands("FROM debian:bookworm-slim")).build()).getImageId();
    }

    private String fromName(boolean v2, String app, String name, boolean includeTerminated) {
        SandboxGetFromNameRequest r = SandboxGetFromNameRequest.newBuilder().setAppName(app).setSandboxName(name)
                .setIncludeTerminated(includeTerminated).build();
        return (v2 ? cp.sandboxGetFromNameV2(r) : cp.sandboxGetFromName(r)).getSandboxId();
    }

    private List<SandboxTag> getTags(String id) {
        return cp.sandboxTagsGetV2(SandboxTagsGetRequest.newBuilder().setSandboxId(id).build()).getTagsList();
    }

    private static SandboxTag tag(String name, String value) {
        return SandboxTag.newBuilder().setTagName(name).setTagValue(value).build();
    }

    private static void assertNotFound(org.junit.jupiter.api.function.Executable call, String description) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        assertEquals(description, e.getStatus().getDescription());
    }
}

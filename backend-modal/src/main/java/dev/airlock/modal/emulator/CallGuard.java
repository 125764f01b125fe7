package dev.airlock.modal.emulator;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorCredentials;
import dev.airlock.emulator.Fault;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.modal.proto.router.TaskExecStdioReadResponse;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

import java.time.Instant;
import java.util.Optional;

/**
 * What every call goes through before its handler: the auth the service requires (token id and
 * secret on the control plane, a live router JWT on the router), the fault plan (by RPC name,
 * e.g. {@code TaskExecStart:lose}), and the journal (every call but {@code TaskExecStart}, which
 * the sandbox records as a dispatch).
 */
final class CallGuard implements ServerInterceptor {
    static final Metadata.Key<String> TOKEN_ID = Metadata.Key.of("x-modal-token-id", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> TOKEN_SECRET = Metadata.Key.of("x-modal-token-secret", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    /** The fault the plan chose for this call, for handlers that act on it themselves (exec start). */
    static final Context.Key<Optional<Fault>> FAULT = Context.key("airlock-fault");
    static final Context.Key<String> ROUTER_TASK = Context.key("airlock-router-task");
    /** The control call's x-idempotency-key: a create resent with it gets the first answer, not a second sandbox. */
    static final Context.Key<String> IDEMPOTENCY_KEY = Context.key("airlock-idempotency-key");
    static final Metadata.Key<String> IDEMPOTENCY = Metadata.Key.of("x-idempotency-key", Metadata.ASCII_STRING_MARSHALLER);

    /** The description of UNAUTHENTICATED when the control call carries no token pair. */
    static final String MISSING = "Token missing. Could not authenticate client.";
    /** The description of UNAUTHENTICATED for a pair the service does not know (wrong, expired or revoked); no value echoed. */
    static final String INVALID = "Invalid token: the token id or secret is wrong, expired or revoked.";

    private final FaultPlan faults;
    private final CallJournal journal;
    private final Jwt jwt;
    private final EmulatorCredentials credentials;

    /** {@code credentials} names {@link ModalEmulator#TOKEN_ID_VARIABLE} and {@link ModalEmulator#TOKEN_SECRET_VARIABLE}. */
    CallGuard(FaultPlan faults, CallJournal journal, Jwt jwt, EmulatorCredentials credentials) {
        this.faults = faults;
        this.journal = journal;
        this.jwt = jwt;
        this.credentials = credentials;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        String service = call.getMethodDescriptor().getServiceName();
        String rpc = call.getMethodDescriptor().getBareMethodName();
        Context ctx = Context.current();
        if ("modal.task_command_router.TaskCommandRouter".equals(service)) {
            String auth = headers.get(AUTHORIZATION);
            Optional<String> task = auth == null || !auth.startsWith("Bearer ") ? Optional.empty()
                    : jwt.verify(auth.substring(7).trim(), Instant.now().getEpochSecond());
            if (task.isEmpty()) {
                return refuse(call, rpc, Status.UNAUTHENTICATED.withDescription(
                        "the router needs 'authorization: Bearer JWT' from SandboxGetCommandRouterAccess (missing, forged or expired)"));
            }
            ctx = ctx.withValue(ROUTER_TASK, task.get());
        } else {
            String key = headers.get(IDEMPOTENCY);
            if (key != null && !key.isBlank()) {
                ctx = ctx.withValue(IDEMPOTENCY_KEY, rpc + "/" + key);
            }
            String id = headers.get(TOKEN_ID);
            String secret = headers.get(TOKEN_SECRET);
            if (id == null || id.isBlank() || secret == null || secret.isBlank()) {
                return refuse(call, rpc, Status.UNAUTHENTICATED.withDescription(MISSING));
            }
            // Both compared, in constant time, whichever is wrong: the answer says nothing about which.
            boolean idOk = credentials.accepts(ModalEmulator.TOKEN_ID_VARIABLE, id);
            boolean secretOk = credentials.accepts(ModalEmulator.TOKEN_SECRET_VARIABLE, secret);
            if (!idOk || !secretOk) {
                return refuse(call, rpc, Status.UNAUTHENTICATED.withDescription(INVALID));
            }
        }
        Optional<Fault> fault = faults.next(rpc);
        if (fault.isPresent() && fault.get() instanceof Fault.Status s) {
            journal.call(rpc, "", 0, 0, fault);
            call.close(Status.fromCode(Status.Code.valueOf(s.grpcCode())).withDescription("injected fault"), new Metadata());
            return new ServerCall.Listener<>() { };
        }
        if (fault.isPresent() && fault.get() instanceof Fault.Delay d) {
            try {
                Thread.sleep(d.delay().toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ServerCall<Q, A> wrapped = fault.map(f -> faulty(call, f)).orElse(call);
        ctx = ctx.withValue(FAULT, fault);
        ServerCall.Listener<Q> listener = Contexts.interceptCall(ctx, wrapped, headers, next);
        if (rpc.equals("TaskExecStart")) {
            return listener; // journaled as a dispatch by the sandbox
        }
        return new SimpleForwardingServerCallListener<>(listener) {
            private boolean recorded;

            @Override
            public void onMessage(Q message) {
                if (!recorded) {
                    recorded = true;
                    Message m = (Message) message;
                    journal.call(rpc, field(m, "sandbox_id", "task_id", "image_id", "app_name"), m.getSerializedSize(), 0, fault);
                }
                super.onMessage(message);
            }
        };
    }

    private static String field(Message m, String... names) {
        for (String n : names) {
            FieldDescriptor f = m.getDescriptorForType().findFieldByName(n);
            if (f != null && f.getType() == FieldDescriptor.Type.STRING) {
                return (String) m.getField(f);
            }
        }
        FieldDescriptor start = m.getDescriptorForType().findFieldByName("start");
        if (start != null && m.hasField(start)) {
            return field((Message) m.getField(start), "task_id");
        }
        return "";
    }

    private <Q, A> ServerCall.Listener<Q> refuse(ServerCall<Q, A> call, String rpc, Status status) {
        journal.call(rpc, "", 0, 0, Optional.empty());
        call.close(status, new Metadata());
        return new ServerCall.Listener<>() { };
    }

    /** Lose (do the work, answer UNAVAILABLE) or cut (answer the first N bytes, then UNAVAILABLE). */
    private static <Q, A> ServerCall<Q, A> faulty(ServerCall<Q, A> call, Fault fault) {
        if (!(fault instanceof Fault.LoseResponse) && !(fault instanceof Fault.CutAfterBytes)
                && !(fault instanceof Fault.CutAfterLines)) {
            return call;
        }
        long budget = fault instanceof Fault.CutAfterBytes c ? c.bytes()
                : fault instanceof Fault.CutAfterLines l ? l.lines() * 1024 : 0;
        return new SimpleForwardingServerCall<>(call) {
            private long sent;
            private boolean cut;

            @Override
            public void sendMessage(A message) {
                if (cut) {
                    return;
                }
                if (message instanceof TaskExecStdioReadResponse r && sent + r.getData().size() > budget) {
                    int keep = (int) (budget - sent);
                    if (keep > 0) {
                        @SuppressWarnings("unchecked")
                        A part = (A) TaskExecStdioReadResponse.newBuilder().setData(r.getData().substring(0, keep)).build();
                        super.sendMessage(part);
                    }
                    cut = true;
                    return;
                }
                int size = ((Message) message).getSerializedSize();
                if (sent + size > budget) {
                    cut = true;
                    return;
                }
                sent += size;
                super.sendMessage(message);
            }

            @Override
            public void close(Status status, Metadata trailers) {
                if (cut || status.isOk() && fault instanceof Fault.LoseResponse) {
                    super.close(Status.UNAVAILABLE.withDescription("connection lost (injected fault)"), new Metadata());
                } else {
                    super.close(status, trailers);
                }
            }
        };
    }
}

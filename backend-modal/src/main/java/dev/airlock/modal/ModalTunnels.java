package dev.airlock.modal;

import dev.airlock.ConfigurationException;
import dev.airlock.Ports;
import dev.airlock.remote.CallKind;
import dev.airlock.remote.Resource;
import dev.airlock.modal.proto.PortSpec;
import dev.airlock.modal.proto.PortSpecs;
import dev.airlock.modal.proto.SandboxGetTunnelsRequest;
import dev.airlock.modal.proto.SandboxGetTunnelsResponse;
import dev.airlock.modal.proto.TunnelData;
import dev.airlock.spi.Deadline;

import java.io.IOException;
import java.net.URI;
import java.util.Collection;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Modal's tunnels: the ports {@code airlock.ports} declares go in the sandbox definition's
 * {@code open_ports} as unencrypted ports (Modal then gives each a raw TCP endpoint beside its TLS
 * one), and a port's URL is {@code http://UNENCRYPTED_HOST:UNENCRYPTED_PORT/} from
 * {@code SandboxGetTunnels} (V2: {@code SandboxGetTunnelsV2}), which waits up to its {@code timeout}
 * for the tunnels and answers a TIMEOUT result when they are not up by then.
 */
final class ModalTunnels {
    /** The most seconds one tunnels call asks the service to wait (the SDKs' default is 50). */
    private static final float MAX_WAIT_SECONDS = 50;

    private ModalTunnels() {
    }

    /** The definition's {@code open_ports}: each port unencrypted, so it has a plain TCP endpoint. */
    static PortSpecs declare(Collection<Integer> ports) {
        PortSpecs.Builder b = PortSpecs.newBuilder();
        ports.forEach(p -> b.addPorts(PortSpec.newBuilder().setPort(p).setUnencrypted(true)));
        return b.build();
    }

    /**
     * The URL of {@code port}'s tunnel, asked of the service within {@code deadline} (its wait, and
     * the call's own gRPC deadline a second beyond). A port the sandbox was not created with is one
     * line naming it and {@code airlock.ports}.
     */
    static URI open(ModalClient client, String sandboxId, boolean v2, int port, Deadline deadline) throws IOException {
        long leftMillis = deadline.remaining().toMillis();
        if (leftMillis <= 1000) {
            throw new IOException("no time left to ask Modal for the tunnel of port " + port);
        }
        float wait = Math.min(MAX_WAIT_SECONDS, (leftMillis - 1000) / 1000f);
        SandboxGetTunnelsRequest req = SandboxGetTunnelsRequest.newBuilder().setSandboxId(sandboxId).setTimeout(wait).build();
        SandboxGetTunnelsResponse r = client.bounded(CallKind.READ, v2 ? "SandboxGetTunnelsV2" : "SandboxGetTunnels",
                Resource.sandbox(sandboxId), deadline, "give the tunnel of port " + port, (a, left) -> {
                    var st = client.controlStub(a).withDeadlineAfter(left, java.util.concurrent.TimeUnit.MILLISECONDS);
                    return v2 ? st.sandboxGetTunnelsV2(req) : st.sandboxGetTunnels(req);
                });
        if (r.hasResult() && r.getResult().getStatus() == 4) {
            throw new IOException("Modal's tunnels of sandbox " + sandboxId + " were not up within " + Math.round(wait) + " s");
        }
        if (r.hasResult() && r.getResult().getStatus() > 1) {
            throw new IOException("the Modal sandbox " + sandboxId + " has ended, its tunnels with it");
        }
        SortedSet<Integer> open = new TreeSet<>();
        for (TunnelData t : r.getTunnelsList()) {
            open.add(t.getContainerPort());
            if (t.getContainerPort() == port) {
                return url(t);
            }
        }
        throw new ConfigurationException("port " + port + " has no tunnel on Modal sandbox " + sandboxId + " ("
                + (open.isEmpty() ? "it has none" : "it has " + open.stream().map(String::valueOf).collect(Collectors.joining(",")))
                + "); ports are declared when the sandbox is created: open one with " + Ports.KEY + "=" + port
                + " (airlock up --port " + port + ")");
    }

    /** The raw TCP endpoint of an unencrypted port; a port declared encrypted (by another client) has only TLS. */
    private static URI url(TunnelData t) {
        if (t.hasUnencryptedHost() && t.hasUnencryptedPort() && !t.getUnencryptedHost().isBlank()) {
            return URI.create("http://" + host(t.getUnencryptedHost()) + ":" + t.getUnencryptedPort() + "/");
        }
        return URI.create("https://" + host(t.getHost()) + (t.getPort() == 443 || t.getPort() == 0 ? "" : ":" + t.getPort()) + "/");
    }

    private static String host(String h) {
        return h.contains(":") && !h.startsWith("[") ? "[" + h + "]" : h;
    }
}

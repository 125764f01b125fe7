package dev.airlock.spi;

import dev.airlock.event.ExecListener;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.settings.Settings;

import java.util.List;
import java.util.Optional;

/**
 * What a provider receives to open an environment.
 *
 * @param settings        the layered settings
 * @param approvalChannel a human channel for writes that need approval, if the runtime has one
 * @param listeners       observers of every exec, denial and approval
 */
public record OpenContext(Settings settings, Optional<ApprovalChannel> approvalChannel, List<ExecListener> listeners) {

    public OpenContext {
        listeners = List.copyOf(listeners);
    }

    public static OpenContext of(Settings settings) {
        return new OpenContext(settings, Optional.empty(), List.of());
    }

    public OpenContext withApprovalChannel(ApprovalChannel channel) {
        return new OpenContext(settings, Optional.of(channel), listeners);
    }

    public OpenContext withListener(ExecListener listener) {
        List<ExecListener> l = new java.util.ArrayList<>(listeners);
        l.add(listener);
        return new OpenContext(settings, approvalChannel, l);
    }
}

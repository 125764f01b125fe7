package dev.airlock.modal;

import dev.airlock.modal.proto.SandboxInfo;
import dev.airlock.modal.proto.SandboxListRequest;
import dev.airlock.modal.proto.SandboxListResponse;
import dev.airlock.modal.proto.SandboxTag;
import dev.airlock.remote.Resource;
import dev.airlock.spi.ResourceLabels;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code airlock gc} for Modal: the running sandboxes tagged by this owner (the service filters on
 * the tags), older than asked, kept ones only when asked; each terminated with its own family's
 * RPC. Both list families are read, so a sandbox made with either is found.
 */
final class ModalGc {
    /** Modal's tags take the cloud spelling of {@link ResourceLabels}: {@code airlock.managed}, ... */
    static final String PREFIX = "airlock.";

    private ModalGc() {
    }

    static List<SandboxTag> tags(ResourceLabels labels) {
        List<SandboxTag> out = new ArrayList<>();
        labels.asMap(PREFIX).forEach((k, v) -> out.add(SandboxTag.newBuilder().setTagName(k).setTagValue(v).build()));
        return out;
    }

    /** Terminates this owner's orphans and returns their ids. */
    static List<String> collect(ModalClient client, Duration olderThan, boolean includeKept) {
        client.authenticate();
        String owner = ResourceLabels.currentOwner();
        Instant now = Instant.now();
        List<String> removed = new ArrayList<>();
        for (boolean v2 : List.of(false, true)) {
            for (SandboxInfo info : list(client, v2)) {
                Optional<ResourceLabels> labels = ResourceLabels.parse(tagMap(info), PREFIX);
                if (labels.isPresent() && labels.get().collectable(owner, now, olderThan, includeKept)) {
                    ModalSandbox.terminate(client, info.getId(), v2);
                    removed.add(info.getId());
                }
            }
        }
        return removed;
    }

    /** Every running sandbox of one family carrying this owner's selector tags, page by page. */
    private static List<SandboxInfo> list(ModalClient client, boolean v2) {
        List<SandboxTag> selector = new ArrayList<>();
        ResourceLabels.selector(PREFIX).forEach((k, v) -> selector.add(SandboxTag.newBuilder().setTagName(k).setTagValue(v).build()));
        return list(client, v2, selector);
    }

    /** Every running sandbox of one family in the environment carrying {@code selector} (none: every one), page by page. */
    static List<SandboxInfo> list(ModalClient client, boolean v2, List<SandboxTag> selector) {
        Set<String> seen = new LinkedHashSet<>();
        List<SandboxInfo> out = new ArrayList<>();
        double before = 0;
        while (true) {
            double from = before;
            SandboxListRequest q = SandboxListRequest.newBuilder().setBeforeTimestamp(from)
                    .setEnvironmentName(client.settings.environment()).setIncludeFinished(false).addAllTags(selector).build();
            SandboxListResponse page = client.control(v2 ? "SandboxListV2" : "SandboxList", Resource.none(),
                    st -> v2 ? st.sandboxListV2(q) : st.sandboxList(q));
            boolean progressed = false;
            for (SandboxInfo info : page.getSandboxesList()) {
                if (seen.add(info.getId())) {
                    out.add(info);
                    progressed = true;
                }
            }
            if (page.getSandboxesCount() == 0 || !progressed) {
                return out; // the end, or a service that ignores before_timestamp: stop rather than loop
            }
            before = page.getSandboxes(page.getSandboxesCount() - 1).getCreatedAt();
        }
    }

    static Map<String, String> tagMap(SandboxInfo info) {
        Map<String, String> m = new LinkedHashMap<>();
        info.getTagsList().forEach(t -> m.put(t.getTagName(), t.getTagValue()));
        return m;
    }
}

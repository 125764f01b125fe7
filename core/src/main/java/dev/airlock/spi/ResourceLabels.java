package dev.airlock.spi;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The labels (tags) every sandbox or container a backend creates carries, so {@code airlock gc}
 * finds what a process that died before closing left behind, and only that: resources this owner
 * made, older than asked, kept ones ({@code airlock up}) only when asked. A backend writes them with
 * its service's label syntax ({@code prefix}: Docker uses {@code dev.airlock.}, the clouds
 * {@code airlock.}) and reads them back with {@link #parse}.
 *
 * @param owner   who made it: {@code user@host} of the JVM; gc never touches another owner's
 * @param created when, to the second
 * @param version Airlock's version that made it
 * @param kept    made by {@code up}: outlives its process on purpose
 * @param holder  the process that uses it ({@link Holder}), empty for a kept one or where it cannot
 *                be told: gc leaves a resource alone while its holder runs, however old it is
 */
public record ResourceLabels(String owner, Instant created, String version, boolean kept, String holder) {
    public static final String MANAGED = "managed";
    public static final String OWNER = "owner";
    public static final String CREATED = "created";
    public static final String VERSION = "version";
    public static final String KEEP = "keep";
    public static final String HOLDER = "holder";

    public ResourceLabels {
        holder = holder == null ? "" : holder;
    }

    /** Labels without a holder (read from a resource made before holders, or kept). */
    public ResourceLabels(String owner, Instant created, String version, boolean kept) {
        this(owner, created, version, kept, "");
    }

    /**
     * Labels for a resource made now by this JVM's owner; held by this JVM unless kept ({@code up}
     * makes it to outlive the process).
     */
    public static ResourceLabels now(boolean kept) {
        return new ResourceLabels(currentOwner(), Instant.now().truncatedTo(ChronoUnit.SECONDS), airlockVersion(), kept,
                kept ? "" : Holder.current().orElse(""));
    }

    /** The labels as the service stores them, each name behind {@code prefix}. */
    public Map<String, String> asMap(String prefix) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(prefix + MANAGED, "true");
        m.put(prefix + OWNER, owner);
        m.put(prefix + CREATED, created.toString());
        m.put(prefix + VERSION, version);
        if (kept) {
            m.put(prefix + KEEP, "true");
        }
        if (!holder.isEmpty()) {
            m.put(prefix + HOLDER, holder);
        }
        return m;
    }

    /** The labels gc filters on at the service, where it can: Airlock's and this owner's. */
    public static Map<String, String> selector(String prefix) {
        return Map.of(prefix + MANAGED, "true", prefix + OWNER, currentOwner());
    }

    /** Reads labels written by {@link #asMap}; empty when the resource is not Airlock's or its labels are damaged. */
    public static Optional<ResourceLabels> parse(Map<String, String> labels, String prefix) {
        if (!"true".equals(labels.get(prefix + MANAGED))) {
            return Optional.empty();
        }
        String owner = labels.get(prefix + OWNER);
        String created = labels.get(prefix + CREATED);
        if (owner == null || created == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(new ResourceLabels(owner, Instant.parse(created), labels.getOrDefault(prefix + VERSION, "unknown"),
                    "true".equals(labels.get(prefix + KEEP)), labels.getOrDefault(prefix + HOLDER, "")));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    /**
     * Whether gc removes it: this owner's, created more than {@code olderThan} before {@code now},
     * kept only when asked, and not held by a process that still runs on this machine (an
     * environment open longer than asked, or one whose exec runs right now).
     */
    public boolean collectable(String owner, Instant now, Duration olderThan, boolean includeKept) {
        return this.owner.equals(owner) && (includeKept || !kept) && !created.isAfter(now.minus(olderThan))
                && !Holder.alive(holder);
    }

    /** {@code user@host} of this JVM ({@code HOSTNAME} first, as a container's is what users see). */
    public static String currentOwner() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                host = "unknown";
            }
        }
        return System.getProperty("user.name", "unknown") + "@" + host;
    }

    /** Airlock's version from the build. */
    public static String airlockVersion() {
        try (InputStream in = ResourceLabels.class.getResourceAsStream("airlock-version.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version", "unknown");
            }
        } catch (IOException ignored) {
            // an unreadable resource: the label says so
        }
        return "unknown";
    }
}

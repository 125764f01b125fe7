package dev.airlock.docker;

import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.model.Device;
import com.github.dockerjava.api.model.DeviceRequest;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Container options beyond the defaults, each as its {@code docker run} flag does: a read-only
 * root with writable tmpfs mounts, ulimits, {@code /dev/shm}'s size, a storage quota (where the
 * storage driver has one), devices, GPUs and the platform. Parsed once; bad values are one line
 * naming the setting.
 *
 * @param readOnly    {@code --read-only}
 * @param tmpfs       {@code --tmpfs PATH[:OPTIONS]}, path to options ({@code /tmp} by default when read-only)
 * @param ulimits     {@code --ulimit NAME=SOFT[:HARD]}
 * @param shmSize     {@code --shm-size}
 * @param storageSize {@code --storage-opt size=}
 * @param devices     {@code --device HOST[:CONTAINER[:PERMISSIONS]]}
 * @param gpus        {@code --gpus}: {@code all} or a count
 * @param platform    {@code --platform}, e.g. {@code linux/amd64}
 */
public record DockerHardening(boolean readOnly, Map<String, String> tmpfs, List<Ulimit> ulimits, OptionalLong shmSize,
                              Optional<String> storageSize, List<Device> devices, Optional<String> gpus,
                              Optional<String> platform) {
    public static final String READ_ONLY = "airlock.docker.read-only";
    public static final String TMPFS = "airlock.docker.tmpfs";
    public static final String ULIMITS = "airlock.docker.ulimits";
    public static final String SHM_SIZE = "airlock.docker.shm-size";
    public static final String STORAGE_SIZE = "airlock.docker.storage-size";
    public static final String DEVICES = "airlock.docker.devices";
    public static final String GPUS = "airlock.docker.gpus";
    public static final String PLATFORM = "airlock.docker.platform";

    /** The limits {@code docker run --ulimit} knows. */
    private static final Set<String> ULIMIT_NAMES = Set.of("core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue",
            "nice", "nofile", "nproc", "rss", "rtprio", "rttime", "sigpending", "stack");
    private static final Pattern ULIMIT = Pattern.compile("([a-z]+)=(-?\\d+)(?::(-?\\d+))?");
    private static final Pattern SIZE = Pattern.compile("\\d+[bkmgBKMG]?");

    public DockerHardening {
        tmpfs = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(tmpfs));
        ulimits = List.copyOf(ulimits);
        devices = List.copyOf(devices);
    }

    static DockerHardening from(Settings s) {
        boolean readOnly = s.getBoolean(READ_ONLY, false);
        Map<String, String> tmpfs = new LinkedHashMap<>();
        for (String t : tmpfsEntries(s.getList(TMPFS))) {
            int colon = t.indexOf(':');
            String path = colon < 0 ? t : t.substring(0, colon);
            if (!path.startsWith("/") || path.equals("/")) {
                throw new ConfigurationException("setting " + TMPFS + " has invalid entry '" + t
                        + "': expected an absolute path other than /, optionally :OPTIONS (e.g. /tmp:size=64m,mode=1777)");
            }
            tmpfs.put(path, colon < 0 ? "" : t.substring(colon + 1));
        }
        if (readOnly && tmpfs.isEmpty()) {
            tmpfs.put("/tmp", "mode=1777"); // the core's private dir and TMPDIR live there
        }
        List<Ulimit> ulimits = new ArrayList<>();
        for (String u : s.getList(ULIMITS)) {
            Matcher m = ULIMIT.matcher(u.trim());
            if (!m.matches() || !ULIMIT_NAMES.contains(m.group(1))) {
                throw new ConfigurationException("setting " + ULIMITS + " has invalid entry '" + u
                        + "': expected NAME=SOFT[:HARD] with NAME one of " + new java.util.TreeSet<>(ULIMIT_NAMES));
            }
            long soft = Long.parseLong(m.group(2));
            long hard = m.group(3) == null ? soft : Long.parseLong(m.group(3));
            if (hard >= 0 && (soft < 0 || soft > hard)) {
                throw new ConfigurationException("setting " + ULIMITS + " has invalid entry '" + u + "': the soft limit exceeds the hard one");
            }
            ulimits.add(new Ulimit(m.group(1), soft, hard));
        }
        OptionalLong shm = s.get(SHM_SIZE).filter(v -> !v.isBlank()).isPresent() ? OptionalLong.of(s.getBytes(SHM_SIZE, 0))
                : OptionalLong.empty();
        if (shm.isPresent() && shm.getAsLong() <= 0) {
            throw new ConfigurationException("setting " + SHM_SIZE + " must be positive, e.g. 256m");
        }
        Optional<String> storage = nonBlank(s, STORAGE_SIZE);
        if (storage.isPresent() && !SIZE.matcher(storage.get()).matches()) {
            throw new ConfigurationException("setting " + STORAGE_SIZE + " has invalid value '" + storage.get() + "': expected a size such as 10g");
        }
        List<Device> devices = new ArrayList<>();
        for (String d : s.getList(DEVICES)) {
            if (!d.startsWith("/") || d.split(":").length > 3) {
                throw new ConfigurationException("setting " + DEVICES + " has invalid entry '" + d
                        + "': expected HOST_PATH[:CONTAINER_PATH[:rwm]]");
            }
            try {
                devices.add(Device.parse(d));
            } catch (RuntimeException e) {
                throw new ConfigurationException("setting " + DEVICES + " has invalid entry '" + d
                        + "': expected HOST_PATH[:CONTAINER_PATH[:rwm]]");
            }
        }
        Optional<String> gpus = nonBlank(s, GPUS);
        if (gpus.isPresent() && !gpus.get().matches("all|[1-9]\\d{0,3}")) {
            throw new ConfigurationException("setting " + GPUS + " has invalid value '" + gpus.get() + "': expected all or a count such as 1");
        }
        Optional<String> platform = nonBlank(s, PLATFORM);
        if (platform.isPresent() && !platform.get().matches("[a-z0-9]+/[a-z0-9_]+(/[a-z0-9]+)?")) {
            throw new ConfigurationException("setting " + PLATFORM + " has invalid value '" + platform.get()
                    + "': expected OS/ARCH[/VARIANT] such as linux/amd64");
        }
        return new DockerHardening(readOnly, tmpfs, ulimits, shm, storage, devices, gpus, platform);
    }

    /** Puts these options on the container about to be created. */
    void apply(HostConfig hc, CreateContainerCmd cmd) {
        if (readOnly) {
            hc.withReadonlyRootfs(true);
        }
        if (!tmpfs.isEmpty()) {
            hc.withTmpFs(tmpfs);
        }
        if (!ulimits.isEmpty()) {
            hc.withUlimits(ulimits);
        }
        shmSize.ifPresent(hc::withShmSize);
        storageSize.ifPresent(size -> hc.withStorageOpt(Map.of("size", size)));
        if (!devices.isEmpty()) {
            hc.withDevices(devices);
        }
        gpus.ifPresent(g -> hc.withDeviceRequests(List.of(new DeviceRequest()
                .withCount(g.equals("all") ? -1 : Integer.parseInt(g))
                .withCapabilities(List.of(List.of("gpu"))))));
        platform.ifPresent(cmd::withPlatform);
    }

    /**
     * The setting a daemon's refusal to create the container points at, if one does: the
     * message is the daemon's own, the setting is what the user can change.
     */
    Optional<String> blame(String daemonMessage) {
        String m = daemonMessage.toLowerCase(java.util.Locale.ROOT);
        if (storageSize.isPresent() && m.contains("storage-opt")) {
            return Optional.of(STORAGE_SIZE);
        }
        if (gpus.isPresent() && (m.contains("device driver") || m.contains("gpu"))) {
            return Optional.of(GPUS);
        }
        if (platform.isPresent() && m.contains("platform")) {
            return Optional.of(PLATFORM);
        }
        if (!devices.isEmpty() && m.contains("device")) {
            return Optional.of(DEVICES);
        }
        if (!ulimits.isEmpty() && m.contains("ulimit")) {
            return Optional.of(ULIMITS);
        }
        return Optional.empty();
    }

    /**
     * The list splits at commas, and tmpfs options have commas too: an item that is not a path
     * continues the options of the path before it ({@code /tmp:size=64m,mode=1777,/run}).
     */
    private static List<String> tmpfsEntries(List<String> items) {
        List<String> out = new ArrayList<>();
        for (String item : items) {
            if (!item.startsWith("/") && !out.isEmpty() && out.get(out.size() - 1).contains(":")) {
                out.set(out.size() - 1, out.get(out.size() - 1) + "," + item);
            } else {
                out.add(item);
            }
        }
        return out;
    }

    private static Optional<String> nonBlank(Settings s, String key) {
        return s.get(key).map(String::trim).filter(v -> !v.isEmpty());
    }
}

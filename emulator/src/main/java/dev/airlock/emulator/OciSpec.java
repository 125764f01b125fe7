package dev.airlock.emulator;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The two OCI documents {@link Gvisor} hands {@code runsc}: the bundle's {@code config.json} (the
 * sandbox's root and mounts, its init) and one {@code process.json} per command. Written as text
 * with {@link Jsons#quote} (the emulator module carries no JSON library), and only the fields
 * that matter here: everything else takes runsc's defaults.
 *
 * <p>Every process, init and commands alike, runs as uid 0 with every capability set empty and
 * no-new-privileges: the same powers as a command under bubblewrap, inside gVisor's kernel.
 */
final class OciSpec {
    /** pid 1: waits, and so reaps every orphan reparented to it (as the unshare anchor's init does). */
    static final List<String> INIT = List.of("sh", "-c", "while :; do sleep 3600 & wait $!; done");

    private OciSpec() {
    }

    /**
     * The bundle's config: {@code root} writable as {@code /}, {@code systemDirs} (names under
     * {@code /}) bound read-only from the host, {@code /tmp} bound from the root explicitly
     * (else runsc mounts a tmpfs of its own over an empty {@code /tmp}, out of the file API's
     * sight), gVisor's own {@code /proc} and {@code /dev}, new pid, network, IPC, UTS and mount
     * namespaces; each of {@code overlays} (a sandbox path to the host file it shows) bound over
     * the system dirs, read-only.
     */
    static String config(String root, List<String> systemDirs, Map<String, java.nio.file.Path> overlays) {
        StringBuilder mounts = new StringBuilder();
        mounts.append(mount("/proc", "proc", "proc", List.of("nosuid", "noexec", "nodev")));
        mounts.append(",\n").append(mount("/dev", "tmpfs", "tmpfs", List.of("nosuid", "strictatime", "mode=755")));
        mounts.append(",\n").append(mount("/dev/pts", "devpts", "devpts", List.of("nosuid", "noexec", "newinstance")));
        mounts.append(",\n").append(mount("/dev/shm", "tmpfs", "shm", List.of("nosuid", "noexec", "nodev")));
        mounts.append(",\n").append(mount("/tmp", "bind", root + "/tmp", List.of("rbind", "rw")));
        for (String d : systemDirs) {
            mounts.append(",\n").append(mount("/" + d, "bind", "/" + d, List.of("rbind", "ro", "nosuid")));
        }
        overlays.forEach((at, file) -> mounts.append(",\n").append(mount(at, "bind", file.toString(), List.of("bind", "ro"))));
        return "{\n\"ociVersion\": \"1.0.0\",\n"
                + "\"process\": " + process(INIT, "/", Map.of("PATH", "/usr/bin:/bin")) + ",\n"
                + "\"root\": {\"path\": " + Jsons.quote(root) + ", \"readonly\": false},\n"
                + "\"mounts\": [\n" + mounts + "\n],\n"
                + "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}, {\"type\": \"ipc\"},"
                + " {\"type\": \"uts\"}, {\"type\": \"mount\"}]}\n}\n";
    }

    /** One command: {@code argv} in {@code cwd} with exactly {@code env}, no terminal, no capability. */
    static String process(List<String> argv, String cwd, Map<String, String> env) {
        List<String> vars = env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).sorted().toList();
        return "{\"terminal\": false, \"user\": {\"uid\": 0, \"gid\": 0},"
                + " \"args\": " + array(argv) + ", \"env\": " + array(vars) + ", \"cwd\": " + Jsons.quote(cwd) + ","
                + " \"capabilities\": {\"bounding\": [], \"effective\": [], \"inheritable\": [], \"permitted\": [],"
                + " \"ambient\": []}, \"noNewPrivileges\": true}";
    }

    private static String mount(String destination, String type, String source, List<String> options) {
        return "{\"destination\": " + Jsons.quote(destination) + ", \"type\": " + Jsons.quote(type)
                + ", \"source\": " + Jsons.quote(source) + ", \"options\": " + array(options) + "}";
    }

    private static String array(List<String> values) {
        return values.stream().map(Jsons::quote).collect(Collectors.joining(", ", "[", "]"));
    }
}

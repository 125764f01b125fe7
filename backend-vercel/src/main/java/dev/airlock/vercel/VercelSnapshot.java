package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * {@code Environment.snapshot()} on Vercel: the service's snapshot of the session
 * ({@code POST /sessions/{id}/snapshot}), which stops the session, then a new session of the same
 * sandbox booted from that snapshot ({@code PATCH currentSnapshotId}, {@code GET ?resume=true}), so
 * the environment carries on with its files. Airlock's own dirs are not in the snapshot: the
 * private dir is packed into a tar kept on this machine (0600) and removed before the snapshot,
 * and unpacked again in the new session; the output dir is removed. Commands still running when
 * the snapshot is taken end with the session, as on the service.
 */
final class VercelSnapshot {
    private static final Logger LOG = LoggerFactory.getLogger(VercelSnapshot.class);

    /** {@code sh -c PARK airlock ARCHIVE DIR...}: the dirs that exist, packed into ARCHIVE and removed; 3 when none does. */
    private static final String PARK = "a=$1; shift; n=$#; i=0\n"
            + "while [ \"$i\" -lt \"$n\" ]; do d=$1; shift; [ -e \"$d\" ] && set -- \"$@\" \"${d#/}\"; i=$((i+1)); done\n"
            + "[ \"$#\" -eq 0 ] && exit 3\n"
            + "umask 077 && tar -C / -czf \"$a\" \"$@\" && cd / && rm -rf \"$@\"\n";
    /** {@code sh -c UNPARK airlock ARCHIVE}: the dirs back as they were, then the archive removed. */
    private static final String UNPARK = "tar -C / -xzpf \"$1\"; r=$?; rm -f \"$1\"; exit $r\n";

    /** Where the sandbox now is: the new session, once resumed. */
    interface Resumed {
        void to(VercelApi.SessionInfo session);
    }

    private final VercelApi api;
    private final String sandboxName;
    /** Told each snapshot's id as soon as the service made it (the ledger gc reads). */
    private final java.util.function.Consumer<String> taken;

    VercelSnapshot(VercelApi api, String sandboxName, java.util.function.Consumer<String> taken) {
        this.api = api;
        this.sandboxName = sandboxName;
        this.taken = taken;
    }

    /**
     * Takes the snapshot of {@code sessionId} without {@code privateDir} and {@code outputDir},
     * resumes the sandbox from it (telling {@code resumed}) and returns its id.
     */
    String take(String sessionId, String privateDir, String outputDir, Resumed resumed) throws IOException {
        String archive = "/tmp/.airlock-park-" + UUID.randomUUID().toString().substring(0, 12) + ".tgz";
        Path local = Files.createTempFile("airlock-vercel-park-", ".tgz",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            boolean parked = park(sessionId, archive, local, privateDir);
            String live = sessionId;
            String id;
            try {
                remove(sessionId, List.of(outputDir, archive));
                id = api.snapshot(sessionId);
                taken.accept(id);
                api.setCurrentSnapshot(sandboxName, id);
                VercelApi.SessionInfo next = api.resume(sandboxName);
                VercelBackend.awaitRunning(api, next.sessionId());
                live = next.sessionId();
                resumed.to(next);
            } finally {
                if (parked) {
                    unpark(live, archive, local);
                }
            }
            return id;
        } finally {
            Files.deleteIfExists(local);
        }
    }

    /** Packs the private dir into {@code archive}, removes it, and copies the archive to {@code local}; false when there was none. */
    private boolean park(String sessionId, String archive, Path local, String privateDir) throws IOException {
        int code = run(sessionId, PARK, List.of(archive, privateDir));
        if (code == 3) {
            return false;
        }
        if (code != 0) {
            throw new IOException("could not set Airlock's private dir " + privateDir + " aside before the snapshot (tar or rm exited "
                    + code + ")");
        }
        try (InputStream in = api.read(sessionId, archive); OutputStream out = Files.newOutputStream(local)) {
            in.transferTo(out);
        }
        return true;
    }

    /** Puts the private dir back in {@code sessionId} from the archive kept here; logged when it cannot. */
    private void unpark(String sessionId, String archive, Path local) {
        try {
            long size = Files.size(local);
            api.write(sessionId, archive, 0600, new VercelApi.TarSource() {
                @Override
                public long size() {
                    return size;
                }

                @Override
                public void writeTo(OutputStream o) throws IOException {
                    try (InputStream in = Files.newInputStream(local)) {
                        in.transferTo(o);
                    }
                }
            });
            int code = run(sessionId, UNPARK, List.of(archive));
            if (code != 0) {
                throw new BackendException("tar exited " + code);
            }
        } catch (IOException | AirlockException e) {
            LOG.warn("could not restore Airlock's private dir in the Vercel sandbox {} after the snapshot: {}", sandboxName,
                    e.getMessage());
        }
    }

    private void remove(String sessionId, List<String> paths) {
        List<String> argv = new ArrayList<>(List.of("rm", "-rf", "--"));
        argv.addAll(paths);
        api.await(sessionId, api.run(sessionId, argv, null));
    }

    private int run(String sessionId, String script, List<String> args) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "airlock"));
        argv.addAll(args);
        return api.await(sessionId, api.run(sessionId, argv, null));
    }
}

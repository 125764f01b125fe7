package dev.airlock.docker;

import com.github.dockerjava.api.command.InspectContainerResponse;
import dev.airlock.shell.Shell;

import java.util.ArrayList;
import java.util.List;

/**
 * Where Docker's archive API writes what the container's commands see: the root filesystem when
 * it is writable, and the volume and bind mounts the daemon made (it mounts them again to unpack
 * into them). Not a tmpfs, nor any mount a command made: the daemon unpacks beneath those.
 *
 * @param writable     whether the root filesystem is writable and archive writes are on at all
 * @param daemonMounts the container paths of the daemon's writable volume and bind mounts
 */
record ArchiveMounts(boolean writable, List<String> daemonMounts) {
    ArchiveMounts {
        daemonMounts = List.copyOf(daemonMounts);
    }

    /** No archive writes: every write takes the shell path. */
    static final ArchiveMounts NONE = new ArchiveMounts(false, List.of());

    /** From the container's inspect: {@code ReadonlyRootfs} and its {@code Mounts} (a tmpfs there has no source). */
    static ArchiveMounts of(InspectContainerResponse r) {
        boolean readOnly = r.getHostConfig() != null && Boolean.TRUE.equals(r.getHostConfig().getReadonlyRootfs());
        List<String> mounts = new ArrayList<>();
        if (r.getMounts() != null) {
            for (InspectContainerResponse.Mount m : r.getMounts()) {
                if (m.getDestination() != null && m.getSource() != null && !m.getSource().isEmpty() && Boolean.TRUE.equals(m.getRW())) {
                    mounts.add(m.getDestination().getPath());
                }
            }
        }
        return new ArchiveMounts(!readOnly, mounts);
    }

    /**
     * Shell lines that exit {@code useShell} unless the directory in {@code $VAR} (physical,
     * existing) lies on the root filesystem or one of {@link #daemonMounts}, each mounted once:
     * the mount holding it is the longest mount point in the container's {@code mountinfo} that is
     * a prefix of it, read now. A name that mountinfo would escape (space, tab, newline,
     * backslash) is not matched at all; nor is anything when mountinfo cannot be read.
     */
    String checkScript(String var, int useShell) {
        StringBuilder allowed = new StringBuilder("/");
        for (String m : daemonMounts) {
            allowed.append('|').append(Shell.quote(m));
        }
        String v = "\"$" + var + "\"";
        return "nl='\n'; tab=$(printf '\\t')\n"
                + "case " + v + " in *\" \"*|*\"$tab\"*|*\"$nl\"*|*\\\\*) exit " + useShell + " ;; esac\n"
                + "own=; len=-1; count=0\n"
                + "while read -r _ _ _ _ mp _; do\n"
                + "  case " + v + "/ in \"${mp%/}\"/*)\n"
                + "    if [ ${#mp} -gt $len ]; then own=$mp; len=${#mp}; count=1\n"
                + "    elif [ \"$mp\" = \"$own\" ]; then count=$((count + 1)); fi ;;\n"
                + "  esac\n"
                + "done < /proc/self/mountinfo\n"
                + "[ \"$count\" = 1 ] || exit " + useShell + "\n"
                + "case $own in " + allowed + ") ;; *) exit " + useShell + " ;; esac\n";
    }
}

package dev.airlock;

/**
 * The machine a backend runs commands on, probed once when the environment opens with one POSIX
 * {@code sh} script. Paths, {@code ~}, symlinks and protected homes are judged here, never on the
 * JVM's host.
 *
 * @param os              {@code uname -s}
 * @param hostname        {@code uname -n}
 * @param uid             numeric user id
 * @param user            user name ({@code id -un}), or the uid when it has none
 * @param passwdHome      the home from the passwd database (empty when unknown)
 * @param processHome     {@code $HOME} of the login environment before Airlock changed it
 * @param home            the home the environment's commands get ({@code ~} expands to it)
 * @param tempDir         the shared temp dir of the target ({@code $TMPDIR} or {@code /tmp})
 * @param privateDir      the environment's private 0700 dir (staged files, scripts, scratch TMPDIR)
 * @param shell           the shell that runs commands: {@code bash} or {@code sh}
 * @param container       whether the target is judged a container
 * @param containerSignal what decided that (a file, a variable, a cgroup line, a setting, or "none")
 */
public record Target(String os, String hostname, int uid, String user, String passwdHome, String processHome,
                     String home, String tempDir, String privateDir, String shell, boolean container,
                     String containerSignal) {

    public boolean hasBash() {
        return "bash".equals(shell);
    }

    /** The scratch dir children get as TMPDIR, TMP and TEMP. */
    public String scratchDir() {
        return privateDir + "/tmp";
    }

    /** The dir for staged stdin, scripts and output files. */
    public String stagingDir() {
        return privateDir + "/run";
    }

    /** Expands a leading {@code ~} or {@code ~/} to {@link #home()}; other paths are returned as given. */
    public String expand(String path) {
        if (path.equals("~")) {
            return home;
        }
        if (path.startsWith("~/")) {
            return home + path.substring(1);
        }
        return path;
    }

}

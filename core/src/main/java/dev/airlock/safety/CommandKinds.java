package dev.airlock.safety;

import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What the guard knows about a command beyond the files {@link WriteCommands} finds it writing.
 * The rule these tables serve: a command the guard cannot read with certainty has every path it
 * mentions judged as a possible write, so a protected one asks (never a silent allow, never a
 * deny); a command that runs other command text has that text read where it is a literal, and asks
 * where it is made at run time by something the guard cannot read.
 */
final class CommandKinds {
    private CommandKinds() {
    }

    /** Commands that only read their operands: a protected path among them stays allowed. */
    static final Set<String> READERS = Set.of("cat", "tac", "less", "more", "most", "head", "tail", "grep", "egrep",
            "fgrep", "rg", "ag", "ack", "ls", "dir", "stat", "file", "wc", "diff", "cmp", "comm", "md5sum", "sha1sum",
            "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "readlink", "realpath",
            "basename", "dirname", "du", "df", "tree", "which", "type", "whereis", "echo", "printf", "pwd", "id",
            "whoami", "date", "uname", "hostname", "bat", "batcat", "nl", "cut", "tr", "od", "hexdump", "strings",
            "column", "fold", "fmt", "paste", "join", "expand", "unexpand", "look", "ssh-add", "kill", "ps", "sleep",
            "seq", "yes", "base64", "base32", "jq", "getent", "lsof", "pgrep", "printenv", "locale", "tput", "stty",
            "clear", "exit", "return", "shift", "wait", "jobs", "fg", "bg", "umask", "ulimit", "set", "shopt",
            "complete", "history", "help", "man", "info", "apropos", "sha1", "md5", "cd", "pushd", "popd", "dirs",
            "ssh-copy-id", "sftp");

    /**
     * Writers {@link WriteCommands} reads completely: every file they write is found, and their other
     * operands are read (the sources of a copy), so their mentions are not judged again.
     */
    static final Set<String> PRECISE = Set.of("tee", "cp", "mv", "install", "rsync", "scp", "sed", "dd", "truncate",
            "chmod", "chown", "chgrp", "chattr", "setfacl", "rm", "rmdir", "unlink", "shred", "touch", "mkdir",
            "mkfifo", "mknod", "sort", "uniq", "ssh-keygen", "wget", "unzip", "ln", "fallocate", "openssl", "csplit",
            "vi", "vim", "nvim", "ex", "view", "vimdiff", "gvim", "ed", "red", "tar");

    /**
     * A program that runs a command given after its own options and {@code fixed} operands.
     *
     * @param valued    options that take a value (the next word, or after {@code =} / in the bundle)
     * @param fixed     operands before the command ({@code taskset MASK}, {@code flock FILE}, {@code chroot DIR})
     * @param fixedUse  what the fixed operands are: "" nothing, "write" a file it creates, "root" the root it runs in
     * @param chdir     options whose value is the directory the command runs in
     * @param writes    options whose value is a file it writes
     * @param text      options whose value is shell text it runs
     * @param noCommand options after which no command follows (a pid mode)
     */
    record Wrapper(Set<String> valued, int fixed, String fixedUse, Set<String> chdir, Set<String> writes,
                   Set<String> text, Set<String> noCommand) {
        static Wrapper of(Set<String> valued, int fixed) {
            return new Wrapper(valued, fixed, "", Set.of(), Set.of(), Set.of(), Set.of());
        }
    }

    static final Map<String, Wrapper> WRAPPERS = Map.ofEntries(
            Map.entry("taskset", new Wrapper(Set.of(), 1, "", Set.of(), Set.of(), Set.of(), Set.of("-p", "--pid"))),
            Map.entry("flock", new Wrapper(Set.of("-w", "--wait", "--timeout", "-E", "--conflict-exit-code"), 1, "write",
                    Set.of(), Set.of(), Set.of("-c", "--command"), Set.of())),
            Map.entry("chroot", new Wrapper(Set.of("--userspec", "--groups"), 1, "root", Set.of(), Set.of(), Set.of(), Set.of())),
            Map.entry("setpriv", Wrapper.of(Set.of("--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps",
                    "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile",
                    "--landlock-access", "--landlock-rule", "--seccomp-filter"), 0)),
            Map.entry("prlimit", Wrapper.of(Set.of("-p", "--pid", "-o", "--output"), 0)),
            Map.entry("unshare", new Wrapper(Set.of("-R", "--root", "-w", "--wd", "-S", "--setuid", "-G", "--setgid",
                    "--propagation", "--setgroups", "--map-user", "--map-group", "--map-users", "--map-groups",
                    "--monotonic", "--boottime", "-l", "--load-interp"), 0, "", Set.of("-w", "--wd"), Set.of(),
                    Set.of(), Set.of())),
            Map.entry("setarch", Wrapper.of(Set.of(), 1)),
            Map.entry("linux32", Wrapper.of(Set.of(), 0)),
            Map.entry("linux64", Wrapper.of(Set.of(), 0)),
            Map.entry("i386", Wrapper.of(Set.of(), 0)),
            Map.entry("x86_64", Wrapper.of(Set.of(), 0)),
            Map.entry("chrt", new Wrapper(Set.of("-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"),
                    1, "", Set.of(), Set.of(), Set.of(), Set.of("-p", "--pid"))),
            Map.entry("strace", new Wrapper(Set.of("-o", "--output", "-e", "-p", "--attach", "-s", "--string-limit", "-u",
                    "--user", "-P", "--trace-path", "-X", "-a", "--columns", "-b", "-E", "--env", "-I", "-O", "-S",
                    "--summary-sort-by", "-U", "--summary-columns"), 0, "", Set.of(), Set.of("-o", "--output"), Set.of(),
                    Set.of())),
            Map.entry("ltrace", new Wrapper(Set.of("-o", "--output", "-e", "-p", "-s", "-u", "-l", "--library", "-n",
                    "--indent", "-a", "--align", "-A", "-D", "--debug", "-F", "--config", "-x"), 0, "", Set.of(),
                    Set.of("-o", "--output"), Set.of(), Set.of())),
            Map.entry("nsenter", Wrapper.of(Set.of("-t", "--target", "-S", "--setuid", "-G", "--setgid"), 0)),
            Map.entry("numactl", Wrapper.of(Set.of("-N", "--cpunodebind", "-m", "--membind", "-C", "--physcpubind", "-i",
                    "--interleave", "-p", "--preferred"), 0)),
            Map.entry("faketime", Wrapper.of(Set.of(), 1)),
            Map.entry("cpulimit", Wrapper.of(Set.of("-l", "--limit", "-p", "--pid", "-e", "--exe"), 0)),
            Map.entry("valgrind", new Wrapper(Set.of(), 0, "", Set.of(), Set.of("--log-file"), Set.of(), Set.of())),
            Map.entry("xvfb-run", new Wrapper(Set.of("-n", "--server-num", "-s", "--server-args", "-e", "--error-file",
                    "-f", "--auth-file", "-w", "--wait", "-p", "--xauth-protocol"), 0, "", Set.of(),
                    Set.of("-e", "--error-file", "-f", "--auth-file"), Set.of(), Set.of())),
            Map.entry("dbus-run-session", Wrapper.of(Set.of("--config-file", "--dbus-daemon"), 0)),
            Map.entry("systemd-run", new Wrapper(Set.of("-u", "--unit", "-p", "--property", "-E", "--setenv",
                    "--working-directory", "-M", "--machine", "--description", "--slice", "--uid", "--gid", "--nice",
                    "-H", "--host"), 0, "", Set.of("--working-directory"), Set.of(), Set.of(), Set.of())));

    /** Interpreters and the options whose value is inline code. */
    static final Map<String, Set<String>> INTERPRETERS = Map.ofEntries(
            Map.entry("python", Set.of("-c")), Map.entry("pypy", Set.of("-c")), Map.entry("pypy3", Set.of("-c")),
            Map.entry("perl", Set.of("-e", "-E")), Map.entry("ruby", Set.of("-e")),
            Map.entry("node", Set.of("-e", "--eval", "-p", "--print")), Map.entry("nodejs", Set.of("-e", "--eval", "-p", "--print")),
            Map.entry("bun", Set.of("-e", "--eval", "-p", "--print")), Map.entry("deno", Set.of("eval")),
            Map.entry("php", Set.of("-r")), Map.entry("lua", Set.of("-e")), Map.entry("luajit", Set.of("-e")),
            Map.entry("Rscript", Set.of("-e")), Map.entry("julia", Set.of("-e", "--eval", "-E", "--print")),
            Map.entry("osascript", Set.of("-e")), Map.entry("pwsh", Set.of("-c", "-Command", "-command")),
            Map.entry("groovy", Set.of("-e")), Map.entry("tclsh", Set.of()), Map.entry("expect", Set.of("-c")));

    /** Other names the reader knows: writers, wrappers it unwraps itself, shells. */
    private static final Set<String> OTHER_KNOWN = Set.of("awk", "gawk", "mawk", "nawk", "split", "script", "git",
            "perl", "ruby", "curl", "tar", "mount", "patch", "sudo", "doas", "env", "xargs", "eval", "find", "nice",
            "ionice", "stdbuf", "timeout", "nohup", "setsid", "exec", "command", "builtin", "busybox", "toybox", "watch",
            "su", "runuser", "sg", "time", "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "python",
            "python3", "node", "ssh", "tmux", "screen", "parallel", "gdb", "link", "source", "alias", "hash", "trap",
            "export", "declare", "unset", "read", "mapfile");

    /** The commands a pattern in a command word ({@code te[e]}, {@code t?e}) may name, of those the guard knows. */
    static java.util.List<String> namesMatching(String pattern) {
        java.util.List<String> out = new java.util.ArrayList<>();
        java.util.stream.Stream.of(READERS, PRECISE, WRAPPERS.keySet(), INTERPRETERS.keySet(), OTHER_KNOWN)
                .flatMap(Set::stream).distinct().sorted()
                .filter(n -> PathPattern.matches(pattern, n)).forEach(out::add);
        return out;
    }

    /** An interpreter's name: {@code python3.12} is {@code python}. */
    static String interpreter(String name) {
        if (name.matches("python[0-9.]*")) {
            return "python";
        }
        if (name.matches("(perl|ruby|lua|php)[0-9.]*")) {
            return name.replaceAll("[0-9.]+$", "");
        }
        return INTERPRETERS.containsKey(name) ? name : null;
    }

    /** Programs whose output is meant for {@code eval} or {@code source}: shell set-up, not a payload. */
    static final Set<String> ENV_PRINTERS = Set.of("ssh-agent", "pyenv", "rbenv", "nodenv", "goenv", "jenv", "plenv",
            "direnv", "conda", "micromamba", "brew", "opam", "dircolors", "starship", "zoxide", "mise", "rtx", "asdf",
            "fnm", "thefuck", "luarocks", "keychain", "gpg-agent", "register-python-argcomplete", "gpgconf", "locale",
            "resize", "tset", "lesspipe", "lesspipe.sh", "pkg-config", "minikube", "atuin", "fzf", "poetry", "pipenv",
            "navi", "tmuxifier", "chruby", "pdm", "rye", "uv", "nix", "devbox", "just", "kubectl", "helm", "gh", "npm");

    /**
     * Programs whose output, put into a path, cannot lead to a protected file: a fresh temporary
     * name, a date, a machine or user name. A value made by anything else ({@code $(cat f)}) is computed.
     */
    static final Set<String> PLAIN_PRODUCERS = Set.of("mktemp", "date", "uname", "whoami", "id", "hostname", "nproc",
            "pwd", "arch", "seq");

    /**
     * Whether a command substitution's text is one {@link #PLAIN_PRODUCERS} call, or lists files of the
     * workdir by relative names ({@code git ls-files}, {@code find .}, {@code ls src}).
     */
    static boolean plainProducer(String text) {
        String t = text.strip();
        if (t.matches("(?s).*[;&|<>`$\\n].*")) {
            return false;
        }
        String first = t.split("\\s+")[0];
        return PLAIN_PRODUCERS.contains(first) || t.matches("git (rev-parse|ls-files|diff --name-only|grep -l)\\b.*")
                || (t.matches("(find|ls)(\\s+(?![/~])\\S+)*") && !t.contains("..") && !t.matches(".*\\s-(L|follow)\\b.*"));
    }

    /** Programs that turn data into other text: what they feed a shell cannot be read here. */
    static final Set<String> DECODERS = Set.of("base64", "base32", "basenc", "xxd", "uudecode", "openssl", "gpg",
            "gzip", "gunzip", "zcat", "bzip2", "bunzip2", "bzcat", "xz", "unxz", "xzcat", "zstd", "zstdcat", "rev",
            "tr", "od", "iconv", "perl", "python", "python3", "ruby", "node", "awk", "sed", "curl", "wget", "nc",
            "ncat", "socat", "dd");

    /**
     * Inline code that may reach a protected file without spelling its path: it names a protected
     * file, or it finds the home at run time and writes or runs something, or it decodes text to run.
     */
    static boolean codeMayReach(String code) {
        return PROTECTED_IN_CODE.matcher(code).find() || OBFUSCATED.matcher(code).find()
                || (HOME_IN_CODE.matcher(code).find() && WRITES_IN_CODE.matcher(code).find());
    }

    private static final Pattern PROTECTED_IN_CODE = Pattern.compile(
            "authorized_keys|id_rsa|id_ed25519|id_ecdsa|\\.?netrc|\\.pgpass|\\.npmrc|\\.pypirc|git-credentials|\\.ssh\\b"
                    + "|\\.aws\\b|\\.gnupg|\\.kube\\b|\\.docker\\b|\\.azure\\b|sudoers|/etc/passwd|/etc/shadow"
                    + "|airlock\\.properties|approvals\\.list");
    private static final Pattern HOME_IN_CODE = Pattern.compile(
            "expanduser|homedir|\\bHOME\\b|getpwuid|Path\\.home|Dir\\.home|os\\.UserHomeDir|~/");
    private static final Pattern WRITES_IN_CODE = Pattern.compile(
            "open\\s*\\(|write|append|File\\.|fs\\.|copy|move|rename|replace|symlink|link|unlink|remove|rmtree|chmod"
                    + "|mkdir|system|exec|spawn|popen|subprocess|shutil|>|print\\s+[A-Z]+\\b|IO\\.|Files\\.");
    private static final Pattern OBFUSCATED = Pattern.compile(
            "b64decode|base64|fromCharCode|\\batob\\b|\\bexec\\s*\\(|\\beval\\s*\\(|__import__|\\bchr\\s*\\(|unhexlify"
                    + "|fromhex|(\\\\x[0-9a-fA-F]{2}){4,}|\\bpack\\s*\\(");
}

package dev.airlock.safety;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The write tiers over a set of protected homes on the target: which paths are hard-denied,
 * which need approval, and (optionally) the safe roots outside which nothing may be written.
 * Pure: the caller supplies every home and root in both its spelled and its resolved form.
 */
final class ProtectedPaths {
    /** Hard-denied files under each protected home. */
    static final List<String> HOME_FILES = List.of(".ssh/authorized_keys", ".ssh/id_rsa", ".ssh/id_ed25519",
            ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials");
    /** Hard-denied directories under each protected home (everything inside them). */
    static final List<String> HOME_DIRS = List.of(".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure",
            ".config/gh", ".config/gcloud");
    /** Needs approval; judged before the {@code .ssh} directory rule. */
    static final List<String> HOME_APPROVAL = List.of(".ssh/config");
    /** The reason for {@link #HOME_APPROVAL} files where the kernel keeps their directory read-only. */
    static final String READ_ONLY_IN_SANDBOX = "an SSH client configuration, which this environment's sandbox keeps"
            + " read-only for commands, so no approval can open it";
    static final List<String> SYSTEM_FILES = List.of("sudoers", "passwd", "shadow");
    static final List<String> SYSTEM_DIRS = List.of("sudoers.d", "systemd");
    /** Airlock's own state: its settings (may hold tokens), the approval allowlist, an env file. */
    static final List<String> AIRLOCK_FILES = List.of("airlock.properties", ApprovalStore.FILE_NAME, ".env");
    /** Always writable: the sinks, and the pseudo-files a shell uses for descriptors and sockets. */
    static final Set<String> DEV_SINKS = Set.of("null", "stdout", "stderr", "stdin", "tty", "zero", "full",
            "random", "urandom", "fd", "pts", "shm", "mqueue", "tcp", "udp");

    /** Why a hard verdict denies: each kind has its own message for the user. */
    enum Denial {
        /** A system or credential file, or Airlock's own state. */
        PROTECTED,
        /** A device other than the sinks. */
        DEVICE,
        /** A file the environment's sandbox keeps read-only for commands, so no approval can open it. */
        READ_ONLY_IN_SANDBOX
    }

    private record Rule(List<String> comps, Tier tier, boolean dir, String what, Denial denial) {
        Rule(List<String> comps, Tier tier, boolean dir, String what) {
            this(comps, tier, dir, what, Denial.PROTECTED);
        }
    }

    /**
     * Which rule decided, for the message and the audit.
     *
     * @param denial why a {@link Tier#HARD} verdict denies; null for the other tiers
     */
    record Verdict(Tier tier, String reason, Denial denial) {
        static final Verdict FREE = new Verdict(Tier.FREE, "", null);

        static Verdict approval(String reason) {
            return new Verdict(Tier.APPROVAL, reason, null);
        }

        static Verdict hard(String reason, Denial denial) {
            return new Verdict(Tier.HARD, reason, denial);
        }
    }

    private final List<Rule> rules = new ArrayList<>();
    private final List<List<String>> safeRoots = new ArrayList<>();
    private final List<List<String>> exempt = new ArrayList<>();

    /**
     * @param homes        every protected home, spelled and resolved
     * @param etcDirs      {@code /etc} and its resolved form
     * @param airlockHomes Airlock's state directories, spelled and resolved
     * @param safeRoots    the safe roots (empty: no limit), spelled and resolved
     * @param exemptRoots  always writable even with safe roots (the environment's private dir, the shims Airlock installs)
     */
    ProtectedPaths(Collection<String> homes, Collection<String> etcDirs, Collection<String> airlockHomes,
                   Collection<String> safeRoots, Collection<String> exemptRoots) {
        this(homes, etcDirs, airlockHomes, List.of(), safeRoots, exemptRoots);
    }

    /** @param ownFiles Airlock's own files elsewhere (a config file named with --config), spelled and resolved */
    ProtectedPaths(Collection<String> homes, Collection<String> etcDirs, Collection<String> airlockHomes,
                   Collection<String> ownFiles, Collection<String> safeRoots, Collection<String> exemptRoots) {
        this(homes, etcDirs, airlockHomes, ownFiles, safeRoots, exemptRoots, false);
    }

    /**
     * @param credentialsReadOnly the kernel keeps the credential dirs read-only for commands: the
     *                            approval-tier files inside them ({@link #HOME_APPROVAL}) are then
     *                            hard-denied too, since no approval could let a command write them
     */
    ProtectedPaths(Collection<String> homes, Collection<String> etcDirs, Collection<String> airlockHomes,
                   Collection<String> ownFiles, Collection<String> safeRoots, Collection<String> exemptRoots,
                   boolean credentialsReadOnly) {
        for (String f : distinct(ownFiles)) {
            rules.add(new Rule(PathPattern.concrete(f).comps, Tier.HARD, false, "Airlock's own settings or approvals"));
        }
        for (String h : distinct(homes)) {
            for (String f : HOME_APPROVAL) {
                rules.add(credentialsReadOnly
                        ? new Rule(join(h, f), Tier.HARD, false, READ_ONLY_IN_SANDBOX, Denial.READ_ONLY_IN_SANDBOX)
                        : new Rule(join(h, f), Tier.APPROVAL, false, "an SSH client configuration"));
            }
            for (String f : HOME_FILES) {
                rules.add(new Rule(join(h, f), Tier.HARD, false, "a credential file"));
            }
            for (String d : HOME_DIRS) {
                rules.add(new Rule(join(h, d), Tier.HARD, true, "a credential directory"));
            }
        }
        for (String e : distinct(etcDirs)) {
            for (String f : SYSTEM_FILES) {
                rules.add(new Rule(join(e, f), Tier.HARD, false, "a system file"));
            }
            for (String d : SYSTEM_DIRS) {
                rules.add(new Rule(join(e, d), Tier.HARD, true, "a system directory"));
            }
        }
        rules.add(new Rule(List.of("proc", "sysrq-trigger"), Tier.HARD, false, "a system file"));
        for (String a : distinct(airlockHomes)) {
            for (String f : AIRLOCK_FILES) {
                rules.add(new Rule(join(a, f), Tier.HARD, false, "Airlock's own settings or approvals"));
            }
        }
        for (String r : distinct(safeRoots)) {
            this.safeRoots.add(PathPattern.concrete(r).comps);
        }
        for (String r : distinct(exemptRoots)) {
            this.exempt.add(PathPattern.concrete(r).comps);
        }
    }

    boolean hasSafeRoots() {
        return !safeRoots.isEmpty();
    }

    private static Set<String> distinct(Collection<String> paths) {
        Set<String> out = new LinkedHashSet<>();
        for (String p : paths) {
            if (p != null && p.startsWith("/")) {
                out.add(p);
            }
        }
        return out;
    }

    private static List<String> join(String base, String rel) {
        return PathPattern.concrete(base + "/" + rel).comps;
    }

    /** Whether a spelled path is one of the always-writable sinks ({@code /dev/null}...). */
    static boolean isSink(PathPattern p) {
        return p.absolute && p.open == PathPattern.Open.NONE && p.comps.size() >= 2 && p.comps.get(0).equals("dev")
                && DEV_SINKS.contains(p.comps.get(1)) && p.isConcrete() && throughDescriptor(p) == null;
    }

    /**
     * A path that goes on below an open descriptor ({@code /dev/fd/3/x}, {@code /dev/stdin/x},
     * {@code /proc/self/fd/3/x}): the descriptor may be a directory anywhere, so where it lands is
     * unknown here. Returns what it is, or null.
     */
    private static String throughDescriptor(PathPattern p) {
        List<String> c = p.comps;
        if (c.size() >= 4 && c.get(0).equals("dev") && c.get(1).equals("fd")) {
            return "a path below the open descriptor /dev/fd/" + c.get(2);
        }
        if (c.size() >= 3 && c.get(0).equals("dev") && Set.of("stdin", "stdout", "stderr").contains(c.get(1))) {
            return "a path below /dev/" + c.get(1);
        }
        if (c.size() >= 5 && c.get(0).equals("proc") && c.get(2).equals("fd")) {
            return "a path below an open descriptor in /proc";
        }
        return null;
    }

    /** Protected names as they would show up in a command's text (a path component each). */
    private static final java.util.regex.Pattern PROTECTED_NAME = java.util.regex.Pattern.compile(
            "(?:^|[/\\s'\"=:~`(])(?:authorized_keys|id_rsa|id_ed25519|id_ecdsa|\\.netrc|\\.pgpass|\\.npmrc|\\.pypirc"
                    + "|\\.git-credentials|\\.ssh|\\.aws|\\.gnupg|\\.kube|\\.docker|\\.azure|\\.config/gh|\\.config/gcloud"
                    + "|sudoers(?:\\.d)?|passwd|shadow|airlock\\.properties|approvals\\.list)(?:$|[/\\s'\"*?;|&)`])");

    /**
     * A write whose place the guard cannot resolve (built by {@code ${x:0:9}}, {@code $(...)},
     * {@code read}, arrays, {@code "$@"}, {@code xargs}...) fails closed: it needs a human when the
     * command mentions a protected name, or when it unpacks an archive by its absolute names.
     */
    static boolean unresolvedNeedsApproval(String via, String command) {
        return via.startsWith(ANYWHERE) || PROTECTED_NAME.matcher(command).find();
    }

    /** Whether a relative name spells a protected file or directory ({@code .ssh/x}, {@code .netrc}). */
    static boolean namesProtected(String relative) {
        return PROTECTED_NAME.matcher(relative).find();
    }

    /** How a writer that may write anywhere (tar -xP) starts its {@code via}. */
    static final String ANYWHERE = "anywhere: ";

    /** The tier of touching {@code p} with {@code access}; relative patterns are judged once resolved. */
    Verdict classify(PathPattern p, Access access) {
        if (!p.absolute || isSink(p)) {
            return Verdict.FREE;
        }
        String descriptor = throughDescriptor(p);
        if (descriptor != null) {
            return Verdict.approval(descriptor + ", which may be any directory,");
        }
        Optional<Verdict> device = device(p);
        if (device.isPresent()) {
            return device.get();
        }
        boolean approvalHit = false;
        String approvalWhat = null;
        if (p.isConcrete()) {
            for (Rule r : rules) {
                if (r.tier == Tier.APPROVAL && p.comps.equals(r.comps)) {
                    approvalHit = true;
                    approvalWhat = r.what;
                }
            }
        }
        for (Rule r : rules) {
            if (r.tier != Tier.HARD) {
                continue;
            }
            boolean hit;
            if (r.dir) {
                boolean exactDirMkdir = access == Access.MKDIR && p.isConcrete() && p.comps.equals(r.comps);
                // An approval-tier file inside this directory was judged above, before the directory rule.
                boolean approvalInside = approvalHit && p.comps.size() > r.comps.size()
                        && p.comps.subList(0, r.comps.size()).equals(r.comps);
                hit = !exactDirMkdir && !approvalInside && p.mayBeWithin(r.comps);
            } else {
                hit = p.mayEqual(r.comps);
            }
            // A tree unpacked INTO a directory can land on anything beneath it, like a TREE operation.
            if (!hit && (access == Access.TREE || access == Access.INTO)) {
                hit = p.mayContain(r.comps);
            }
            if (hit) {
                return Verdict.hard(r.what, r.denial);
            }
        }
        if (approvalHit) {
            return Verdict.approval(approvalWhat);
        }
        // ~/$(echo .ssh)/x, ~/${d}/x: a place computed at run time below which a protected file may lie
        if (p.open != PathPattern.Open.NONE && access != Access.MKDIR) {
            for (Rule r : rules) {
                if (p.mayContain(r.comps)) {
                    return Verdict.approval("a path computed at run time that may be " + r.what + ",");
                }
            }
        }
        return Verdict.FREE;
    }

    /** Writing a device other than the sinks can destroy a disk; a glob that may reach one counts. */
    private static Optional<Verdict> device(PathPattern p) {
        if (p.comps.isEmpty() || !PathPattern.matches(p.comps.get(0), "dev")) {
            return Optional.empty();
        }
        if (p.comps.size() == 1) {
            return Optional.empty();
        }
        String second = p.comps.get(1);
        if (!PathPattern.isGlob(second) && DEV_SINKS.contains(second)) {
            return Optional.empty();
        }
        return Optional.of(Verdict.hard("a device", Denial.DEVICE));
    }

    /** With safe roots set: whether {@code p} surely stays inside one of them (or an exempt root). */
    boolean insideSafeRoots(PathPattern p) {
        if (safeRoots.isEmpty() || isSink(p)) {
            return true;
        }
        if (!p.absolute) {
            return true; // judged once resolved
        }
        for (List<String> r : safeRoots) {
            if (p.surelyWithin(r)) {
                return true;
            }
        }
        for (List<String> r : exempt) {
            if (p.surelyWithin(r)) {
                return true;
            }
        }
        return false;
    }
}

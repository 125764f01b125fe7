package dev.airlock.safety;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The answers of {@link TargetResolver#FUNCTIONS} ({@code abs}, {@code canon}, {@code [ -d ]}),
 * computed in this JVM for a target whose file system is this host's as the JVM sees it: the same
 * path names the same file, and Airlock's scripts start in {@code start} with this JVM's
 * environment. It follows the script step by step (the same string operations, the same {@code
 * stat}, {@code lstat} and {@code readlink} calls, the same 40 dangling-link hops, the trailing
 * newlines a command substitution drops), so a write is judged on the very place the script would
 * name, without starting a process for it.
 *
 * <p>Where Java cannot see what the script sees, it does not guess: {@link Unanswerable} sends
 * the caller back to the script. That is a link text that is not UTF-8 (Java's path would name
 * other bytes), a path Java cannot encode, a file-name encoding other than UTF-8, an inherited
 * {@code $PWD} that names the start directory in a spelling shells may keep or tidy, and any way
 * through {@code /proc} (its {@code self}, {@code cwd} and {@code fd} name this JVM here and the
 * script there; {@code /dev/stdout} leads there too).
 *
 * <p>The scripts may see the host's files at other places (a sandbox binds a directory of its own
 * over {@code /tmp}, hides the real home behind an empty one): {@code places} says where a path
 * they name lies on this host, or that this host cannot tell (then the script answers). Every
 * look at the file system goes through it, and no link is followed by this host's kernel: each is
 * read and followed here, in the scripts' names, so a link means here what it means to them.
 *
 * <p>One instance answers one resolution, as one script run would (each link walk is kept for
 * it), on one thread.
 */
public final class HostPaths {
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};
    /** The script's bound on dangling-link hops. */
    private static final int MAX_HOPS = 40;

    private final Path start;
    /** {@code $PWD}, worked out at the first relative path (most writes name absolute ones). */
    private String pwd;
    /** The physical paths walked in this resolution (one script run's worth), by the path given. */
    private final Map<String, Optional<String>> walked = new java.util.HashMap<>();
    private final Map<String, String> environment;
    private final Function<Path, Optional<Path>> places;

    /** The script's answer cannot be computed here; run the script. */
    public static final class Unanswerable extends Exception {
        private static final long serialVersionUID = 1L;

        Unanswerable(String why) {
            super(why, null, false, false);
        }
    }

    /**
     * @param start       the directory the scripts start in (relative: from this JVM's directory)
     * @param environment the variables the scripts inherit ({@code PWD}, {@code AIRLOCK_REAL_HOME} are read)
     * @throws Unanswerable where the host's paths cannot be answered in Java (see the class doc)
     */
    public HostPaths(Path start, Map<String, String> environment) throws Unanswerable {
        this(start, environment, Optional::of);
    }

    /**
     * @param start       the directory the scripts start in, as they name it (relative: from this JVM's directory)
     * @param environment the variables the scripts inherit ({@code PWD}, {@code AIRLOCK_REAL_HOME} are read)
     * @param places      where a path the scripts name (absolute, normal, no link before its last name) lies on
     *                    this host; empty where this host cannot tell ({@link dev.airlock.spi.Backend#hostPlace})
     * @throws Unanswerable where the host's paths cannot be answered in Java (see the class doc)
     */
    public HostPaths(Path start, Map<String, String> environment, Function<Path, Optional<Path>> places)
            throws Unanswerable {
        this.places = places;
        String jnu = System.getProperty("sun.jnu.encoding", "");
        if (!jnu.equalsIgnoreCase("UTF-8") && !jnu.equalsIgnoreCase("UTF8")) {
            throw new Unanswerable("file names are decoded as " + jnu + ", the scripts' output as UTF-8");
        }
        this.start = start.toAbsolutePath();
        this.environment = Map.copyOf(environment);
    }

    /**
     * {@code $PWD} as the shell sets it at start: the inherited value when it is absolute and names
     * the start directory (POSIX shells keep it then), else the physical directory ({@code getcwd}).
     * An inherited value naming it through {@code .}, {@code ..} or extra slashes is kept by dash
     * and tidied by others, so that case runs the script.
     */
    private String pwd(Path start, String inherited) throws Unanswerable {
        String physical = resolved(start.toString(), true)
                .orElseThrow(() -> new Unanswerable("the start directory " + start + " cannot be resolved"));
        if (inherited == null || !inherited.startsWith("/")) {
            return physical;
        }
        try {
            Optional<String> there = resolved(inherited, true);
            if (there.isEmpty()) {
                return physical;
            }
            Object here = Files.readAttributes(host(physical), BasicFileAttributes.class, NOFOLLOW).fileKey();
            if (here == null || !here.equals(Files.readAttributes(host(there.get()), BasicFileAttributes.class, NOFOLLOW).fileKey())) {
                return physical;
            }
        } catch (IOException e) {
            return physical;
        }
        if (!inherited.equals(Path.of(inherited).normalize().toString())) {
            throw new Unanswerable("$PWD " + inherited + " names the start directory in a spelling shells differ on");
        }
        return inherited;
    }

    /** An inherited variable of the scripts. */
    public Optional<String> variable(String name) {
        return Optional.ofNullable(environment.get(name));
    }

    /** {@code abs}: absolute from {@code $PWD}, trailing slashes dropped. */
    String abs(String p) throws Unanswerable {
        if (!p.startsWith("/") && pwd == null) {
            pwd = pwd(start, environment.get("PWD"));
        }
        String a = p.startsWith("/") ? p : pwd + "/" + p;
        while (!a.equals("/") && a.endsWith("/")) {
            a = a.substring(0, a.length() - 1);
        }
        return a;
    }

    /** {@code [ -d p ]}, a relative {@code p} from the start directory. */
    boolean isDirectory(String p) throws Unanswerable {
        String a = p.startsWith("/") ? p : start + "/" + p;
        realpath(a); // refuses a way through /proc
        return stat(a).map(BasicFileAttributes::isDirectory).orElse(false);
    }

    /** {@code canon}: the canonical form of a path whose tail may not exist, as the script prints it. */
    String canon(String path) throws Unanswerable {
        String q = path.startsWith("/") ? path : "/" + path;
        for (int n = 0; ; ) {
            String d = q;
            String r = "";
            while (!d.equals("/") && !d.isEmpty() && !exists(d) && !isLink(d)) {
                r = "/" + d.substring(d.lastIndexOf('/') + 1) + r;
                d = d.substring(0, Math.max(d.lastIndexOf('/'), 0));
                if (d.isEmpty()) {
                    d = "/";
                }
            }
            if (isLink(d) && !exists(d)) {
                realpath(d.substring(0, Math.max(d.lastIndexOf('/'), 0))); // refuses a way through /proc
                Optional<String> l = readlink(d);
                if (l.isEmpty()) {
                    return q;
                }
                String target = l.get();
                if (!target.startsWith("/")) {
                    target = d.substring(0, Math.max(d.lastIndexOf('/'), 0)) + "/" + target;
                }
                q = target + r;
                n++;
                if (n >= MAX_HOPS) {
                    return q;
                }
                continue;
            }
            String x = realpath(d).orElse(d);
            if (x.equals("/")) {
                x = "";
            }
            return (x + r).isEmpty() ? "/" : x + r;
        }
    }

    /** {@code [ -e p ]}: {@code stat} succeeds. */
    private boolean exists(String p) throws Unanswerable {
        return stat(p).isPresent();
    }

    /** {@code [ -L p ]}: {@code lstat} says a link. A trailing slash makes the kernel follow it, so never. */
    private boolean isLink(String p) throws Unanswerable {
        if (p.length() > 1 && p.endsWith("/")) {
            return false;
        }
        Optional<Path> h = lastName(p);
        if (h.isEmpty()) {
            return false;
        }
        try {
            return Files.readAttributes(h.get(), BasicFileAttributes.class, NOFOLLOW).isSymbolicLink();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * {@code stat(p)}: the file at the end of its links, followed here (see the class doc). A
     * trailing slash makes the kernel insist on a directory.
     */
    private Optional<BasicFileAttributes> stat(String p) throws Unanswerable {
        boolean slash = p.length() > 1 && p.endsWith("/");
        Optional<String> real = resolved(p, true);
        if (real.isEmpty()) {
            return Optional.empty();
        }
        try {
            BasicFileAttributes a = Files.readAttributes(host(real.get()), BasicFileAttributes.class, NOFOLLOW);
            return slash && !a.isDirectory() ? Optional.empty() : Optional.of(a);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** {@code $(readlink -- p)}: the link's text, trailing newlines dropped; empty when it fails. */
    private Optional<String> readlink(String p) throws Unanswerable {
        Optional<Path> h = lastName(p);
        if (h.isEmpty()) {
            return Optional.empty();
        }
        return linkText(h.get(), p).map(HostPaths::dropTrailingNewlines);
    }

    /**
     * The host path of {@code p}'s last name in its parent resolved physically (the kernel follows
     * every link before the last name); empty when the parent does not resolve.
     */
    private Optional<Path> lastName(String p) throws Unanswerable {
        int slash = p.lastIndexOf('/');
        String name = p.substring(slash + 1);
        if (name.isEmpty() || name.equals(".") || name.equals("..")) {
            Optional<String> real = resolved(p, true);
            return real.isEmpty() ? Optional.empty() : Optional.of(host(real.get()));
        }
        Optional<String> parent = resolved(slash <= 0 ? "/" : p.substring(0, slash), true);
        if (parent.isEmpty()) {
            return Optional.empty();
        }
        String full = parent.get().equals("/") ? "/" + name : parent.get() + "/" + name;
        if (full.equals("/proc") || full.startsWith("/proc/")) {
            throw new Unanswerable(p + " leads into /proc, whose names differ for the script");
        }
        return Optional.of(host(full));
    }

    /**
     * Where {@code p} (a path as the scripts name it, with no link before its last name) lies on
     * this host.
     */
    private Path host(String p) throws Unanswerable {
        Path named = path(p);
        return places.apply(named).orElseThrow(() -> new Unanswerable(p + " is where this host's view of the files is not the scripts'"));
    }

    /** The link's text as the kernel holds it; empty when it is no link or cannot be read. */
    private static Optional<String> linkText(Path host, String p) throws Unanswerable {
        String t;
        try {
            t = Files.readSymbolicLink(host).toString();
        } catch (IOException e) {
            return Optional.empty();
        }
        if (t.indexOf('\uFFFD') >= 0) {
            throw new Unanswerable("the link " + p + " holds bytes that are not UTF-8");
        }
        return Optional.of(t);
    }

    /**
     * {@code $(readlink -f -- p)} of an existing {@code p}: the physical path, trailing newlines
     * dropped; empty when it fails. Walked here one name at a time ({@code lstat}, {@code readlink})
     * rather than by {@code realpath(3)}, so that a walk entering {@code /proc} is seen: there
     * {@code self}, {@code cwd} and {@code fd} name this JVM, where the script's name the script.
     */
    private Optional<String> realpath(String p) throws Unanswerable {
        return resolved(p, false);
    }

    /**
     * {@link #realpath}, or with {@code strict} the kernel's own resolution ({@code stat}): a
     * name that is no directory ends the path, so one with a trailing slash or {@code .} after it
     * (in the path or in a link's text) fails, where {@code readlink -f} lets it pass.
     */
    private Optional<String> resolved(String p, boolean strict) throws Unanswerable {
        String key = strict ? "\0" + p : p;
        Optional<String> known = walked.get(key);
        if (known == null) {
            known = walk(p, strict);
            walked.put(key, known);
        }
        return known;
    }

    private Optional<String> walk(String p, boolean strict) throws Unanswerable {
        java.util.ArrayDeque<String> todo = new java.util.ArrayDeque<>(List.of(p.split("/", -1)));
        StringBuilder cur = new StringBuilder();
        int links = 0;
        while (!todo.isEmpty()) {
            String c = todo.pollFirst();
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                cur.setLength(Math.max(cur.lastIndexOf("/"), 0));
                continue;
            }
            String next = cur + "/" + c;
            if (next.equals("/proc") || next.startsWith("/proc/")) {
                throw new Unanswerable(p + " leads into /proc, whose names differ for the script");
            }
            BasicFileAttributes a;
            try {
                a = Files.readAttributes(host(next), BasicFileAttributes.class, NOFOLLOW);
            } catch (IOException e) {
                return Optional.empty();
            }
            if (a.isSymbolicLink()) {
                if (++links > MAX_HOPS) {
                    return Optional.empty();
                }
                String text = linkText(host(next), next).orElse(null);
                if (text == null) {
                    return Optional.empty();
                }
                List<String> parts = List.of(text.split("/", -1));
                for (int i = parts.size() - 1; i >= 0; i--) {
                    todo.addFirst(parts.get(i));
                }
                if (text.startsWith("/")) {
                    cur.setLength(0);
                }
                continue;
            }
            if (!a.isDirectory() && (strict ? !todo.isEmpty() : !todo.stream().allMatch(t -> t.isEmpty() || t.equals(".")))) {
                return Optional.empty(); // a file with more names after it
            }
            cur.append('/').append(c);
        }
        String x = cur.length() == 0 ? "/" : cur.toString();
        if (strict) {
            return Optional.of(x); // the path itself, for a look at it
        }
        x = dropTrailingNewlines(x); // as $(readlink -f) prints it
        return x.isEmpty() ? Optional.empty() : Optional.of(x);
    }

    private static Path path(String p) throws Unanswerable {
        try {
            return Path.of(p);
        } catch (InvalidPathException e) {
            throw new Unanswerable("the path cannot be encoded here: " + e.getMessage());
        }
    }

    private static String dropTrailingNewlines(String s) {
        int end = s.length();
        while (end > 0 && s.charAt(end - 1) == '\n') {
            end--;
        }
        return s.substring(0, end);
    }
}

package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The user's OpenSSH client config ({@code ~/.ssh/config}) as {@code ssh -G -F FILE HOST} reads it,
 * for the keywords Airlock uses: HostName, Port, User, IdentityFile, CertificateFile, ProxyJump,
 * ProxyCommand, UserKnownHostsFile and StrictHostKeyChecking. As OpenSSH: the first value obtained
 * wins (IdentityFile and CertificateFile add up), {@code Host} patterns take {@code *}, {@code ?}
 * and {@code !}, {@code Include} reads files and globs (relative to {@code ~/.ssh}) where it stands,
 * conditionally inside a Host or Match block, and the {@code %} tokens ({@code %h %p %r %u %d %n %l
 * %L %i %%}) and {@code ~} are expanded in HostName and the file names. {@code Match} takes
 * {@code all}, {@code host}, {@code originalhost}, {@code user} and {@code localuser}; a block with
 * another criterion ({@code exec}, {@code canonical}, {@code final}) is taken as not matching.
 *
 * <p>Why not {@code ssh -G} itself at connect time: it needs the OpenSSH client on the JVM's
 * machine (Airlock's ssh backend does not otherwise), its output cannot tell a default from a
 * value the user set (Airlock's settings and defaults differ from ssh's for keys and known_hosts),
 * and {@code Match exec} would run the user's commands on every login. The parser is instead
 * tested against {@code ssh -G}'s reading of the same files.
 */
final class SshConfigFile {
    private static final Logger LOG = LoggerFactory.getLogger(SshConfigFile.class);
    private static final int MAX_INCLUDE_DEPTH = 16; // OpenSSH's READCONF_MAX_DEPTH

    /** What the config says about one host name or alias; every field may be absent. */
    record Entry(Optional<String> hostName, int port, Optional<String> user, List<String> identityFiles,
                 List<String> certificateFiles, Optional<String> proxyJump, Optional<String> proxyCommand,
                 List<String> userKnownHostsFiles, Optional<String> strictHostKeyChecking) {
        static final Entry NONE = new Entry(Optional.empty(), -1, Optional.empty(), List.of(), List.of(),
                Optional.empty(), Optional.empty(), List.of(), Optional.empty());
    }

    /** One line: its keyword (lower case), its arguments, and where it stands, for messages. */
    private record Line(String keyword, List<String> args, Path file, int number) {
    }

    private final Path file;
    private final Path home;

    private SshConfigFile(Path file, Path home) {
        this.file = file;
        this.home = home;
    }

    /** The file, or an empty config when it does not exist; an unreadable file is a one-line error. */
    static SshConfigFile read(Optional<Path> file) {
        return read(file, Path.of(System.getProperty("user.home", "")));
    }

    /** As {@link #read(Optional)}, with {@code ~}, {@code %d} and relative Includes under {@code home}. */
    static SshConfigFile read(Optional<Path> file, Path home) {
        if (file.isEmpty() || !Files.exists(file.get())) {
            return new SshConfigFile(null, home);
        }
        SshConfigFile config = new SshConfigFile(file.get(), home);
        config.entry("airlock-syntax-check"); // a syntax error is reported at open, whatever the host
        return config;
    }

    /** What applies to {@code alias}, as {@code ssh -G alias} resolves it. */
    Entry entry(String alias) {
        if (file == null) {
            return Entry.NONE;
        }
        Map<String, List<String>> found = new LinkedHashMap<>();
        List<String> identities = new ArrayList<>();
        List<String> certificates = new ArrayList<>();
        try {
            readFile(file, alias, found, identities, certificates, new boolean[] {true}, false, 0);
        } catch (IOException e) {
            throw new ConfigurationException("cannot read the SSH config " + file + " (" + SshSettings.CONFIG + "): "
                    + ConnectFailures.oneLine(e.getMessage()) + "; fix it, or set " + SshSettings.CONFIG + "=none");
        }
        String localUser = System.getProperty("user.name", "");
        Optional<String> rawHostName = first(found, "hostname");
        String hostName = rawHostName.map(h -> expand(h, Map.of('h', alias))).orElse(alias);
        int port = first(found, "port").map(p -> port(p)).orElse(-1);
        Optional<String> user = first(found, "user");
        Map<Character, String> tokens = tokens(alias, hostName, port > 0 ? port : 22, user.orElse(localUser), localUser);
        return new Entry(rawHostName.map(h -> hostName), port, user,
                files(identities, tokens), files(certificates, tokens),
                first(found, "proxyjump").filter(v -> !v.equalsIgnoreCase("none")),
                // %h %p %r and %% wait for the connect, where Proxies.Command has the values the login uses.
                first(found, "proxycommand").filter(v -> !v.equalsIgnoreCase("none")).map(c -> expandLocal(c, tokens)),
                found.getOrDefault("userknownhostsfile", List.of()).stream()
                        .filter(v -> !v.equalsIgnoreCase("none")).map(f -> file(f, tokens)).toList(),
                first(found, "stricthostkeychecking").map(v -> v.toLowerCase(Locale.ROOT)));
    }

    private void readFile(Path path, String alias, Map<String, List<String>> found, List<String> identities,
                          List<String> certificates, boolean[] active, boolean neverMatch, int depth) throws IOException {
        if (depth > MAX_INCLUDE_DEPTH) {
            throw new IOException("Include nested more than " + MAX_INCLUDE_DEPTH + " deep at " + path);
        }
        List<String> text = Files.readAllLines(path);
        for (int i = 0; i < text.size(); i++) {
            Line line = parse(text.get(i), path, i + 1);
            if (line == null) {
                continue;
            }
            switch (line.keyword()) {
                case "host" -> active[0] = !neverMatch && hostMatches(alias, line.args());
                case "match" -> active[0] = !neverMatch && matchMatches(line, alias, found);
                case "include" -> {
                    boolean before = active[0];
                    for (String pattern : line.args()) {
                        for (Path included : glob(pattern)) {
                            readFile(included, alias, found, identities, certificates, active, neverMatch || !before, depth + 1);
                        }
                    }
                    active[0] = before;
                }
                default -> {
                    if (!active[0] || line.args().isEmpty()) {
                        continue;
                    }
                    switch (line.keyword()) {
                        case "identityfile" -> identities.add(line.args().get(0));
                        case "certificatefile" -> certificates.add(line.args().get(0));
                        // One or the other, whichever comes first, as OpenSSH.
                        case "proxyjump" -> {
                            if (!found.containsKey("proxycommand")) {
                                found.putIfAbsent("proxyjump", List.of(line.args().get(0)));
                            }
                        }
                        case "proxycommand" -> {
                            if (!found.containsKey("proxyjump")) {
                                found.putIfAbsent("proxycommand", List.of(rest(text.get(i))));
                            }
                        }
                        default -> found.putIfAbsent(line.keyword(), line.args());
                    }
                }
            }
        }
    }

    /** A Host line's patterns: any positive match and no negated one. */
    static boolean hostMatches(String host, List<String> patterns) {
        boolean matched = false;
        for (String p : patterns) {
            boolean negated = p.startsWith("!");
            if (wildcard(negated ? p.substring(1) : p, host)) {
                if (negated) {
                    return false;
                }
                matched = true;
            }
        }
        return matched;
    }

    private boolean matchMatches(Line line, String alias, Map<String, List<String>> found) {
        List<String> a = line.args();
        if (a.size() == 1 && a.get(0).equalsIgnoreCase("all")) {
            return true;
        }
        for (int i = 0; i < a.size(); i++) {
            String criterion = a.get(i).toLowerCase(Locale.ROOT);
            boolean negated = criterion.startsWith("!");
            if (negated) {
                criterion = criterion.substring(1);
            }
            if (criterion.equals("all")) {
                continue;
            }
            if (i + 1 >= a.size()) {
                return false;
            }
            List<String> patterns = List.of(a.get(++i).split(","));
            String subject = switch (criterion) {
                case "host" -> first(found, "hostname").map(h -> expand(h, Map.of('h', alias))).orElse(alias);
                case "originalhost" -> alias;
                case "user" -> first(found, "user").orElse(System.getProperty("user.name", ""));
                case "localuser" -> System.getProperty("user.name", "");
                default -> null;
            };
            if (subject == null) {
                LOG.debug("{}:{}: Match {} is not supported; the block is taken as not matching", line.file(), line.number(), criterion);
                return false;
            }
            if (hostMatches(subject, patterns) == negated) {
                return false;
            }
        }
        return true;
    }

    /** {@code *} and {@code ?} as OpenSSH's match_pattern, case-insensitive as host names are. */
    private static boolean wildcard(String pattern, String s) {
        StringBuilder re = new StringBuilder();
        for (char c : pattern.toCharArray()) {
            re.append(c == '*' ? ".*" : c == '?' ? "." : Pattern.quote(String.valueOf(c)));
        }
        return Pattern.compile(re.toString(), Pattern.CASE_INSENSITIVE | Pattern.DOTALL).matcher(s).matches();
    }

    /** An Include argument: {@code ~} expanded, relative to {@code ~/.ssh}, a glob in its last part; sorted, as glob(3). */
    private List<Path> glob(String pattern) throws IOException {
        String expanded = tilde(pattern);
        Path p = Path.of(expanded);
        if (!p.isAbsolute()) {
            p = home.resolve(".ssh").resolve(p);
        }
        String name = p.getFileName().toString();
        if (!name.contains("*") && !name.contains("?") && !name.contains("[")) {
            return Files.isRegularFile(p) ? List.of(p) : List.of();
        }
        Path dir = p.getParent();
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + name);
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path f : s) {
                if (m.matches(f.getFileName()) && Files.isRegularFile(f)) {
                    out.add(f);
                }
            }
        }
        out.sort(null);
        return out;
    }

    /** A line as keyword and arguments ({@code key value} or {@code key=value}, double quotes group); null when blank or a comment. */
    private static Line parse(String raw, Path file, int number) throws IOException {
        String s = raw.strip();
        if (s.isEmpty() || s.startsWith("#")) {
            return null;
        }
        int end = 0;
        while (end < s.length() && !Character.isWhitespace(s.charAt(end)) && s.charAt(end) != '=') {
            end++;
        }
        String keyword = s.substring(0, end).toLowerCase(Locale.ROOT);
        String rest = s.substring(end).strip();
        if (rest.startsWith("=")) {
            rest = rest.substring(1).strip();
        }
        List<String> args = new ArrayList<>();
        StringBuilder cur = null;
        boolean quoted = false;
        for (int i = 0; i < rest.length(); i++) {
            char c = rest.charAt(i);
            if (c == '"') {
                quoted = !quoted;
                cur = cur == null ? new StringBuilder() : cur;
            } else if (Character.isWhitespace(c) && !quoted) {
                if (cur != null) {
                    args.add(cur.toString());
                    cur = null;
                }
            } else if (c == '#' && !quoted && cur == null) {
                break; // a trailing comment
            } else {
                cur = cur == null ? new StringBuilder() : cur;
                cur.append(c);
            }
        }
        if (quoted) {
            throw new IOException("unbalanced quote on line " + number + " of " + file);
        }
        if (cur != null) {
            args.add(cur.toString());
        }
        return new Line(keyword, args, file, number);
    }

    /** A ProxyCommand's whole text after its keyword, as sh will read it. */
    private static String rest(String raw) {
        String s = raw.strip();
        int end = 0;
        while (end < s.length() && !Character.isWhitespace(s.charAt(end)) && s.charAt(end) != '=') {
            end++;
        }
        String rest = s.substring(end).strip();
        return rest.startsWith("=") ? rest.substring(1).strip() : rest;
    }

    private static Optional<String> first(Map<String, List<String>> found, String key) {
        List<String> v = found.get(key);
        return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v.get(0));
    }

    private static int port(String value) {
        try {
            int p = Integer.parseInt(value);
            if (p >= 1 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new ConfigurationException("the SSH config has Port " + value + ": expected 1..65535");
    }

    private Map<Character, String> tokens(String alias, String host, int port, String user, String localUser) {
        String local = localHostName();
        Map<Character, String> t = new LinkedHashMap<>();
        t.put('h', host);
        t.put('n', alias);
        t.put('p', Integer.toString(port));
        t.put('r', user);
        t.put('u', localUser);
        t.put('d', home.toString());
        t.put('l', local);
        t.put('L', local.contains(".") ? local.substring(0, local.indexOf('.')) : local);
        t.put('i', uid());
        return t;
    }

    private List<String> files(List<String> raw, Map<Character, String> tokens) {
        return raw.stream().filter(f -> !f.equalsIgnoreCase("none")).map(f -> file(f, tokens)).toList();
    }

    private String file(String raw, Map<Character, String> tokens) {
        return expand(tilde(raw), tokens);
    }

    private String tilde(String p) {
        return p.equals("~") ? home.toString() : p.startsWith("~/") ? home.resolve(p.substring(2)).toString() : p;
    }

    /** OpenSSH's percent tokens; an unknown one is an error there, and left as it stands here. */
    static String expand(String template, Map<Character, String> tokens) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < template.length(); i++) {
            char c = template.charAt(i);
            if (c == '%' && i + 1 < template.length()) {
                char t = template.charAt(++i);
                if (t == '%') {
                    sb.append('%');
                } else if (tokens.containsKey(t)) {
                    sb.append(tokens.get(t));
                } else {
                    sb.append('%').append(t);
                }
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /** The tokens that do not depend on the login ({@code %n %u %d %l %L %i}); {@code %%} and the rest stay for later. */
    private static String expandLocal(String template, Map<Character, String> tokens) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < template.length(); i++) {
            char c = template.charAt(i);
            if (c == '%' && i + 1 < template.length()) {
                char t = template.charAt(++i);
                if ("nudlLi".indexOf(t) >= 0 && tokens.containsKey(t)) {
                    sb.append(tokens.get(t).replace("%", "%%"));
                } else {
                    sb.append('%').append(t);
                }
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    private static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }

    private static String uid() {
        try {
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            return String.valueOf(uid);
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}

package dev.airlock.safety;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guard's path resolution answered in this JVM ({@link HostPaths}) against the script it
 * replaces, run by {@code sh} on this machine in the same directory with the same {@code $PWD}:
 * the same records, byte for byte, for links followed to their end, loops, dangling links, {@code ..},
 * missing tails and parents, relative paths, and names with spaces, newlines and bytes that are
 * not UTF-8; where Java cannot see what the script sees, the script answers.
 */
class HostPathsTest {
    @TempDir
    Path tmp;

    private Path root;

    /** Builds the tree with {@code sh}, so names and link texts hold exactly the bytes given. */
    @BeforeEach
    void tree() throws IOException {
        root = tmp.toRealPath().resolve("t");
        sh(root.getParent(), null, String.join("\n",
                "set -e",
                "mkdir -p t/real/sub t/other 't/with space' \"t/$(printf 'nl\\nin')\" \"t/$(printf 'bad\\377dir')\"",
                "mkdir 't/endnl\n'", // a directory whose name ends in a newline
                "cd t",
                ": > real/file; : > 'with space/f g'",
                "ln -s real rel",                       // relative link to a directory
                "ln -s \"$PWD/real\" abs",              // absolute link to a directory
                "ln -s real/sub/../file updown",        // .. inside a link's text
                "ln -s missing/deeper dangling",        // dangling, relative
                "ln -s /nonexistent-airlock/x dangabs", // dangling, absolute
                "ln -s dangling chain",                 // a link to a dangling link
                "ln -s loopb loopa; ln -s loopa loopb", // a loop of two
                "ln -s self self",                      // a loop of one
                "ln -s real/file tofile",               // a link to a file
                "ln -s 'real//sub/' slashes",           // doubled and trailing slashes in the text
                "ln -s / toroot",
                "ln -s tofile/ slashtofile",            // a trailing slash after a link to a file: dangling
                "ln -s 'real//nothing/' slashmissing",  // dangling, doubled and trailing slashes kept in the text
                "ln -s ../t/real up",                   // .. out of and back into the tree
                "ln -s \"$(printf 'nl\\nin')\" tonl",   // a link whose text holds a newline
                "ln -s \"$(printf 'gone\\n\\n')\" trailingnl", // a link whose text ends in newlines
                "ln -s \"$(printf 'bad\\377dir')\" tobad", // text not UTF-8, to an existing directory
                "ln -s \"$(printf 'bad\\377dir')/x\" tobadmissing", // text not UTF-8, dangling
                "ln -s \"$PWD/real/sub\" real/deep",   // a link inside a linked directory
                "ln -s \"$(printf 'with space/f g')\" tospace",
                "cd \"$(printf 'bad\\377dir')\" && ln -s ../real back"));
    }

    /** Paths from the tree's root, each resolved as the file API's write to it is. */
    private List<String> cases() {
        List<String> c = new ArrayList<>();
        for (String p : new String[] {
                "real", "real/file", "real/sub/new.txt", "real/missing/parent/new.txt", "rel", "rel/file", "rel/new",
                "rel/sub/../file", "abs/sub", "abs/missing/deep/x", "updown", "dangling", "dangling/more/x", "dangabs",
                "chain", "chain/x", "loopa", "loopa/x", "loopb/y/z", "self", "self/x", "tofile", "tofile/x",
                "real/file/x", "slashes", "slashes/new", "slashtofile", "slashtofile/x", "slashmissing", "slashmissing/y", "toroot", "toroot/etc/passwd", "up/file", "up/../other/x",
                "tonl", "tonl/x", "nl\nin/new", "trailingnl", "trailingnl/x", "with space/f g", "with space/new file",
                "tospace", "real/deep/x", "rel/deep/new", "missing-top/a/b", "real/./sub/./x", "real/sub/..",
                "../t/rel/x", "real/sub/../../rel/file", "file\nwith\nnewlines", "trailing\n", "sp ace/ and\ttab",
                "unicode-é-ü/x", "rel/\u00e9t\u00e9", "endnl\n/x", "endnl\n"}) {
            c.add(root + "/" + p);
        }
        c.add(root.toString());
        c.add("/");
        c.add("/etc/passwd");
        return c;
    }

    @Test
    void absolutePathsGetTheScriptsAnswer() throws Exception {
        assertSameAnswers(root, null, cases());
    }

    @Test
    void relativePathsResolveFromWhereScriptsStart() throws Exception {
        List<String> rel = new ArrayList<>();
        for (String p : new String[] {"file", "sub/new", "../rel/file", "../dangling/x", "deep/x", "missing/x", ".", "..",
                "../../t/up/sub"}) {
            rel.add(p);
        }
        assertSameAnswers(root.resolve("real"), null, rel);
        // $PWD inherited through a link names the start directory: sh keeps that spelling
        assertSameAnswers(root.resolve("real"), root + "/rel", rel);
        // an inherited $PWD naming another directory is not used
        assertSameAnswers(root.resolve("real"), root + "/other", rel);
        assertSameAnswers(root.resolve("rel"), null, rel);
    }

    @Test
    void onlyAnExistingDirectoryConditionResolves() throws Exception {
        List<TargetResolver.Item> items = List.of(
                new TargetResolver.Item(pattern(root + "/real/x"), pattern(root + "/real")),
                new TargetResolver.Item(pattern(root + "/tofile/x"), pattern(root + "/tofile")),
                new TargetResolver.Item(pattern(root + "/rel/y"), pattern(root + "/rel")),
                new TargetResolver.Item(pattern("sub/z"), pattern("sub")));
        Path start = root.resolve("real");
        String script = scriptOutput(start, null, items);
        assertEquals(script, TargetResolver.records(host(start, null), items));
        assertTrue(script.contains("\t") && !script.contains("tofile"), "the script skips the item whose directory is a file");
    }

    @Test
    void aLinkWhoseTextIsNotUtf8IsLeftToTheScript() throws Exception {
        HostPaths h = host(root, null);
        for (String p : new String[] {"tobad/back", "tobadmissing", "tobadmissing/y"}) {
            List<TargetResolver.Item> items = List.of(new TargetResolver.Item(pattern(root + "/" + p), null));
            assertThrows(HostPaths.Unanswerable.class, () -> TargetResolver.records(h, items), p);
            // and the resolution as the guard runs it still gives the script's answer
            Map<Integer, List<TargetResolver.Variant>> viaHost = TargetResolver.resolve(shell(root, null, h), items);
            Map<Integer, List<TargetResolver.Variant>> viaScript = TargetResolver.resolve(shell(root, null, null), items);
            assertEquals(describe(viaScript), describe(viaHost), p);
        }
    }

    @Test
    void aWayThroughProcIsLeftToTheScript() throws Exception {
        // /proc/self, its cwd and fd name this JVM for Java and the script for sh: never mixed up
        sh(root, null, "ln -s /proc/self toself; ln -s /proc/self/cwd/nothing-here tocwd");
        Path start = root.resolve("real");
        HostPaths h = host(start, null);
        for (String p : new String[] {"/proc/self/cwd/x", "/proc/self/cwd", "/dev/stdout", "/dev/fd/1", root + "/toself/cwd/file",
                root + "/toself/cwd/new", root + "/tocwd", root + "/tocwd/x"}) {
            List<TargetResolver.Item> items = List.of(new TargetResolver.Item(pattern(p), null));
            assertThrows(HostPaths.Unanswerable.class, () -> TargetResolver.records(h, items), p);
            int[] runs = new int[1];
            TargetShell counted = new TargetShell() {
                @Override
                public byte[] run(String script) throws IOException {
                    runs[0]++;
                    return sh(start, null, script);
                }

                @Override
                public Optional<HostPaths> hostPaths() {
                    return Optional.of(h);
                }
            };
            String viaGuard = recordsVia(counted, items);
            assertEquals(1, runs[0], "the script answered " + p);
            // /proc/PID and a pipe's fd differ from one script run to the next: only stable answers compare
            if (!p.startsWith("/dev/") && !p.equals("/proc/self/cwd")) {
                assertEquals(recordsVia(shell(start, null, null), items), viaGuard, p);
            }
        }
        assertTrue(recordsVia(shell(start, null, h), List.of(new TargetResolver.Item(pattern("/proc/self/cwd/x"), null)))
                .contains(start + "/x"), "the script's /proc/self is the script, started in " + start);
    }

    @Test
    void aPwdSpelledWithDotsIsLeftToTheScript() throws Exception {
        List<TargetResolver.Item> relative = List.of(new TargetResolver.Item(pattern("sub/x"), null));
        for (String pwd : new String[] {root + "/real/../real", root + "/rel/"}) {
            HostPaths h = host(root.resolve("real"), pwd);
            assertThrows(HostPaths.Unanswerable.class, () -> TargetResolver.records(h, relative), pwd);
            assertEquals(recordsVia(shell(root.resolve("real"), pwd, null), relative),
                    recordsVia(shell(root.resolve("real"), pwd, h), relative), pwd);
        }
    }

    @Test
    void theGuardsVariantsAgreeToo() throws Exception {
        List<TargetResolver.Item> items = new ArrayList<>();
        for (String p : cases()) {
            items.add(new TargetResolver.Item(pattern(p), null));
        }
        Map<Integer, List<TargetResolver.Variant>> viaScript = TargetResolver.resolve(shell(root, null, null), items);
        Map<Integer, List<TargetResolver.Variant>> viaHost = TargetResolver.resolve(shell(root, null, host(root, null)), items);
        assertEquals(describe(viaScript), describe(viaHost));
        assertFalse(viaScript.get(0).isEmpty(), "the script resolved the first path");
    }

    // ---------------------------------------------------------------- helpers

    private void assertSameAnswers(Path start, String pwd, List<String> paths) throws Exception {
        HostPaths h = host(start, pwd);
        List<TargetResolver.Item> items = new ArrayList<>();
        for (String p : paths) {
            items.add(new TargetResolver.Item(pattern(p), null));
        }
        String script = scriptOutput(start, pwd, items);
        String here = TargetResolver.records(h, items);
        assertEquals(script.split("\0").length, 3 * paths.size(), "three records a path from the script: " + script);
        for (int k = 0; k < paths.size(); k++) {
            // one path at a time first, so a difference names its path
            List<TargetResolver.Item> one = List.of(items.get(k));
            assertEquals(scriptOutput(start, pwd, one), TargetResolver.records(h, one), "path " + paths.get(k));
        }
        assertEquals(script, here);
    }

    /** The variants the guard gets through {@code shell}, as text. */
    private static String recordsVia(TargetShell shell, List<TargetResolver.Item> items) throws IOException {
        return describe(TargetResolver.resolve(shell, items));
    }

    private static PathPattern pattern(String p) {
        return PathPattern.of(p, null).orElseThrow();
    }

    private HostPaths host(Path start, String pwd) throws HostPaths.Unanswerable {
        return new HostPaths(start, environment(pwd));
    }

    private static Map<String, String> environment(String pwd) {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.remove("PWD");
        if (pwd != null) {
            env.put("PWD", pwd);
        }
        return env;
    }

    private String scriptOutput(Path start, String pwd, List<TargetResolver.Item> items) throws IOException {
        return new String(sh(start, pwd, TargetResolver.script(items)), StandardCharsets.UTF_8);
    }

    private TargetShell shell(Path start, String pwd, HostPaths host) {
        return new TargetShell() {
            @Override
            public byte[] run(String script) throws IOException {
                return sh(start, pwd, script);
            }

            @Override
            public Optional<HostPaths> hostPaths() {
                return Optional.ofNullable(host);
            }
        };
    }

    private static String describe(Map<Integer, List<TargetResolver.Variant>> vs) {
        StringBuilder b = new StringBuilder();
        vs.forEach((k, l) -> l.forEach(v -> b.append(k).append(' ').append(v.kind()).append(' ').append(v.pattern().path()).append('\n')));
        return b.toString();
    }

    /** Runs {@code script} with {@code sh} in {@code dir}, {@code $PWD} as given (unset: none inherited). */
    private static byte[] sh(Path dir, String pwd, String script) throws IOException {
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", script).directory(dir.toFile());
        pb.environment().putAll(environment(pwd));
        pb.environment().keySet().retainAll(environment(pwd).keySet());
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        try (InputStream in = p.getInputStream()) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            if (p.waitFor() != 0) {
                throw new IOException("sh exited " + p.exitValue());
            }
            return out.toByteArray();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /**
     * Where the scripts see this host's files at other places (a sandbox's own {@code /tmp}), every
     * look goes through the places given and links are followed in the scripts' names: an
     * absolute link's text names a place as the scripts see it, not as this host does.
     */
    @Test
    void aViewThatMovesThePlacesFollowsLinksInTheScriptsNames() throws Exception {
        Path hostTmp = Files.createDirectories(tmp.resolve("view/own-tmp"));
        Path hostWork = Files.createDirectories(tmp.resolve("view/work/real"));
        Path scriptTmp = Path.of("/airlock-view-tmp");
        Path scriptWork = Path.of("/airlock-view-work");
        Files.createSymbolicLink(hostTmp.resolve("l"), scriptWork.resolve("real"));  // absolute, in the scripts' names
        Files.createSymbolicLink(hostTmp.resolve("rel"), Path.of("l"));             // relative, to the link beside it
        Files.createSymbolicLink(hostTmp.resolve("hidden"), Path.of("/airlock-view-hidden/x"));
        java.util.function.Function<Path, Optional<Path>> places = p -> {
            if (p.startsWith(scriptTmp)) {
                return Optional.of(hostTmp.resolve(scriptTmp.relativize(p).toString()));
            }
            if (p.startsWith(scriptWork)) {
                return Optional.of(hostWork.getParent().resolve(scriptWork.relativize(p).toString()));
            }
            if (p.startsWith("/airlock-view-hidden")) {
                return Optional.empty(); // this host cannot tell
            }
            return Optional.of(p);
        };
        HostPaths h = new HostPaths(scriptWork, Map.of(), places);
        assertEquals("/airlock-view-work/real/f", h.canon("/airlock-view-tmp/l/f"));
        assertEquals("/airlock-view-work/real/f", h.canon("/airlock-view-tmp/rel/f"));
        assertTrue(h.isDirectory("/airlock-view-tmp/l"));
        assertFalse(h.isDirectory("/airlock-view-tmp/missing"));
        assertEquals("/airlock-view-work/real", h.canon(h.abs("real")), "relative names from the scripts' start");
        assertThrows(HostPaths.Unanswerable.class, () -> new HostPaths(scriptWork, Map.of(), places).canon("/airlock-view-tmp/hidden/y"));
    }
}

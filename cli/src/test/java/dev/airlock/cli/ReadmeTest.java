package dev.airlock.cli;

import dev.airlock.Environments;
import dev.airlock.settings.SettingKey;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the README tells a library user to copy matches the build; the README stays short and its links resolve. */
class ReadmeTest {
    static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

    static String readme() throws IOException {
        return Files.readString(ROOT.resolve("README.md"));
    }

    @Test
    void theMavenSnippetNamesArtifactsThisBuildMakesAtItsVersion() throws IOException {
        String rootPom = Files.readString(ROOT.resolve("pom.xml"));
        Matcher v = Pattern.compile("<artifactId>airlock-parent</artifactId>\\s*<version>([^<]+)</version>").matcher(rootPom);
        assertTrue(v.find(), "the root pom's version");
        String version = v.group(1);
        Matcher block = Pattern.compile("```xml\\n(.*?)```", Pattern.DOTALL).matcher(readme());
        assertTrue(block.find(), "the README has a Maven snippet");
        Matcher dep = Pattern.compile("<groupId>([^<]+)</groupId>\\s*<artifactId>([^<]+)</artifactId>[^\\n]*\\s*<version>([^<]+)</version>")
                .matcher(block.group(1));
        List<String> artifacts = new ArrayList<>();
        while (dep.find()) {
            assertEquals("dev.airlock", dep.group(1));
            assertEquals(version, dep.group(3), dep.group(2) + "'s version");
            artifacts.add(dep.group(2));
        }
        assertTrue(artifacts.contains("airlock-core"), "the API: " + artifacts);
        assertTrue(artifacts.stream().anyMatch(a -> a.startsWith("airlock-backend-")), "a backend: " + artifacts);
        for (String a : artifacts) {
            String module = a.replaceFirst("^airlock-", "");
            Path pom = ROOT.resolve(module).resolve("pom.xml");
            assertTrue(Files.exists(pom), a + " is no module of this build");
            assertTrue(Files.readString(pom).contains("<artifactId>" + a + "</artifactId>"), pom + " builds " + a);
        }
    }

    @Test
    void sourcesAndJavadocJarsAreAttached() throws IOException {
        String rootPom = Files.readString(ROOT.resolve("pom.xml"));
        assertTrue(rootPom.contains("<artifactId>maven-source-plugin</artifactId>") && rootPom.contains("<goal>jar-no-fork</goal>"));
        assertTrue(rootPom.contains("<artifactId>maven-javadoc-plugin</artifactId>") && rootPom.contains("<id>attach-javadocs</id>"));
        Path core = ROOT.resolve("core/target");
        if (Files.isDirectory(core) && Files.exists(core.resolve("airlock-core-" + versionOfCore() + ".jar"))) {
            assertTrue(Files.exists(core.resolve("airlock-core-" + versionOfCore() + "-sources.jar")), "core's sources jar");
            assertTrue(Files.exists(core.resolve("airlock-core-" + versionOfCore() + "-javadoc.jar")), "core's javadoc jar");
        }
        assertFalse(readme().contains("Settings.defaults()"));
    }

    /** Every settings table row of docs/backends.md names a declared key, and every declared key has its row. */
    @Test
    void theSettingsTablesMatchTheDeclaredKeys() throws IOException {
        Map<String, Boolean> readme = new TreeMap<>(); // key -> secret, when the table says
        Matcher row = Pattern.compile("(?m)^\\| `(airlock\\.[^`]+)` \\|(.*)\\|\\s*$")
                .matcher(Files.readString(ROOT.resolve("docs/backends.md")));
        while (row.find()) {
            String[] cells = row.group(2).split("\\|");
            String last = cells[cells.length - 1].trim();
            readme.put(row.group(1), last.equals("**yes**"));
        }
        Map<String, Boolean> declared = new TreeMap<>();
        for (SettingKey k : Environments.settingKeys(ReadmeTest.class.getClassLoader())) {
            declared.put(k.key(), k.secret());
        }
        assertEquals(declared.keySet(), readme.keySet(), "docs/backends.md tables vs the keys the core and the providers declare");
        declared.forEach((key, secret) -> {
            if (secret) {
                assertTrue(readme.get(key), key + " is secret: its row must say **yes**");
            }
        });
    }

    /** The first lines are the two commands a fresh clone runs; .ci/run runs the second verbatim. */
    @Test
    void theReadmeIsShortAndStartsWithTheTwoCommands() throws IOException {
        List<String> lines = readme().lines().toList();
        assertTrue(lines.size() < 200, "the README is a page, the reference is in docs/: " + lines.size() + " lines");
        assertTrue(lines.get(2).contains("`./airlock exec "), lines.get(2));
        assertTrue(lines.get(3).contains("`./mvnw verify`"), lines.get(3));
        for (String reader : List.of("### CLI", "### Library", "### MCP", "### LangChain4j", "### Plugin author")) {
            assertTrue(lines.contains(reader), "a quickstart: " + reader);
        }
    }

    /**
     * The plugin author's quickstart: its command runs the sample's kit test (which every build runs
     * too), and its kit class is compiled by {@link ExamplesCompileTest}.
     */
    @Test
    void thePluginQuickstartRunsTheSamplesKitTest() throws IOException {
        String readme = readme();
        String quickstart = readme.substring(readme.indexOf("\n### Plugin author\n"), readme.indexOf("\n## Reference\n"));
        Matcher command = Pattern.compile("(?m)^    (\\./mvnw .*-pl (\\S+) .*-Dtest='([^']+)'.*)$").matcher(quickstart);
        assertTrue(command.find(), "the quickstart's command");
        Path module = ROOT.resolve(command.group(2));
        assertTrue(Files.isRegularFile(module.resolve("pom.xml")), "the module " + module);
        String glob = command.group(3).replace("*", ".*");
        try (var s = Files.walk(module.resolve("src/test/java"))) {
            assertTrue(s.anyMatch(p -> p.getFileName().toString().matches(glob + "\\.java")
                    && readString(p).contains("extends EnvironmentCompatibilityKit")), "a kit test matching " + command.group(3));
        }
        assertTrue(quickstart.contains("extends EnvironmentCompatibilityKit"), "the kit class, compiled by ExamplesCompileTest");
    }

    private static String readString(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** User docs carry no tracker numbers, and every relative link names a file that exists. */
    @Test
    void theDocsHaveNoIssueNumbersAndTheirLinksResolve() throws IOException {
        List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (var s = Files.list(ROOT.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        Pattern issue = Pattern.compile("(?i)\\bissues? #?\\d+|<!-- *issue");
        Pattern link = Pattern.compile("\\]\\(([^)#:]+)(#[^)]*)?\\)");
        for (Path doc : docs) {
            String text = Files.readString(doc);
            Matcher i = issue.matcher(text);
            assertFalse(i.find(), () -> doc + " names an issue: " + i.group());
            Matcher l = link.matcher(text);
            while (l.find()) {
                Path target = doc.getParent().resolve(l.group(1)).normalize();
                assertTrue(Files.exists(target), doc + " links to " + l.group(1) + ", which does not exist");
            }
        }
    }

    private static String versionOfCore() throws IOException {
        Matcher v = Pattern.compile("<artifactId>airlock-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(ROOT.resolve("pom.xml")));
        return v.find() ? v.group(1) : "?";
    }
}

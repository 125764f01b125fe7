package dev.airlock.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** airlock-bom names every artifact the build publishes, at the build's version, with the build's Jackson 2. */
class BomTest {
    private static final Path ROOT = ReadmeTest.ROOT;
    /** Modules the build makes but does not publish. */
    private static final List<String> UNPUBLISHED = List.of("bom", "samples/plugin-sample");

    private static String first(String regex, String text) {
        Matcher m = Pattern.compile(regex, Pattern.DOTALL).matcher(text);
        assertTrue(m.find(), regex);
        return m.group(1);
    }

    @Test
    void everyPublishedModuleIsInTheBomAtTheProjectVersion() throws IOException {
        String root = Files.readString(ROOT.resolve("pom.xml"));
        String bom = Files.readString(ROOT.resolve("bom/pom.xml"));
        List<String> published = new ArrayList<>();
        Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(first("<modules>(.*?)</modules>", root));
        while (module.find()) {
            if (!UNPUBLISHED.contains(module.group(1))) {
                String pom = Files.readString(ROOT.resolve(module.group(1)).resolve("pom.xml"));
                published.add(first("</parent>\\s*<artifactId>([^<]+)</artifactId>", pom));
            }
        }
        List<String> listed = new ArrayList<>();
        Matcher dep = Pattern.compile("<groupId>dev.airlock</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*<version>\\$\\{project.version}</version>")
                .matcher(bom);
        while (dep.find()) {
            listed.add(dep.group(1));
        }
        assertEquals(published.stream().sorted().toList(), listed.stream().sorted().toList());
        assertEquals(first("<artifactId>airlock-parent</artifactId>\\s*<version>([^<]+)</version>", root),
                first("<artifactId>airlock-bom</artifactId>\\s*<version>([^<]+)</version>", bom));
        assertEquals(first("<jackson.version>([^<]+)</jackson.version>", root), first("<jackson.version>([^<]+)</jackson.version>", bom));
    }

    /** A library the BOM pins for convergence has the version the build pins (and tests with). */
    @Test
    void theBomsOtherPinsAreTheBuilds() throws IOException {
        String rootPom = Files.readString(ROOT.resolve("pom.xml"));
        String root = first("<dependencyManagement>(.*?)</dependencyManagement>", rootPom);
        Matcher pin = Pattern.compile("<groupId>([^<]+)</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*<version>([^$<][^<]*)</version>")
                .matcher(first("<dependencyManagement>(.*?)</dependencyManagement>", Files.readString(ROOT.resolve("bom/pom.xml"))));
        int pins = 0;
        while (pin.find()) {
            pins++;
            String managed = "<groupId>" + Pattern.quote(pin.group(1)) + "</groupId>\\s*<artifactId>" + Pattern.quote(pin.group(2))
                    + "</artifactId>\\s*<version>([^<]+)</version>";
            String version = first(managed, root);
            if (version.startsWith("${")) {
                String property = version.substring(2, version.length() - 1);
                version = first("<" + Pattern.quote(property) + ">([^<]+)</", rootPom);
            }
            assertEquals(pin.group(3), version, pin.group(1) + ":" + pin.group(2));
        }
        assertTrue(pins > 0, "the BOM pins libraries");
    }
}

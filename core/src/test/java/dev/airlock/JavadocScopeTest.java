package dev.airlock;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The published javadoc jar holds the API and the SPI only: the parent pom's maven-javadoc-plugin
 * excludes the core's own packages, and every package of the core is on one side or the other, so a
 * new package is placed on purpose (this test fails until it is named here or excluded there).
 */
class JavadocScopeTest {
    /** What users and plugin authors program against, and so what the javadoc jar documents. */
    private static final Set<String> PUBLISHED = Set.of("dev.airlock", "dev.airlock.spi", "dev.airlock.event",
            "dev.airlock.settings", "dev.airlock.safety", "dev.airlock.session", "dev.airlock.containment");
    /** The core's own: may change in any release, so left out of the javadoc. */
    private static final Set<String> CORE_OWN = Set.of("dev.airlock.internal", "dev.airlock.exec", "dev.airlock.shell");

    @Test
    void theJavadocJarLeavesTheCoresOwnPackagesOut() throws Exception {
        Path parentPom = Path.of("..", "pom.xml");
        var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(parentPom.toFile());
        Set<String> excluded = new TreeSet<>();
        NodeList plugins = doc.getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            Element plugin = (Element) plugins.item(i);
            if (!text(plugin, "artifactId").equals("maven-javadoc-plugin")) {
                continue;
            }
            String names = text(plugin, "excludePackageNames");
            Arrays.stream(names.split("[:,;]")).map(String::strip).filter(s -> !s.isEmpty()).forEach(excluded::add);
        }
        for (String own : CORE_OWN) {
            assertTrue(excluded.contains(own) && excluded.contains(own + ".*"),
                    own + " (and its subpackages) must be excluded from the javadoc; excluded: " + excluded);
        }
        Set<String> packages = corePackages();
        for (String pkg : packages) {
            boolean out = excluded.stream().anyMatch(e -> e.equals(pkg) || e.endsWith(".*") && pkg.startsWith(e.substring(0, e.length() - 1)));
            if (PUBLISHED.contains(pkg)) {
                assertFalse(out, pkg + " is API or SPI but excluded from the javadoc");
            } else {
                assertTrue(out, pkg + " is neither published nor excluded: name it in JavadocScopeTest.PUBLISHED or"
                        + " exclude it in the parent pom's maven-javadoc-plugin excludePackageNames");
            }
        }
        assertTrue(packages.containsAll(PUBLISHED) && packages.containsAll(CORE_OWN), "the core's packages were found: " + packages);
    }

    private static String text(Element parent, String tag) {
        NodeList l = parent.getElementsByTagName(tag);
        return l.getLength() == 0 ? "" : l.item(0).getTextContent().strip();
    }

    /** Every package with a class under src/main/java. */
    private static Set<String> corePackages() throws IOException {
        Path root = Path.of("src", "main", "java");
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(f -> f.toString().endsWith(".java") && !f.getFileName().toString().equals("package-info.java"))
                    .map(f -> root.relativize(f.getParent()).toString().replace(java.io.File.separatorChar, '.'))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }
}

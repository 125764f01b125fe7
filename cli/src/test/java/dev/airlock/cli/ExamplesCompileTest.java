package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every Java example in the README and docs/ ({@code ```java} blocks) and in the javadoc ({@code <pre>{@code
 * ...}</pre>} blocks of the modules' main sources) compiles against the real API. A statement
 * snippet is compiled as a method body; one that declares a class, as a class. {@code Acme*}
 * names are the README's imaginary plugin and get a stub, as do the names an example leaves to
 * the reader ({@code askTheUser}, {@code log}).
 */
class ExamplesCompileTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Pattern README_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern JAVADOC_BLOCK = Pattern.compile("<pre>\\{@code\\n(.*?)\\n\\s*\\*\\s*}</pre>", Pattern.DOTALL);
    private static final String IMPORTS = """
            import dev.airlock.*;
            import dev.airlock.event.*;
            import dev.airlock.safety.ApprovalChannel;
            import dev.airlock.settings.*;
            import dev.airlock.spi.*;
            import dev.airlock.tck.*;
            import java.io.*;
            import java.nio.file.*;
            import java.time.Duration;
            import java.util.*;
            """;

    private static final String READERS_NAMES = """
                static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger("example");
                static boolean askTheUser(ApprovalChannel.ApprovalRequest request) { return false; }
            """;

    record Example(String where, String code) {
    }

    static List<Example> examples() throws IOException {
        List<Example> out = new ArrayList<>();
        List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> s = Files.list(ROOT.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        for (Path doc : docs) {
            String text = Files.readString(doc);
            Matcher m = README_BLOCK.matcher(text);
            while (m.find()) {
                out.add(new Example(ROOT.relativize(doc) + ":" + line(text, m.start()), m.group(1).stripIndent()));
            }
        }
        List<Path> sources;
        try (Stream<Path> s = Files.walk(ROOT)) {
            sources = s.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/")).sorted().toList();
        }
        for (Path p : sources) {
            String text = Files.readString(p);
            Matcher j = JAVADOC_BLOCK.matcher(text);
            while (j.find()) {
                String code = j.group(1).replaceAll("(?m)^\\s*\\* ?", "");
                out.add(new Example(ROOT.relativize(p) + ":" + line(text, j.start()), code));
            }
        }
        return out;
    }

    private static int line(String text, int offset) {
        return (int) text.substring(0, offset).chars().filter(c -> c == '\n').count() + 1;
    }

    @Test
    void everyExampleCompiles(@TempDir Path out) throws IOException {
        List<Example> examples = examples();
        assertTrue(examples.size() >= 5, "the README and javadoc examples were found: " + examples.size());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK is needed to compile the examples");
        List<JavaFileObject> units = new ArrayList<>();
        units.add(source("AcmeProvider", IMPORTS + """
                final class AcmeProvider implements EnvironmentProvider {
                    public String name() { return "acme"; }
                    public Availability check(Settings settings) { return Availability.unavailable("stub"); }
                    public Environment open(OpenContext context) { throw new UnsupportedOperationException(); }
                }
                """));
        for (int i = 0; i < examples.size(); i++) {
            Example e = examples.get(i);
            String name = "Example" + i;
            boolean declaresClass = Pattern.compile("(?m)^(\\w+ )*(class|record|interface) \\w+").matcher(e.code()).find();
            String body = declaresClass
                    ? "// " + e.where() + "\n" + e.code().replaceFirst("(?m)^((\\w+ )*)(class|record|interface) (\\w+)", "$1$3 " + name)
                    : "// " + e.where() + "\nfinal class " + name + " {\n" + READERS_NAMES
                    + "    static void example() throws Exception {\n" + e.code() + "\n    }\n}\n";
            units.add(source(name, IMPORTS + body));
        }
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            List<String> options = List.of("-d", out.toString(), "-classpath", System.getProperty("java.class.path"),
                    "-proc:none", "-Xlint:none");
            javac.getTask(null, files, diagnostics, options, null, units).call();
        }
        List<String> errors = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR) {
                String unit = d.getSource() == null ? "?" : d.getSource().getCharContent(true).toString();
                String where = unit.lines().filter(l -> l.startsWith("// ")).findFirst().orElse("?").substring(3);
                errors.add(where + ": " + d.getMessage(null));
            }
        }
        assertEquals(List.of(), errors, "examples that do not compile");
    }

    private static JavaFileObject source(String name, String code) {
        return new SimpleJavaFileObject(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return code;
            }
        };
    }
}

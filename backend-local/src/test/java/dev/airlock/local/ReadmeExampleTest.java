package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README's library example, compiled and run here; the README must show exactly this code. */
class ReadmeExampleTest {

    static void example() throws IOException {
        // README begin
        try (Environment env = Environments.open(Settings.fromProcess())) {
            env.files().write("~/notes/data.bin", new byte[] {0, 1, 2, (byte) 0xff});
            ExecResult r = env.exec(ExecRequest.builder("wc -c < ~/notes/data.bin; exit 3")
                    .timeout(Duration.ofSeconds(30))
                    .build());
            System.out.println(r.exitCode());                  // 3
            System.out.print(r.stdout().text());               // 4
            try (InputStream in = env.files().read("~/notes/data.bin")) {
                System.out.println(in.readAllBytes().length);  // 4: exactly the bytes written
            }
        }
        // README end
    }

    @Test
    void theExampleRunsAndPrintsWhatItSays() throws Exception {
        Path home = Files.createTempDirectory("readme-airlock-home");
        // Keep the example out of the real HOME: the profile home under a temp AIRLOCK_HOME.
        System.setProperty("airlock.container", "no");
        System.setProperty("airlock.home-mode", "profile");
        System.setProperty("airlock.home", home.toString());
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            example();
        } finally {
            System.setOut(out);
            System.clearProperty("airlock.container");
            System.clearProperty("airlock.home-mode");
            System.clearProperty("airlock.home");
        }
        assertEquals("3\n4\n4\n", captured.toString(StandardCharsets.UTF_8));
        assertEquals(4, Files.size(home.resolve("home/notes/data.bin")));
    }

    @Test
    void theReadmeShowsThisCode() throws Exception {
        Path root = Path.of("..").toAbsolutePath().normalize();
        String readme = Files.readString(root.resolve("README.md"));
        List<String> source = Files.readAllLines(root.resolve(
                "backend-local/src/test/java/dev/airlock/local/ReadmeExampleTest.java"));
        int begin = source.indexOf("        // README begin");
        int end = source.indexOf("        // README end");
        StringBuilder block = new StringBuilder("```java\n");
        for (String line : source.subList(begin + 1, end)) {
            block.append(line.substring(Math.min(8, line.length()))).append('\n');
        }
        block.append("```");
        assertTrue(readme.contains(block), "README.md must contain, verbatim:\n" + block);
    }
}

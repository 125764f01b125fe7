package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A line read without picocli means what picocli makes of it; every other line is left to picocli. */
class PlainExecLineTest {
    @Test
    void plainExecLinesAreReadAsPicocliReadsThem() {
        for (List<String> line : List.of(
                List.of("exec", "true"),
                List.of("exec", "-n", "true"),
                List.of("exec", "printf", "a\\0b"),
                List.of("--backend", "local", "--config", "/dev/null", "exec", "-n", "true"),
                List.of("--backend=docker", "--set", "a=b", "--set=c=d=e", "--debug", "exec", "ls"),
                List.of("exec", "--cwd", "/tmp", "--timeout", "2s", "--env", "A=1", "--env=B", "--", "echo", "x"),
                List.of("exec", "--cwd=", "--env", "", "pwd"),
                List.of("exec", "echo", "-n", "--cwd", "--", "x", "--help"),
                List.of("exec", "-", "x"),
                List.of("exec", "--", "-n", "--", "x"),
                List.of("exec", "--"),
                List.of("exec"),
                List.of("--config", "rel/a b.properties", "exec", "--timeout", "1.5", "sleep 1"),
                List.of("exec", "--env", "A=-1", "true"),
                List.of("exec", "@notes"))) {
            String[] args = line.toArray(String[]::new);
            Optional<ExecCommand> plain = PlainExecLine.read(new AirlockCli(), args);
            assertTrue(plain.isPresent(), "read without picocli: " + line);
            assertEquals(picocli(args), described(plain.get()), line.toString());
        }
    }

    @Test
    void everyOtherLineIsLeftToPicocli() {
        for (List<String> line : List.of(
                List.<String>of(),
                List.of("--debug"),
                List.of("read", "/etc/hostname"),
                List.of("help", "exec"),
                List.of("-h", "exec", "true"),
                List.of("--version"),
                List.of("exec", "--help"),
                List.of("exec", "-h", "true"),
                List.of("exec", "-V"),
                List.of("exec", "-nx", "true"),
                List.of("exec", "--bogus", "true"),
                List.of("exec", "--backend", "local", "true"),
                List.of("exec", "--cwd"),
                List.of("exec", "--cwd", "-n", "true"),
                List.of("exec", "--cwd=-n", "true"),
                List.of("exec", "--cwd", "/a", "--cwd", "/b", "true"),
                List.of("exec", "-n", "-n", "true"),
                List.of("exec", "--timeout", "-1", "true"),
                List.of("exec", "--env", "--", "true"),
                List.of("--", "exec", "true"),
                List.of("--backend", "exec", "exec", "true"),
                List.of("--backend", "a", "--backend", "b", "exec", "true"),
                List.of("--debug", "--debug", "exec", "true"),
                List.of("--debug=true", "exec", "true"),
                List.of("--set", "exec", "true"),
                List.of("--backend"),
                List.of("-", "exec"),
                List.of("--BACKEND", "x", "exec", "true"))) {
            assertEquals(Optional.empty(), PlainExecLine.read(new AirlockCli(), line.toArray(String[]::new)).map(PlainExecLineTest::described),
                    line.toString());
        }
    }

    /** What picocli binds for an exec line, described as {@link #described} describes a line read without it. */
    private static String picocli(String... args) {
        AirlockCli cli = new AirlockCli();
        CommandLine cmd = cli.commandLine(args);
        ParseResult parsed = cmd.parseArgs(args);
        assertTrue(parsed.hasSubcommand() && !parsed.subcommand().isUsageHelpRequested() && !parsed.subcommand().isVersionHelpRequested(),
                "picocli runs exec: " + List.of(args));
        ExecCommand exec = (ExecCommand) parsed.subcommand().commandSpec().userObject();
        assertTrue(exec.cli == cli, "bound to the top command");
        return described(exec);
    }

    private static String described(ExecCommand exec) {
        SettingsOptions o = exec.cli.options;
        return "backend=" + o.backend + " config=" + o.config + " set=" + o.values + " debug=" + o.debug
                + " | n=" + exec.noStdin + " cwd=" + exec.cwd + " timeout=" + exec.timeout + " env=" + exec.env + " words=" + exec.words;
    }
}

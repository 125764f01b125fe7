package dev.airlock.shell;

import dev.airlock.ConfigurationException;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The one implementation of how staged stdin, staged scripts and heredocs are spelled in shell.
 * Every backend uses these; none writes its own.
 */
public final class StdinScripts {
    /** Reserved exit status: the staged redirect failed. The core maps it to a {@code StagingException}. */
    public static final int STAGING_FAILED = 201;

    /** Largest payload {@link #heredoc} accepts. */
    public static final int HEREDOC_MAX_BYTES = 64 * 1024;

    private static final SecureRandom RANDOM = KernelRandom.create();

    private StdinScripts() {
    }

    /** A fresh staged-stdin path in {@code privateDir}: {@code DIR/.airlock-stdin-<random>}. */
    public static String stagedStdinPath(String privateDir) {
        return privateDir + "/.airlock-stdin-" + randomToken();
    }

    /** A fresh staged-script path in {@code privateDir}. */
    public static String stagedScriptPath(String privateDir) {
        return privateDir + "/.airlock-script-" + randomToken();
    }

    /** 128 random bits as hex: unguessable names for staged files. */
    public static String randomToken() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /**
     * The three-line redirect: stdin from the staged file, the file removed while the command
     * holds it open, then the command. {@code command} keeps a failed redirect from killing dash
     * or busybox before {@code ||} runs. The command itself starts on its own line, so a syntax
     * error in it cannot stop the first two lines.
     */
    public static String redirectPrefix(String stagedPath) {
        return openThenRemove("exec 0<", stagedPath);
    }

    /**
     * Opens a staged env script ({@code export}/{@code unset} lines) on descriptor 4 and removes the
     * file; {@link #sourceOpenedEnv()} reads it in after every other staging line, so the request's
     * own {@code PATH} (which may lack {@code rm}) is in force only once the files are gone.
     */
    public static String openStagedEnv(String stagedPath) {
        return openThenRemove("exec 4<", stagedPath);
    }

    /** The second half of {@link #openStagedEnv}: source it from the descriptor, then close it. */
    public static String sourceOpenedEnv() {
        return "command . /dev/fd/4 || exit " + STAGING_FAILED + "\nexec 4<&-\n";
    }

    /**
     * The one shape of every staging prefix: {@code command VERB P || exit 201}, then remove P.
     * {@code command} keeps a failing special builtin from exiting dash or busybox before {@code ||};
     * {@code command -p} finds {@code rm} along the system's default PATH, since a backend that
     * passes the request's env natively hands the script a PATH that may lack it.
     */
    private static String openThenRemove(String verb, String stagedPath) {
        String p = Shell.quotePath(stagedPath);
        return "command " + verb + " " + p + " || exit " + STAGING_FAILED + "\n"
                + "command -p rm -f -- " + p + " || exit " + STAGING_FAILED + "\n";
    }

    /** The prefix for a command that gets no stdin: end-of-input at once. */
    public static String noStdinPrefix() {
        return "exec 0</dev/null\n";
    }

    /**
     * Runs a staged script file through a descriptor and removes the file before the script's own
     * code runs: {@code shell} opens {@code /dev/fd/3} itself, so descriptor 3 must still be open
     * when it starts; the script closes it first (see {@link #stagedScript}).
     */
    public static String runStagedScript(String shell, String scriptPath) {
        return openStagedScript(scriptPath) + execStagedScript(shell);
    }

    /** The first half of {@link #runStagedScript}: open the staged script on descriptor 3 and remove the file. */
    public static String openStagedScript(String scriptPath) {
        return openThenRemove("exec 3<", scriptPath);
    }

    /**
     * The second half of {@link #runStagedScript}: the shell reads the script from descriptor 3.
     * Give {@code shell} by absolute path: the request's env is in force here, its PATH included.
     */
    public static String execStagedScript(String shell) {
        return "exec " + shell + " /dev/fd/3\n";
    }

    /**
     * The content of a staged script for {@link #runStagedScript}: the command after a line that
     * closes descriptor 3, so the command's processes do not inherit the script's descriptor.
     */
    public static String stagedScript(String command) {
        return "exec 3<&-\n" + command;
    }

    /**
     * Embeds {@code stdin} in the command as a quoted heredoc, for plugins whose backend has no
     * other way. Not byte-exact: the heredoc adds a final newline when the payload lacks one and
     * cannot hold NUL. Refuses NUL bytes, non-UTF-8 text and payloads over {@link #HEREDOC_MAX_BYTES}.
     */
    public static String heredoc(byte[] stdin, String command) {
        if (stdin.length > HEREDOC_MAX_BYTES) {
            throw new ConfigurationException("stdin of " + stdin.length + " bytes is too large for a heredoc backend (max "
                    + HEREDOC_MAX_BYTES + "); use a backend with PIPE or PAYLOAD stdin");
        }
        for (byte b : stdin) {
            if (b == 0) {
                throw new ConfigurationException("stdin contains a NUL byte, which a heredoc backend cannot deliver;"
                        + " use a backend with PIPE or PAYLOAD stdin");
            }
        }
        String text = new String(stdin, StandardCharsets.UTF_8);
        if (!java.util.Arrays.equals(text.getBytes(StandardCharsets.UTF_8), stdin)) {
            throw new ConfigurationException("stdin is not valid UTF-8, which a heredoc backend cannot deliver exactly;"
                    + " use a backend with PIPE or PAYLOAD stdin");
        }
        String marker = "AIRLOCK_EOF_" + randomToken();
        String body = text.endsWith("\n") || text.isEmpty() ? text : text + "\n";
        return "{\n" + command + "\n} <<'" + marker + "'\n" + body + marker + "\n";
    }
}

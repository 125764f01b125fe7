package dev.airlock.tools;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The six tools' names, descriptions and JSON Schemas: one definition for every door. */
final class ToolDefinitions {
    static final String EXEC = "exec";
    static final String WRITE_FILE = "write_file";
    static final String READ_FILE = "read_file";
    static final String LIST_DIR = "list_dir";
    static final String STAT = "stat";
    static final String DELETE = "delete";

    private static final String PATH_TEXT = "Path on the target. '~' is the home directory there; relative paths"
            + " start at the target's working directory.";

    private ToolDefinitions() {
    }

    static List<ToolDefinition> all(long maxReadBytes, boolean sessions) {
        return List.of(exec(sessions), writeFile(), readFile(maxReadBytes), listDir(), stat(), delete());
    }

    private static ToolDefinition exec(boolean sessions) {
        Map<String, Object> in = object(
                props(
                        "command", string("The shell command line, run by bash -c (sh -c where bash is absent)."
                                + " Pipes, redirections and && work. Give input data through stdin or stdin_base64,"
                                + " not inside the command."),
                        "cwd", string("Working directory on the target ('~' is the home directory). Default: the"
                                + (sessions ? " session's directory (where the last cd left it); a cwd given here"
                                + " becomes the session's directory, like a cd." : " environment's working directory.")),
                        "timeout_seconds", with(number("Kill the command and everything it started after this"
                                + " many seconds; it then reports timed_out true and exit_code 124."), "exclusiveMinimum", 0),
                        "env", with(object(props(), List.of(), "Extra environment variables for the command, as"
                                + " NAME: value strings."), "additionalProperties", Map.of("type", "string")),
                        "stdin", string("Text (UTF-8) given to the command's standard input. Without stdin or"
                                + " stdin_base64 the command reads end-of-input at once."),
                        "stdin_base64", string("Binary data for the command's standard input, base64 encoded."
                                + " Use instead of stdin for bytes that are not text."),
                        "max_output_bytes", with(with(integer("The most of each of stdout and stderr this reply"
                                + " carries, counted as sent (escaped JSON text or base64). Default "
                                + AirlockTools.DEFAULT_MAX_OUTPUT_BYTES + " (1 MiB), at most "
                                + AirlockTools.MAX_OUTPUT_CEILING + ". Output beyond it is saved to a file on the"
                                + " target; the result names it."), "minimum", 1), "maximum", AirlockTools.MAX_OUTPUT_CEILING)),
                List.of("command"), null);
        if (sessions) {
            properties(in).put("session", with(string("A shell session to run in, by name (letters, digits, '.', '_',"
                    + " '-'): its own working directory and exported variables. Default: the main session. Commands of"
                    + " one session run one at a time; use another session to run something alongside."),
                    "pattern", "^[A-Za-z0-9._-]{1,64}$"));
        }
        Map<String, Object> out = object(
                props(
                        "exit_code", integer("The command's exit status: 0 is success; 124 after a timeout, 130"
                                + " after a cancel, 128+N when signal N ended it, 126 when cwd could not be entered."),
                        "stdout", string("Standard output, when it is valid UTF-8 text."),
                        "stdout_base64", string("Standard output, base64 encoded, when it is not valid UTF-8."),
                        "stderr", string("Standard error, when it is valid UTF-8 text."),
                        "stderr_base64", string("Standard error, base64 encoded, when it is not valid UTF-8."),
                        "stdout_dropped", integer("Bytes of standard output not in this reply (0 when it is all here)."),
                        "stderr_dropped", integer("Bytes of standard error not in this reply (0 when it is all here)."),
                        "timed_out", bool("The timeout killed the command."),
                        "cancelled", bool("The call was cancelled and the command's process tree killed."),
                        "stdout_file", string("When stdout was cut: a file on the target with all of it (as"
                                + " captured); read the rest with read_file at offset = the bytes this reply has."),
                        "stderr_file", string("When stderr was cut: a file on the target with all of it."),
                        "note", string("When output was cut: how much this reply has and exactly how to get the rest.")),
                List.of("exit_code", "stdout_dropped", "stderr_dropped", "timed_out"), null);
        return new ToolDefinition(EXEC, "Run a shell command",
                "Runs a shell command on the target machine and returns its exit code, standard output and"
                        + " standard error exactly as written (text, or base64 when the bytes are not valid UTF-8)."
                        + (sessions ? " Commands run in a shell session, as in one terminal: the working directory"
                                + " (cd, or the cwd argument) and exported variables carry over to the next exec." : "")
                        + " Each stream is cut after about 1 MiB (max_output_bytes): the reply then keeps its head,"
                        + " counts the bytes left out and saves the whole stream to a file you can read with read_file."
                        + " Writes to protected files (credentials, system files) are refused; some need a human's"
                        + " approval. A refusal is final: do not retry it another way unless the user agrees.",
                in, out, false, true);
    }

    private static ToolDefinition writeFile() {
        Map<String, Object> in = object(
                props(
                        "path", string(PATH_TEXT + " Missing parent directories are created."),
                        "content", string("The file's new content as text (written as UTF-8)."),
                        "content_base64", string("The file's new content, base64 encoded, for bytes that are not"
                                + " text. Give exactly one of content or content_base64."),
                        "mode", with(string("Permission bits in octal, e.g. \"0644\" or \"0755\". Default: an"
                                + " existing file keeps its mode, a new one gets 0644."), "pattern", "^0?[0-7]{3,4}$")),
                List.of("path"), null);
        Map<String, Object> out = object(
                props("path", string("The path written."),
                        "size", integer("Bytes written.")),
                List.of("path", "size"), null);
        return new ToolDefinition(WRITE_FILE, "Write a file",
                "Creates or replaces a file on the target with exactly the given bytes, atomically (readers see"
                        + " the old file or the whole new one). Protected files are refused or need a human's approval;"
                        + " a refusal is final: do not retry it another way unless the user agrees.",
                in, out, false, true);
    }

    private static ToolDefinition readFile(long maxReadBytes) {
        long piece = ReplyBytes.guaranteed(maxReadBytes);
        Map<String, Object> in = object(props("path", string(PATH_TEXT),
                        "offset", with(integer("Start reading at this byte. Default 0."), "minimum", 0),
                        "length", with(integer("Read at most this many bytes. Default: to the end of the file."),
                                "minimum", 1)),
                List.of("path"), null);
        Map<String, Object> out = object(
                props("content", string("The content read, when it is valid UTF-8 text."),
                        "content_base64", string("The content read, base64 encoded, when it is not valid UTF-8."),
                        "size", integer("The whole file's size in bytes."),
                        "offset", integer("Where the content read starts (present when it is not the whole file)."),
                        "length", integer("Bytes read (present when it is not the whole file).")),
                List.of("size"), null);
        return new ToolDefinition(READ_FILE, "Read a file",
                "Returns a file's exact content, or the piece from offset of length bytes: as text when it is"
                        + " valid UTF-8, else base64. One reply holds at most " + maxReadBytes + " bytes of text or"
                        + " base64 (" + piece + " bytes of any file); read bigger files in pieces with offset and"
                        + " length.",
                in, out, true, false);
    }

    private static ToolDefinition listDir() {
        Map<String, Object> in = object(props("path", string(PATH_TEXT)), List.of("path"), null);
        Map<String, Object> entry = object(entryProps(), List.of("name", "type", "size", "mode", "mtime"), null);
        Map<String, Object> out = object(
                props("path", string("The directory listed."),
                        "entries", with(with(new LinkedHashMap<>(), "type", "array"), "items", entry)),
                List.of("path", "entries"), null);
        return new ToolDefinition(LIST_DIR, "List a directory",
                "Lists a directory's entries sorted by name, each with its type (file, directory, symlink,"
                        + " other), size in bytes, permission bits and modification time. Symlinks are not followed.",
                in, out, true, false);
    }

    private static ToolDefinition stat() {
        Map<String, Object> in = object(props("path", string(PATH_TEXT)), List.of("path"), null);
        Map<String, Object> p = props("path", string("The path asked about."),
                "exists", bool("Whether anything is at the path."));
        p.putAll(entryProps());
        p.remove("name");
        Map<String, Object> out = object(p, List.of("path", "exists"), null);
        return new ToolDefinition(STAT, "Describe a path",
                "Tells whether a path exists and, if so, its type (file, directory, symlink, other), size,"
                        + " permission bits and modification time. A final symlink is described, not followed.",
                in, out, true, false);
    }

    private static ToolDefinition delete() {
        Map<String, Object> in = object(
                props("path", string(PATH_TEXT),
                        "recursive", bool("Also remove a directory that is not empty, with everything in it."
                                + " Default false.")),
                List.of("path"), null);
        Map<String, Object> out = object(
                props("path", string("The path."),
                        "deleted", bool("True when something was removed, false when nothing was there.")),
                List.of("path", "deleted"), null);
        return new ToolDefinition(DELETE, "Delete a path",
                "Removes a file, a symlink (not what it points to) or an empty directory; with recursive true,"
                        + " a whole directory tree. Protected paths are refused.",
                in, out, false, true);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> properties(Map<String, Object> objectSchema) {
        return (Map<String, Object>) objectSchema.get("properties");
    }

    private static Map<String, Object> entryProps() {
        return props(
                "name", string("The entry's name."),
                "type", with(string("file, directory, symlink or other."), "enum",
                        List.of("file", "directory", "symlink", "other")),
                "size", integer("Size in bytes (for a symlink: the length of its target)."),
                "mode", string("Permission bits in octal, e.g. \"0644\"."),
                "mtime", string("Last modification, ISO-8601 UTC."));
    }

    // --- tiny schema builders (ordered maps, so schemas read in a stable order) ---

    private static Map<String, Object> props(Object... nameAndSchema) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < nameAndSchema.length; i += 2) {
            m.put((String) nameAndSchema[i], nameAndSchema[i + 1]);
        }
        return m;
    }

    private static Map<String, Object> object(Map<String, Object> properties, List<String> required, String description) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "object");
        if (description != null) {
            m.put("description", description);
        }
        m.put("properties", properties);
        if (!required.isEmpty()) {
            m.put("required", required);
        }
        return m;
    }

    private static Map<String, Object> typed(String type, String description) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", type);
        m.put("description", description);
        return m;
    }

    private static Map<String, Object> string(String description) {
        return typed("string", description);
    }

    private static Map<String, Object> integer(String description) {
        return typed("integer", description);
    }

    private static Map<String, Object> number(String description) {
        return typed("number", description);
    }

    private static Map<String, Object> bool(String description) {
        return typed("boolean", description);
    }

    private static Map<String, Object> with(Map<String, Object> m, String key, Object value) {
        m.put(key, value);
        return m;
    }
}

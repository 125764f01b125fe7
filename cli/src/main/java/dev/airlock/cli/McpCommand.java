package dev.airlock.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/**
 * {@code airlock mcp}: an MCP server over stdio serving the configured backend. This class names
 * no MCP type, so the SDK's classes load only when this command runs, never for the others.
 */
@Command(name = "mcp", mixinStandardHelpOptions = true,
        description = {"Serves the configured backend to an agent over the Model Context Protocol (stdio).",
                "Tools: exec, write_file, read_file, list_dir, stat, delete. JSON-RPC on stdin/stdout, logs on"
                        + " stderr. The environment opens at the first tool call and closes (killing what still"
                        + " runs) when stdin ends. The exec calls of a connection share a shell session (cd and"
                        + " export carry over; the session argument names others); with --set airlock.session=NAME"
                        + " it is NAME's, kept across connections as for 'airlock exec'. Writes that need approval are asked through the client"
                        + " (MCP elicitation) when it supports that, and refused otherwise. Each exec stream returns"
                        + " at most 1 MiB (max_output_bytes; the rest is saved to a file on the target) and"
                        + " read_file reads big files in pieces (offset, length), so no reply nears a client's limit."})
final class McpCommand implements Callable<Integer> {
    @ParentCommand
    AirlockCli cli;

    @Override
    public Integer call() throws Exception {
        return McpServerMain.serve(cli.settings());
    }
}

package dev.airlock.tools;

import java.util.Map;

/**
 * One tool as an agent sees it: its name, a description written for a model, and the JSON Schemas
 * of its arguments and of its structured result (as plain maps, so each door renders them with its
 * own JSON library).
 *
 * @param name         the tool's name, e.g. {@code exec}; clients and docs rely on it
 * @param title        a short human title
 * @param description  what the tool does, for a model to read
 * @param inputSchema  JSON Schema of the arguments object
 * @param outputSchema JSON Schema of the structured result
 * @param readOnly     the tool changes nothing on the target
 * @param destructive  the tool may remove or overwrite data
 */
public record ToolDefinition(String name, String title, String description, Map<String, Object> inputSchema,
                             Map<String, Object> outputSchema, boolean readOnly, boolean destructive) {
}

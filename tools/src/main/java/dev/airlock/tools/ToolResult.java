package dev.airlock.tools;

import dev.airlock.internal.Json;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a tool call produced: a structured result matching the tool's output schema, or an error
 * message for the model (one line: what went wrong and what to do). A tool call never throws.
 *
 * @param structured the result object; empty when {@code error} is set
 * @param error      the error message, or null on success
 */
public record ToolResult(Map<String, Object> structured, String error) {

    public static ToolResult ok(Map<String, Object> structured) {
        return new ToolResult(Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(structured, "structured"))), null);
    }

    public static ToolResult error(String message) {
        return new ToolResult(Map.of(), Objects.requireNonNull(message, "message"));
    }

    public boolean isError() {
        return error != null;
    }

    /** The text a model reads: the result as JSON, or the error message. */
    public String text() {
        return isError() ? error : Json.write(structured);
    }
}

package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The fields of one Claude Code transcript line that {@link ClaudeParser} reads, and nothing else: read straight
 * from the line's bytes by {@link LeanJson#readClaude} (every other field, tool results, snapshots and thinking
 * included, passed over without being decoded or kept), or taken from a JSON tree ({@link #of}). A text field is
 * null when absent or not a string (as {@link SessionParser#text}); a count null when absent or not a number
 * ({@link SessionParser#number}: a fraction truncated); a flag true only for {@code true}, a string
 * {@code "true"} or a non-zero integer (Jackson's {@code asBoolean(false)}). A field written twice has its last
 * value.
 */
final class ClaudeLine {
    String type;
    boolean hasSessionId;
    String sessionId;
    String cwd;
    String uuid;
    String timestamp;
    String leafUuid;
    boolean sidechain;
    boolean meta;
    boolean compactSummary;
    boolean visibleInTranscriptOnly;
    boolean hasToolUseResult;

    /** {@code message} is an object. */
    boolean hasMessage;
    String role;
    String model;
    String id;
    String stopReason;
    /** {@code message.content} when it is a string, else null. */
    String contentText;
    /** {@code message.content} is an array (its object items are {@link #blocks}). */
    boolean contentArray;
    final List<Block> blocks = new ArrayList<>();
    /** {@code message.usage} is an object. */
    boolean hasUsage;
    Long inputTokens;
    Long cacheReadInputTokens;
    Long cacheCreationInputTokens;
    Long outputTokens;

    /**
     * One object of {@code message.content}: its type, text, tool name, and the tool input's {@code file_path} and
     * {@code notebook_path}.
     */
    record Block(String type, String text, String name, String filePath, String notebookPath) {
    }

    /**
     * The line's fields, read from its bytes.
     *
     * @return null when the line is JSON but not an object
     * @throws IOException when it is not JSON (the message names the byte, as {@link LeanJson#read})
     */
    static ClaudeLine read(byte[] b, int off, int len) throws IOException {
        ClaudeLine l = new ClaudeLine();
        return LeanJson.readClaude(b, off, len, l) ? l : null;
    }

    /** The fields of a line already read as a tree (any JSON object). */
    static ClaudeLine of(JsonNode line) {
        ClaudeLine l = new ClaudeLine();
        l.type = SessionParser.text(line, "type");
        l.hasSessionId = line.has("sessionId");
        l.sessionId = SessionParser.text(line, "sessionId");
        l.cwd = SessionParser.text(line, "cwd");
        l.uuid = SessionParser.text(line, "uuid");
        l.timestamp = SessionParser.text(line, "timestamp");
        l.leafUuid = SessionParser.text(line, "leafUuid");
        l.sidechain = line.path("isSidechain").asBoolean(false);
        l.meta = line.path("isMeta").asBoolean(false);
        l.compactSummary = line.path("isCompactSummary").asBoolean(false);
        l.visibleInTranscriptOnly = line.path("isVisibleInTranscriptOnly").asBoolean(false);
        l.hasToolUseResult = line.has("toolUseResult");
        JsonNode message = line.get("message");
        if (message != null && message.isObject()) {
            l.hasMessage = true;
            l.role = SessionParser.text(message, "role");
            l.model = SessionParser.text(message, "model");
            l.id = SessionParser.text(message, "id");
            l.stopReason = SessionParser.text(message, "stop_reason");
            JsonNode content = message.get("content");
            if (content != null && content.isTextual()) {
                l.contentText = content.asText();
            } else if (content != null && content.isArray()) {
                l.contentArray = true;
                for (JsonNode block : content) {
                    if (block.isObject()) {
                        JsonNode input = block.get("input");
                        boolean in = input != null && input.isObject();
                        l.blocks.add(new Block(SessionParser.text(block, "type"), SessionParser.text(block, "text"),
                                SessionParser.text(block, "name"), in ? SessionParser.text(input, "file_path") : null,
                                in ? SessionParser.text(input, "notebook_path") : null));
                    }
                }
            }
            JsonNode usage = message.get("usage");
            if (usage != null && usage.isObject()) {
                l.hasUsage = true;
                l.inputTokens = SessionParser.number(usage, "input_tokens");
                l.cacheReadInputTokens = SessionParser.number(usage, "cache_read_input_tokens");
                l.cacheCreationInputTokens = SessionParser.number(usage, "cache_creation_input_tokens");
                l.outputTokens = SessionParser.number(usage, "output_tokens");
            }
        }
        return l;
    }

    /** Clears what {@code message} gave (a second {@code message} field replaces the first). */
    void clearMessage() {
        hasMessage = false;
        role = null;
        model = null;
        id = null;
        stopReason = null;
        contentText = null;
        contentArray = false;
        blocks.clear();
        clearUsage();
    }

    void clearUsage() {
        hasUsage = false;
        inputTokens = null;
        cacheReadInputTokens = null;
        cacheCreationInputTokens = null;
        outputTokens = null;
    }

    private List<Object> fields() {
        return java.util.Arrays.asList(type, hasSessionId, sessionId, cwd, uuid, timestamp, leafUuid, sidechain, meta,
                compactSummary, visibleInTranscriptOnly, hasToolUseResult, hasMessage, role, model, id, stopReason,
                contentText, contentArray, blocks, hasUsage, inputTokens, cacheReadInputTokens, cacheCreationInputTokens,
                outputTokens);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClaudeLine other && fields().equals(other.fields());
    }

    @Override
    public int hashCode() {
        return Objects.hash(fields().toArray());
    }

    @Override
    public String toString() {
        return "ClaudeLine" + fields();
    }
}

package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The fields of one Codex rollout line that {@link CodexParser} reads, and nothing else: read straight from the
 * line's bytes by {@link LeanJson#readCodex} (tool outputs, encrypted reasoning, compacted history and every other
 * field passed over without being decoded or kept), or taken from a JSON tree ({@link #of}). The line's own
 * fields and its {@code payload}'s are {@link Fields} of the same shape, since an early rollout's line is its own
 * payload. Values follow {@link SessionParser#text} and {@link SessionParser#number} (null when absent or of
 * another type); a field written twice has its last value.
 */
final class CodexLine {
    boolean hasPayload;
    boolean hasRecordType;
    boolean hasId;
    boolean hasTimestamp;
    String timestamp;
    /** The line's own fields. */
    final Fields root = new Fields();
    /** The {@code payload}'s fields (all null when it is absent or not an object). */
    final Fields payload = new Fields();

    /**
     * The fields of a payload (or of a line read as its own payload).
     */
    static final class Fields {
        String type;
        String id;
        String cwd;
        String forkedFromId;
        String model;
        String role;
        String name;
        String input;
        String arguments;
        /** {@code action} as a tree (a local shell call's command), or null. */
        JsonNode action;
        String message;
        String lastAgentMessage;
        Long modelContextWindow;
        /** {@code source} is an object with a {@code subagent} field. */
        boolean subAgentSource;
        /** {@code info} is an object. */
        boolean hasInfo;
        Long infoModelContextWindow;
        Long lastInputTokens;
        Long lastOutputTokens;
        /** The number of items (or fields) of {@code images} and of {@code local_images}. */
        int images;
        int localImages;
        /** {@code content} when it is a string, else null. */
        String contentText;
        /** {@code content}'s object items: their {@code type} and {@code text}. */
        final List<Block> blocks = new ArrayList<>();

        void clearInfo() {
            hasInfo = false;
            infoModelContextWindow = null;
            lastInputTokens = null;
            lastOutputTokens = null;
        }

        static Fields of(JsonNode p) {
            Fields f = new Fields();
            if (p == null || !p.isObject()) {
                return f;
            }
            f.type = SessionParser.text(p, "type");
            f.id = SessionParser.text(p, "id");
            f.cwd = SessionParser.text(p, "cwd");
            f.forkedFromId = SessionParser.text(p, "forked_from_id");
            f.model = SessionParser.text(p, "model");
            f.role = SessionParser.text(p, "role");
            f.name = SessionParser.text(p, "name");
            f.input = SessionParser.text(p, "input");
            f.arguments = SessionParser.text(p, "arguments");
            f.action = p.get("action");
            f.message = SessionParser.text(p, "message");
            f.lastAgentMessage = SessionParser.text(p, "last_agent_message");
            f.modelContextWindow = SessionParser.number(p, "model_context_window");
            JsonNode source = p.get("source");
            f.subAgentSource = source != null && source.isObject() && source.has("subagent");
            JsonNode info = p.get("info");
            if (info != null && info.isObject()) {
                f.hasInfo = true;
                f.infoModelContextWindow = SessionParser.number(info, "model_context_window");
                JsonNode last = info.path("last_token_usage");
                f.lastInputTokens = SessionParser.number(last, "input_tokens");
                f.lastOutputTokens = SessionParser.number(last, "output_tokens");
            }
            f.images = p.path("images").size();
            f.localImages = p.path("local_images").size();
            JsonNode content = p.get("content");
            if (content != null && content.isTextual()) {
                f.contentText = content.asText();
            } else if (content != null && content.isArray()) {
                for (JsonNode block : content) {
                    if (block.isObject()) {
                        f.blocks.add(new Block(SessionParser.text(block, "type"), SessionParser.text(block, "text")));
                    }
                }
            }
            return f;
        }

        private List<Object> values() {
            // action compared as JSON text: a tree's small integers may be int or long nodes
            return java.util.Arrays.asList(type, id, cwd, forkedFromId, model, role, name, input, arguments,
                    action == null ? null : action.toString(),
                    message, lastAgentMessage, modelContextWindow, subAgentSource, hasInfo, infoModelContextWindow,
                    lastInputTokens, lastOutputTokens, images, localImages, contentText, blocks);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Fields other && values().equals(other.values());
        }

        @Override
        public int hashCode() {
            return Objects.hash(values().toArray());
        }

        @Override
        public String toString() {
            return values().toString();
        }
    }

    /** One object of {@code content}: its type and text. */
    record Block(String type, String text) {
    }

    /**
     * The line's fields, read from its bytes.
     *
     * @return null when the line is JSON but not an object
     * @throws IOException when it is not JSON (the message names the byte, as {@link LeanJson#read})
     */
    static CodexLine read(byte[] b, int off, int len) throws IOException {
        CodexLine l = new CodexLine();
        return LeanJson.readCodex(b, off, len, l) ? l : null;
    }

    /** The fields of a line already read as a tree (any JSON object). */
    static CodexLine of(JsonNode line) {
        CodexLine l = new CodexLine();
        l.hasPayload = line.has("payload");
        l.hasRecordType = line.has("record_type");
        l.hasId = line.has("id");
        l.hasTimestamp = line.has("timestamp");
        l.timestamp = SessionParser.text(line, "timestamp");
        copy(Fields.of(line), l.root);
        copy(Fields.of(line.get("payload")), l.payload);
        return l;
    }

    private static void copy(Fields from, Fields to) {
        to.type = from.type;
        to.id = from.id;
        to.cwd = from.cwd;
        to.forkedFromId = from.forkedFromId;
        to.model = from.model;
        to.role = from.role;
        to.name = from.name;
        to.input = from.input;
        to.arguments = from.arguments;
        to.action = from.action;
        to.message = from.message;
        to.lastAgentMessage = from.lastAgentMessage;
        to.modelContextWindow = from.modelContextWindow;
        to.subAgentSource = from.subAgentSource;
        to.hasInfo = from.hasInfo;
        to.infoModelContextWindow = from.infoModelContextWindow;
        to.lastInputTokens = from.lastInputTokens;
        to.lastOutputTokens = from.lastOutputTokens;
        to.images = from.images;
        to.localImages = from.localImages;
        to.contentText = from.contentText;
        to.blocks.clear();
        to.blocks.addAll(from.blocks);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CodexLine other && hasPayload == other.hasPayload && hasRecordType == other.hasRecordType
                && hasId == other.hasId && hasTimestamp == other.hasTimestamp && Objects.equals(timestamp, other.timestamp) && root.equals(other.root)
                && payload.equals(other.payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(hasPayload, hasRecordType, hasId, hasTimestamp, timestamp, root, payload);
    }

    @Override
    public String toString() {
        return "CodexLine[payload " + hasPayload + ", record_type " + hasRecordType + ", id " + hasId + ", timestamp " + hasTimestamp + " " + timestamp
                + ", root " + root + ", payload " + payload + "]";
    }
}

package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.Set;

/**
 * The lean reader as it was built on Jackson's streaming parser: the oracle {@link ImportFastPathsTest} compares
 * {@link LeanJson} with (the same tree for every line of the real transcripts).
 */
final class JacksonLeanJson {
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** Top-level fields left out. */
    private static final Set<String> ROOT_SKIP = Set.of("toolUseResult", "snapshot");
    /** Fields of a message content block left out (tool result content, thinking, signature, image data). */
    private static final Set<String> BLOCK_SKIP = Set.of("content", "thinking", "signature", "data", "source");
    /** The tool input fields kept (the files a tool changed). */
    private static final Set<String> INPUT_KEEP = Set.of("file_path", "notebook_path", "path");
    /** Codex payload fields left out (tool output, encrypted reasoning, compacted history). */
    private static final Set<String> PAYLOAD_SKIP = Set.of("output", "encrypted_content", "replacement_history");

    private enum Ctx { ROOT, MESSAGE, CONTENT, BLOCK, INPUT, PAYLOAD, OTHER }

    private JacksonLeanJson() {
    }

    /**
     * The line as a lean tree (see the class docstring).
     *
     * @throws IOException when it is not JSON
     */
    static JsonNode read(byte[] line) throws IOException {
        return read(line, 0, line.length);
    }

    /** The {@code len} bytes of {@code buf} from {@code off} as a lean tree. */
    static JsonNode read(byte[] buf, int off, int len) throws IOException {
        try (JsonParser p = FACTORY.createParser(buf, off, len)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new IOException("no JSON value");
            }
            JsonNode n = value(p, t, Ctx.ROOT);
            if (p.nextToken() != null) {
                throw new IOException("more than one JSON value on the line");
            }
            return n;
        }
    }

    private static JsonNode value(JsonParser p, JsonToken t, Ctx ctx) throws IOException {
        return switch (t) {
            case START_OBJECT -> object(p, ctx);
            case START_ARRAY -> array(p, ctx == Ctx.CONTENT ? Ctx.BLOCK : Ctx.OTHER);
            case VALUE_STRING -> NODES.textNode(p.getText());
            case VALUE_NUMBER_INT -> p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                    ? NODES.numberNode(p.getBigIntegerValue()) : NODES.numberNode(p.getLongValue());
            case VALUE_NUMBER_FLOAT -> NODES.numberNode(p.getDoubleValue());
            case VALUE_TRUE -> NODES.booleanNode(true);
            case VALUE_FALSE -> NODES.booleanNode(false);
            case VALUE_NULL -> NODES.nullNode();
            default -> throw new IOException("unexpected " + t);
        };
    }

    private static ArrayNode array(JsonParser p, Ctx items) throws IOException {
        ArrayNode a = NODES.arrayNode();
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t == null) {
                throw new IOException("unexpected end of the line");
            }
            a.add(value(p, t, items));
        }
        return a;
    }

    private static ObjectNode object(JsonParser p, Ctx ctx) throws IOException {
        ObjectNode o = NODES.objectNode();
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_OBJECT) {
            if (t != JsonToken.FIELD_NAME) {
                throw new IOException("unexpected " + t);
            }
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (v == null) {
                throw new IOException("unexpected end of the line");
            }
            if (skip(ctx, name)) {
                p.skipChildren(); // a string's text is never decoded
                o.putNull(name);
                continue;
            }
            o.set(name, value(p, v, child(ctx, name)));
        }
        return o;
    }

    private static boolean skip(Ctx ctx, String name) {
        return switch (ctx) {
            case ROOT -> ROOT_SKIP.contains(name);
            case BLOCK -> BLOCK_SKIP.contains(name);
            case INPUT -> !INPUT_KEEP.contains(name);
            case PAYLOAD -> PAYLOAD_SKIP.contains(name);
            default -> false;
        };
    }

    private static Ctx child(Ctx ctx, String name) {
        return switch (ctx) {
            case ROOT -> name.equals("message") ? Ctx.MESSAGE : name.equals("payload") ? Ctx.PAYLOAD : Ctx.OTHER;
            case MESSAGE -> name.equals("content") ? Ctx.CONTENT : Ctx.OTHER;
            case BLOCK -> name.equals("input") ? Ctx.INPUT : Ctx.OTHER;
            default -> Ctx.OTHER;
        };
    }
}

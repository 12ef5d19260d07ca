package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigInteger;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * Reads one transcript line into a tree that leaves out what the import never looks at, without decoding it:
 * Claude Code's tool results ({@code toolUseResult}, a {@code tool_result} block's {@code content}), file
 * snapshots ({@code snapshot}), thinking and signatures, images' data, and every tool input field but the file
 * path; Codex's tool outputs, encrypted reasoning and compacted history. The left-out fields stay as keys with a
 * null value (so {@code has()} still answers). These are the bulk of a transcript's bytes.
 *
 * <p>Its own parser over the UTF-8 bytes (RFC 8259 grammar): a left-out value is checked for its structure and
 * passed over, its strings found eight bytes at a time (a string ends at the first {@code "} not escaped, and
 * only {@code "}, {@code \} and control bytes need a look), never decoded. Kept strings are decoded (invalid
 * UTF-8 becomes U+FFFD); numbers are {@code LongNode}s (a {@code BigIntegerNode} past a long) or
 * {@code DoubleNode}s. Not JSON, or anything after the first value, is an {@link IOException} naming the byte.
 */
final class LeanJson {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final long QUOTES = 0x2222222222222222L;
    private static final long BACKSLASHES = 0x5C5C5C5C5C5C5C5CL;
    private static final long SPACES = 0x2020202020202020L;

    /** Top-level fields left out. */
    private static final Set<String> ROOT_SKIP = Set.of("toolUseResult", "snapshot");
    /** Fields of a message content block left out (tool result content, thinking, signature, image data). */
    private static final Set<String> BLOCK_SKIP = Set.of("content", "thinking", "signature", "data", "source");
    /** The tool input fields kept (the files a tool changed). */
    private static final Set<String> INPUT_KEEP = Set.of("file_path", "notebook_path", "path");
    /** Codex payload fields left out (tool output, encrypted reasoning, compacted history). */
    private static final Set<String> PAYLOAD_SKIP = Set.of("output", "encrypted_content", "replacement_history");
    /** Nesting deeper than this is refused (a line is a record, not a tree of this depth). */
    private static final int MAX_DEPTH = 1_000;

    private enum Ctx { ROOT, MESSAGE, CONTENT, BLOCK, INPUT, PAYLOAD, OTHER }

    private final byte[] b;
    private final int end;
    private int pos;
    private int depth;

    private LeanJson(byte[] b, int off, int len) {
        this.b = b;
        this.pos = off;
        this.end = off + len;
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
        LeanJson p = new LeanJson(buf, off, len);
        if (len >= 3 && buf[off] == (byte) 0xEF && buf[off + 1] == (byte) 0xBB && buf[off + 2] == (byte) 0xBF) {
            p.pos += 3; // a UTF-8 byte order mark, as a file's first line may start with
        }
        p.ws();
        if (p.pos >= p.end) {
            throw new IOException("no JSON value");
        }
        JsonNode n = p.value(Ctx.ROOT);
        p.ws();
        if (p.pos < p.end) {
            throw p.error("more than one JSON value on the line");
        }
        return n;
    }

    // ---- fields read straight from the bytes, no tree (ClaudeLine)

    private static byte[][] keys(String... names) {
        byte[][] k = new byte[names.length][];
        for (int i = 0; i < names.length; i++) {
            k[i] = names[i].getBytes(StandardCharsets.UTF_8);
        }
        return k;
    }

    private static final byte[][] CLAUDE_ROOT = keys("type", "sessionId", "cwd", "uuid", "timestamp", "leafUuid",
            "isSidechain", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly", "toolUseResult", "message");
    private static final byte[][] CLAUDE_MESSAGE = keys("role", "model", "id", "stop_reason", "content", "usage");
    private static final byte[][] CLAUDE_BLOCK = keys("type", "text", "name", "input");
    private static final byte[][] CLAUDE_INPUT = keys("file_path", "notebook_path");
    private static final byte[][] CLAUDE_USAGE = keys("input_tokens", "cache_read_input_tokens",
            "cache_creation_input_tokens", "output_tokens");

    /**
     * Reads the fields {@link ClaudeLine} holds from one line into {@code out}, passing over every other value
     * (its structure checked, nothing decoded or built), as strict as {@link #read} about what is JSON.
     *
     * @return false when the line is a JSON value other than an object ({@code out} untouched)
     * @throws IOException when it is not JSON
     */
    static boolean readClaude(byte[] buf, int off, int len, ClaudeLine out) throws IOException {
        LeanJson p = new LeanJson(buf, off, len);
        p.start();
        boolean object = p.peek() == '{';
        if (object) {
            p.claudeRoot(out);
        } else {
            p.skipValue();
        }
        p.finish();
        return object;
    }

    /** Passes over a byte order mark and white space before the line's value. */
    private void start() throws IOException {
        if (end - pos >= 3 && b[pos] == (byte) 0xEF && b[pos + 1] == (byte) 0xBB && b[pos + 2] == (byte) 0xBF) {
            pos += 3; // a UTF-8 byte order mark, as a file's first line may start with
        }
        ws();
        if (pos >= end) {
            throw new IOException("no JSON value");
        }
    }

    /** Checks that nothing but white space follows the line's value. */
    private void finish() throws IOException {
        ws();
        if (pos < end) {
            throw error("more than one JSON value on the line");
        }
    }

    /**
     * The field name at {@code pos} as its index in {@code keys} (-1 for another name), with the {@code :} and
     * white space after it passed over. A name without escapes is compared as bytes, not decoded.
     */
    private int key(byte[][] keys) throws IOException {
        if (peek() != '"') {
            throw error("expected a field name");
        }
        int start = pos + 1;
        int i = special(start);
        int found = -1;
        if (i < end && b[i] == '"') {
            int len = i - start;
            for (int k = 0; k < keys.length; k++) {
                if (keys[k].length == len && java.util.Arrays.equals(b, start, i, keys[k], 0, len)) {
                    found = k;
                    break;
                }
            }
            pos = i + 1;
        } else {
            String name = string();
            for (int k = 0; k < keys.length; k++) {
                if (name.equals(new String(keys[k], StandardCharsets.UTF_8))) {
                    found = k;
                    break;
                }
            }
        }
        ws();
        expect(':');
        ws();
        return found;
    }

    /** The string value at {@code pos}, or null (the value passed over) when it is not a string. */
    private String text() throws IOException {
        if (peek() == '"') {
            return string();
        }
        skipValue();
        return null;
    }

    /** The number at {@code pos} as a long ({@code JsonNode.asLong()}), or null (passed over) when it is not one. */
    private Long count() throws IOException {
        byte c = peek();
        if (c == '-' || (c >= '0' && c <= '9')) {
            return number().asLong();
        }
        skipValue();
        return null;
    }

    /** The value at {@code pos} as {@code JsonNode.asBoolean(false)} gives it, passed over. */
    private boolean flag() throws IOException {
        byte c = peek();
        if (c == 't' || c == 'f') {
            literal(c == 't' ? "true" : "false");
            return c == 't';
        }
        if (c == '"') {
            return NODES.textNode(string()).asBoolean(false);
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            return number().asBoolean(false);
        }
        skipValue();
        return false;
    }

    private void claudeRoot(ClaudeLine l) throws IOException {
        if (!open('}')) {
            return;
        }
        do {
            switch (key(CLAUDE_ROOT)) {
                case 0 -> l.type = text();
                case 1 -> {
                    l.hasSessionId = true;
                    l.sessionId = text();
                }
                case 2 -> l.cwd = text();
                case 3 -> l.uuid = text();
                case 4 -> l.timestamp = text();
                case 5 -> l.leafUuid = text();
                case 6 -> l.sidechain = flag();
                case 7 -> l.meta = flag();
                case 8 -> l.compactSummary = flag();
                case 9 -> l.visibleInTranscriptOnly = flag();
                case 10 -> {
                    l.hasToolUseResult = true;
                    skipValue();
                }
                case 11 -> claudeMessage(l);
                default -> skipValue();
            }
        } while (next('}'));
    }

    private void claudeMessage(ClaudeLine l) throws IOException {
        l.clearMessage();
        if (peek() != '{') {
            skipValue();
            return;
        }
        l.hasMessage = true;
        if (!open('}')) {
            return;
        }
        do {
            switch (key(CLAUDE_MESSAGE)) {
                case 0 -> l.role = text();
                case 1 -> l.model = text();
                case 2 -> l.id = text();
                case 3 -> l.stopReason = text();
                case 4 -> claudeContent(l);
                case 5 -> claudeUsage(l);
                default -> skipValue();
            }
        } while (next('}'));
    }

    private void claudeContent(ClaudeLine l) throws IOException {
        l.contentText = null;
        l.contentArray = false;
        l.blocks.clear();
        byte c = peek();
        if (c == '"') {
            l.contentText = string();
        } else if (c == '[') {
            l.contentArray = true;
            if (open(']')) {
                do {
                    if (peek() == '{') {
                        l.blocks.add(claudeBlock());
                    } else {
                        skipValue();
                    }
                } while (next(']'));
            }
        } else {
            skipValue();
        }
    }

    private ClaudeLine.Block claudeBlock() throws IOException {
        String type = null;
        String text = null;
        String name = null;
        String filePath = null;
        String notebookPath = null;
        if (open('}')) {
            do {
                switch (key(CLAUDE_BLOCK)) {
                    case 0 -> type = text();
                    case 1 -> text = text();
                    case 2 -> name = text();
                    case 3 -> {
                        filePath = null;
                        notebookPath = null;
                        if (peek() != '{') {
                            skipValue();
                        } else if (open('}')) {
                            do {
                                switch (key(CLAUDE_INPUT)) {
                                    case 0 -> filePath = text();
                                    case 1 -> notebookPath = text();
                                    default -> skipValue();
                                }
                            } while (next('}'));
                        }
                    }
                    default -> skipValue();
                }
            } while (next('}'));
        }
        return new ClaudeLine.Block(type, text, name, filePath, notebookPath);
    }

    private void claudeUsage(ClaudeLine l) throws IOException {
        l.clearUsage();
        if (peek() != '{') {
            skipValue();
            return;
        }
        l.hasUsage = true;
        if (!open('}')) {
            return;
        }
        do {
            switch (key(CLAUDE_USAGE)) {
                case 0 -> l.inputTokens = count();
                case 1 -> l.cacheReadInputTokens = count();
                case 2 -> l.cacheCreationInputTokens = count();
                case 3 -> l.outputTokens = count();
                default -> skipValue();
            }
        } while (next('}'));
    }

    /** A payload's fields ({@link CodexLine.Fields}), then the line's own (root only). */
    private static final byte[][] CODEX_FIELDS = keys("type", "id", "cwd", "forked_from_id", "model", "role", "name",
            "input", "arguments", "action", "message", "last_agent_message", "model_context_window", "source", "info",
            "images", "local_images", "content", "payload", "record_type", "timestamp");
    private static final int CODEX_PAYLOAD = 18;
    private static final byte[][] CODEX_INFO = keys("model_context_window", "last_token_usage");
    private static final byte[][] CODEX_USAGE = keys("input_tokens", "output_tokens");
    private static final byte[][] CODEX_BLOCK = keys("type", "text");
    private static final byte[][] CODEX_SOURCE = keys("subagent");

    /**
     * Reads the fields {@link CodexLine} holds from one line into {@code out}, passing over every other value,
     * as strict as {@link #read} about what is JSON.
     *
     * @return false when the line is a JSON value other than an object ({@code out} untouched)
     * @throws IOException when it is not JSON
     */
    static boolean readCodex(byte[] buf, int off, int len, CodexLine out) throws IOException {
        LeanJson p = new LeanJson(buf, off, len);
        p.start();
        boolean object = p.peek() == '{';
        if (object) {
            p.codexFields(out.root, out);
        } else {
            p.skipValue();
        }
        p.finish();
        return object;
    }

    /** The object at {@code pos} into {@code f}; {@code line} is the line when it is the line's own object, else null. */
    private void codexFields(CodexLine.Fields f, CodexLine line) throws IOException {
        if (!open('}')) {
            return;
        }
        do {
            int k = key(CODEX_FIELDS);
            if (k >= CODEX_PAYLOAD && line == null) {
                k = -1; // payload, record_type and timestamp are the line's
            }
            switch (k) {
                case 0 -> f.type = text();
                case 1 -> {
                    if (line != null) {
                        line.hasId = true;
                    }
                    f.id = text();
                }
                case 2 -> f.cwd = text();
                case 3 -> f.forkedFromId = text();
                case 4 -> f.model = text();
                case 5 -> f.role = text();
                case 6 -> f.name = text();
                case 7 -> f.input = text();
                case 8 -> f.arguments = text();
                case 9 -> f.action = value(Ctx.OTHER);
                case 10 -> f.message = text();
                case 11 -> f.lastAgentMessage = text();
                case 12 -> f.modelContextWindow = count();
                case 13 -> {
                    f.subAgentSource = false;
                    if (peek() != '{') {
                        skipValue();
                    } else if (open('}')) {
                        do {
                            if (key(CODEX_SOURCE) == 0) {
                                f.subAgentSource = true;
                            }
                            skipValue();
                        } while (next('}'));
                    }
                }
                case 14 -> codexInfo(f);
                case 15 -> f.images = items();
                case 16 -> f.localImages = items();
                case 17 -> codexContent(f);
                case 18 -> {
                    line.hasPayload = true;
                    clear(line.payload);
                    if (peek() == '{') {
                        codexFields(line.payload, null);
                    } else {
                        skipValue();
                    }
                }
                case 19 -> {
                    line.hasRecordType = true;
                    skipValue();
                }
                case 20 -> {
                    line.hasTimestamp = true;
                    line.timestamp = text();
                }
                default -> skipValue();
            }
        } while (next('}'));
    }

    /** Empties a payload's fields (a second {@code payload} field replaces the first). */
    private static void clear(CodexLine.Fields f) {
        f.type = null;
        f.id = null;
        f.cwd = null;
        f.forkedFromId = null;
        f.model = null;
        f.role = null;
        f.name = null;
        f.input = null;
        f.arguments = null;
        f.action = null;
        f.message = null;
        f.lastAgentMessage = null;
        f.modelContextWindow = null;
        f.subAgentSource = false;
        f.clearInfo();
        f.images = 0;
        f.localImages = 0;
        f.contentText = null;
        f.blocks.clear();
    }

    private void codexInfo(CodexLine.Fields f) throws IOException {
        f.clearInfo();
        if (peek() != '{') {
            skipValue();
            return;
        }
        f.hasInfo = true;
        if (!open('}')) {
            return;
        }
        do {
            switch (key(CODEX_INFO)) {
                case 0 -> f.infoModelContextWindow = count();
                case 1 -> {
                    f.lastInputTokens = null;
                    f.lastOutputTokens = null;
                    if (peek() != '{') {
                        skipValue();
                    } else if (open('}')) {
                        do {
                            switch (key(CODEX_USAGE)) {
                                case 0 -> f.lastInputTokens = count();
                                case 1 -> f.lastOutputTokens = count();
                                default -> skipValue();
                            }
                        } while (next('}'));
                    }
                }
                default -> skipValue();
            }
        } while (next('}'));
    }

    /** The number of items of the array (or distinct fields of the object) at {@code pos}, passed over; 0 for another value. */
    private int items() throws IOException {
        byte c = peek();
        int n = 0;
        if (c == '[') {
            if (open(']')) {
                do {
                    skipValue();
                    n++;
                } while (next(']'));
            }
        } else if (c == '{') {
            java.util.Set<String> names = new java.util.HashSet<>();
            if (open('}')) {
                do {
                    names.add(fieldName(true));
                    skipValue();
                } while (next('}'));
            }
            n = names.size();
        } else {
            skipValue();
        }
        return n;
    }

    private void codexContent(CodexLine.Fields f) throws IOException {
        f.contentText = null;
        f.blocks.clear();
        byte c = peek();
        if (c == '"') {
            f.contentText = string();
        } else if (c == '[') {
            if (open(']')) {
                do {
                    if (peek() != '{') {
                        skipValue();
                        continue;
                    }
                    String type = null;
                    String text = null;
                    if (open('}')) {
                        do {
                            switch (key(CODEX_BLOCK)) {
                                case 0 -> type = text();
                                case 1 -> text = text();
                                default -> skipValue();
                            }
                        } while (next('}'));
                    }
                    f.blocks.add(new CodexLine.Block(type, text));
                } while (next(']'));
            }
        } else {
            skipValue();
        }
    }

    private IOException error(String what) {
        return new IOException(what + " at byte " + pos);
    }

    private void ws() {
        while (pos < end) {
            byte c = b[pos];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private byte peek() throws IOException {
        if (pos >= end) {
            throw error("unexpected end of the line");
        }
        return b[pos];
    }

    private void expect(char c) throws IOException {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private JsonNode value(Ctx ctx) throws IOException {
        byte c = peek();
        switch (c) {
            case '{':
                return object(ctx);
            case '[':
                return array(ctx == Ctx.CONTENT ? Ctx.BLOCK : Ctx.OTHER);
            case '"':
                return NODES.textNode(string());
            case 't':
                literal("true");
                return NODES.booleanNode(true);
            case 'f':
                literal("false");
                return NODES.booleanNode(false);
            case 'n':
                literal("null");
                return NODES.nullNode();
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character '" + (char) (c & 0xFF) + "'");
        }
    }

    private void enter() throws IOException {
        if (++depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH);
        }
    }

    /**
     * Passes over the {@code {} or {@code [} at {@code pos} and the white space after it, one level deeper; true
     * when a member follows, false when the container is empty (its {@code close} passed over, the level left).
     */
    private boolean open(char close) throws IOException {
        enter();
        pos++;
        ws();
        if (peek() == close) {
            pos++;
            depth--;
            return false;
        }
        return true;
    }

    /**
     * After a member: passes over the white space and the {@code ,} or {@code close} that follows; true when
     * another member follows (white space after the comma passed over too), false at the close (the level left).
     */
    private boolean next(char close) throws IOException {
        ws();
        byte c = peek();
        if (c == close) {
            pos++;
            depth--;
            return false;
        }
        if (c != ',') {
            throw error("expected ',' or '" + close + "'");
        }
        pos++;
        ws();
        return true;
    }

    /** The field name at {@code pos} and the {@code :} and white space after it, passed over; null when skipped. */
    private String fieldName(boolean decode) throws IOException {
        if (peek() != '"') {
            throw error("expected a field name");
        }
        String name = null;
        if (decode) {
            name = string();
        } else {
            skipString();
        }
        ws();
        expect(':');
        ws();
        return name;
    }

    private ObjectNode object(Ctx ctx) throws IOException {
        ObjectNode o = NODES.objectNode();
        if (open('}')) {
            do {
                String name = fieldName(true);
                if (skip(ctx, name)) {
                    skipValue();
                    o.putNull(name);
                } else {
                    o.set(name, value(child(ctx, name)));
                }
            } while (next('}'));
        }
        return o;
    }

    private ArrayNode array(Ctx items) throws IOException {
        ArrayNode a = NODES.arrayNode();
        if (open(']')) {
            do {
                a.add(value(items));
            } while (next(']'));
        }
        return a;
    }

    /** Passes over one value, checking its structure, building nothing. */
    private void skipValue() throws IOException {
        byte c = peek();
        switch (c) {
            case '{' -> {
                if (open('}')) {
                    do {
                        fieldName(false);
                        skipValue();
                    } while (next('}'));
                }
            }
            case '[' -> {
                if (open(']')) {
                    do {
                        skipValue();
                    } while (next(']'));
                }
            }
            case '"' -> skipString();
            case 't' -> literal("true");
            case 'f' -> literal("false");
            case 'n' -> literal("null");
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    numberEnd();
                } else {
                    throw error("unexpected character '" + (char) (c & 0xFF) + "'");
                }
            }
        }
    }

    private void literal(String word) throws IOException {
        if (pos + word.length() > end) {
            throw error("unexpected end of the line");
        }
        for (int i = 0; i < word.length(); i++) {
            if (b[pos + i] != word.charAt(i)) {
                throw error("expected " + word);
            }
        }
        pos += word.length();
    }

    /**
     * The index of the first {@code "}, {@code \} or control byte at or after {@code from}, or {@code end} when
     * there is none: eight bytes at a time (the lowest flagged byte of each test is exact).
     */
    private int special(int from) {
        int i = from;
        for (int last = end - 8; i <= last; i += 8) {
            long x = (long) LONGS.get(b, i);
            long q = x ^ QUOTES;
            long s = x ^ BACKSLASHES;
            long m = ((q - ONES) & ~q) | ((s - ONES) & ~s) | ((x - SPACES) & ~x);
            m &= HIGHS;
            if (m != 0) {
                return i + (Long.numberOfTrailingZeros(m) >>> 3);
            }
        }
        for (; i < end; i++) {
            byte c = b[i];
            if (c == '"' || c == '\\' || (c >= 0 && c < 0x20)) {
                return i;
            }
        }
        return end;
    }

    /** Passes over the string at {@code pos} (its opening quote), checking its escapes, decoding nothing. */
    private void skipString() throws IOException {
        int i = pos + 1;
        while (true) {
            i = special(i);
            if (i >= end) {
                pos = end;
                throw error("unexpected end of the line in a string");
            }
            byte c = b[i];
            if (c == '"') {
                pos = i + 1;
                return;
            }
            if (c == '\\') {
                i = escapeEnd(i);
            } else {
                pos = i;
                throw error("a control character in a string");
            }
        }
    }

    /** The index just after the escape at {@code i} (its backslash). */
    private int escapeEnd(int i) throws IOException {
        if (i + 1 >= end) {
            pos = end;
            throw error("unexpected end of the line in a string");
        }
        switch (b[i + 1]) {
            case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
                return i + 2;
            case 'u':
                if (i + 6 > end) {
                    pos = end;
                    throw error("unexpected end of the line in a string");
                }
                for (int k = i + 2; k < i + 6; k++) {
                    if (Character.digit(b[k], 16) < 0) {
                        pos = k;
                        throw error("a bad \\u escape");
                    }
                }
                return i + 6;
            default:
                pos = i;
                throw error("a bad escape");
        }
    }

    /** The string at {@code pos} (its opening quote), decoded. */
    private String string() throws IOException {
        int start = pos + 1;
        int i = special(start);
        if (i < end && b[i] == '"') { // no escapes: the common case
            pos = i + 1;
            return new String(b, start, i - start, StandardCharsets.UTF_8);
        }
        // the bytes between escapes and each escape's UTF-8 bytes gathered in one buffer, decoded once
        byte[] out = scratch(i - start + 64);
        int n = 0;
        int seg = start;
        while (true) {
            if (i >= end) {
                pos = end;
                throw error("unexpected end of the line in a string");
            }
            byte c = b[i];
            if (c != '"' && c != '\\') {
                pos = i;
                throw error("a control character in a string");
            }
            int len = i - seg;
            if (n + len + 8 > out.length) {
                out = scratch(Math.max(2 * out.length, n + len + 8 + (end - i)));
            }
            System.arraycopy(b, seg, out, n, len);
            n += len;
            if (c == '"') {
                pos = i + 1;
                return new String(out, 0, n, StandardCharsets.UTF_8);
            }
            int next = escapeEnd(i);
            byte e = b[i + 1];
            if (e == 'u') {
                int cp = hex4(i + 2);
                if (Character.isHighSurrogate((char) cp) && next + 6 <= end && b[next] == '\\' && b[next + 1] == 'u'
                        && Character.isLowSurrogate((char) hex4(next + 2))) {
                    cp = Character.toCodePoint((char) cp, (char) hex4(next + 2));
                    next += 6;
                } else if (Character.isSurrogate((char) cp)) {
                    pos = start - 1;
                    return stringWithLoneSurrogates(); // not UTF-8: decoded char by char
                }
                n = utf8(cp, out, n);
            } else {
                out[n++] = (byte) unescape(e);
            }
            seg = next;
            i = special(next);
        }
    }

    private byte[] scratch;

    /** A reused buffer of at least {@code size} bytes (what it held is kept when it grows). */
    private byte[] scratch(int size) {
        if (scratch == null || scratch.length < size) {
            byte[] grown = new byte[Math.max(size, 256)];
            if (scratch != null) {
                System.arraycopy(scratch, 0, grown, 0, scratch.length);
            }
            scratch = grown;
        }
        return scratch;
    }

    /** The character a one-letter escape ({@code \b}, {@code \n}, {@code \"}, ...) stands for, its letter given. */
    private static char unescape(byte e) {
        return switch (e) {
            case 'b' -> '\b';
            case 'f' -> '\f';
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            default -> (char) e; // " \ /
        };
    }

    private int hex4(int at) {
        return Character.digit(b[at], 16) << 12 | Character.digit(b[at + 1], 16) << 8
                | Character.digit(b[at + 2], 16) << 4 | Character.digit(b[at + 3], 16);
    }

    private static int utf8(int cp, byte[] out, int n) {
        if (cp < 0x80) {
            out[n++] = (byte) cp;
        } else if (cp < 0x800) {
            out[n++] = (byte) (0xC0 | cp >> 6);
            out[n++] = (byte) (0x80 | cp & 0x3F);
        } else if (cp < 0x10000) {
            out[n++] = (byte) (0xE0 | cp >> 12);
            out[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
            out[n++] = (byte) (0x80 | cp & 0x3F);
        } else {
            out[n++] = (byte) (0xF0 | cp >> 18);
            out[n++] = (byte) (0x80 | cp >> 12 & 0x3F);
            out[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
            out[n++] = (byte) (0x80 | cp & 0x3F);
        }
        return n;
    }

    /** The string at {@code pos} when it holds an unpaired surrogate escape: kept as that char, as Jackson does. */
    private String stringWithLoneSurrogates() throws IOException {
        int start = pos + 1;
        int i = special(start);
        StringBuilder sb = new StringBuilder(Math.max(16, i - start + 16));
        int seg = start;
        while (true) {
            if (i >= end) {
                pos = end;
                throw error("unexpected end of the line in a string");
            }
            byte c = b[i];
            if (c == '"') {
                sb.append(new String(b, seg, i - seg, StandardCharsets.UTF_8));
                pos = i + 1;
                return sb.toString();
            }
            if (c != '\\') {
                pos = i;
                throw error("a control character in a string");
            }
            sb.append(new String(b, seg, i - seg, StandardCharsets.UTF_8));
            int next = escapeEnd(i);
            byte e = b[i + 1];
            sb.append(e == 'u' ? (char) hex4(i + 2) : unescape(e));
            seg = next;
            i = special(next);
        }
    }

    /** The index just after the number at {@code pos}, checked against JSON's grammar; sets nothing. */
    private int numberEnd() throws IOException {
        int i = pos;
        if (b[i] == '-') {
            i++;
        }
        int digits = i;
        while (i < end && b[i] >= '0' && b[i] <= '9') {
            i++;
        }
        if (i == digits || (b[digits] == '0' && i - digits > 1)) {
            pos = digits;
            throw error("a bad number");
        }
        if (i < end && b[i] == '.') {
            int f = ++i;
            while (i < end && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
            if (i == f) {
                pos = i;
                throw error("a bad number");
            }
        }
        if (i < end && (b[i] == 'e' || b[i] == 'E')) {
            i++;
            if (i < end && (b[i] == '+' || b[i] == '-')) {
                i++;
            }
            int e = i;
            while (i < end && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
            if (i == e) {
                pos = i;
                throw error("a bad number");
            }
        }
        pos = i;
        return i;
    }

    private JsonNode number() throws IOException {
        int start = pos;
        int stop = numberEnd();
        boolean integer = true;
        for (int i = start; i < stop; i++) {
            if (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
                integer = false;
                break;
            }
        }
        String text = new String(b, start, stop - start, StandardCharsets.US_ASCII);
        if (!integer) {
            return NODES.numberNode(Double.parseDouble(text));
        }
        if (stop - start <= 18) {
            return NODES.numberNode(Long.parseLong(text));
        }
        BigInteger big = new BigInteger(text);
        return big.bitLength() < 64 ? NODES.numberNode(big.longValue()) : NODES.numberNode(big);
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

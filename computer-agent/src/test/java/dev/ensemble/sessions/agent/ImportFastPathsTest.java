package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The import's fast paths give what the slower code they replace gave. {@link LeanJson}, its own line reader,
 * gives the tree the Jackson-based reader gave ({@link JacksonLeanJson}) for every line of the real transcripts
 * and for the tricky corners of JSON, and refuses what is not JSON; {@link StoreImporter#readLines} hands over every line whatever its length and the buffer's, and passes over one longer than its limit;
 * the formatter-free time and text rules give what {@link Instant#parse} and the regexes gave; event ids are
 * {@code UUID.nameUUIDFromBytes}'s.
 */
class ImportFastPathsTest {

    @Test
    void everyLineOfTheRealTranscriptsGivesTheJacksonReadersTree() throws IOException {
        Path data = SharedData.require("data/agent-stores");
        List<Path> files;
        try (Stream<Path> s = Files.walk(data)) {
            files = s.filter(p -> p.toString().endsWith(".jsonl")).sorted().toList();
        }
        assertThat(files).isNotEmpty();
        int lines = 0;
        for (Path f : files) {
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                if (line.isBlank()) {
                    continue;
                }
                byte[] b = line.getBytes(StandardCharsets.UTF_8);
                JsonNode want;
                try {
                    want = JacksonLeanJson.read(b);
                } catch (IOException e) {
                    assertThatThrownBy(() -> LeanJson.read(b)).as(f + ": " + line).isInstanceOf(IOException.class);
                    continue;
                }
                assertThat(LeanJson.read(b)).as(f + ": " + abbreviate(line)).isEqualTo(want);
                lines++;
            }
        }
        assertThat(lines).isGreaterThan(1_000);
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JACKSON = new com.fasterxml.jackson.databind.ObjectMapper();

    /**
     * The fields read straight from the bytes ({@link ClaudeLine#read}, no tree) are those of Jackson's whole tree of
     * the line, for every line of the real transcripts (every agent's, so every kind of object is tried); a line
     * Jackson refuses is refused, a value other than an object is not a line.
     */
    @Test
    void everyLineOfTheRealTranscriptsGivesTheClaudeFieldsOfJacksonsTree() throws IOException {
        Path data = SharedData.require("data/agent-stores");
        List<Path> files;
        try (Stream<Path> s = Files.walk(data)) {
            files = s.filter(p -> p.toString().endsWith(".jsonl")).sorted().toList();
        }
        int lines = 0;
        for (Path f : files) {
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    sameClaudeFields(line, f + ": " + abbreviate(line));
                    sameCodexFields(line, f + ": " + abbreviate(line));
                    lines++;
                }
            }
        }
        assertThat(lines).isGreaterThan(1_000);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{}", "[]", "\"text\"", "42", "{\"type\":\"user\",\"type\":7}", "{\"sessionId\":null}",
            "{\"isMeta\":\"true\",\"isSidechain\":1,\"isCompactSummary\":0,\"isVisibleInTranscriptOnly\":\" true \"}",
            "{\"isMeta\":2.5,\"isSidechain\":[true],\"toolUseResult\":null}",
            "{\"message\":\"hi\"}", "{\"message\":{\"content\":null}}", "{\"message\":{\"content\":{\"type\":\"text\"}}}",
            "{\"message\":{\"role\":\"user\",\"content\":\"a\"},\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"b\"}]}}",
            "{\"message\":{\"content\":[\"x\",1,{\"type\":\"tool_use\",\"name\":\"Edit\",\"input\":{\"file_path\":\"/a\",\"old\":\"q\"}},"
                    + "{\"type\":\"tool_use\",\"input\":[1],\"name\":9},{\"type\":\"text\",\"text\":{\"x\":1}}]}}",
            "{\"message\":{\"usage\":{\"input_tokens\":1.9,\"output_tokens\":\"5\",\"cache_read_input_tokens\":99999999999999999999,"
                    + "\"cache_creation_input_tokens\":-3},\"usage\":{\"input_tokens\":7}}}",
            "{\"message\":{\"usage\":[]}}", "{\"u\\u0075id\":\"escaped name\",\"\\u0074ype\":\"user\"}",
            "\uFEFF{\"type\":\"summary\",\"leafUuid\":\"l1\"}"
    })
    void theClaudeFieldsOfJacksonsTree(String json) throws IOException {
        sameClaudeFields(json, json);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{}", "[]", "{\"id\":null,\"timestamp\":7}", "{\"type\":\"event_msg\",\"payload\":\"x\"}",
            "{\"payload\":{\"type\":\"a\",\"timestamp\":\"inner\",\"payload\":{\"type\":\"b\"}},\"payload\":{\"role\":\"user\"}}",
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"model_context_window\":258400,"
                    + "\"last_token_usage\":{\"input_tokens\":1.5,\"output_tokens\":\"2\"}}}}",
            "{\"payload\":{\"info\":{\"last_token_usage\":[1]},\"images\":[1,[2],{}],\"local_images\":{\"a\":1,\"a\":2,\"b\":3}}}",
            "{\"payload\":{\"source\":{\"subagent\":null},\"action\":{\"command\":[\"apply_patch\",\"*** Begin Patch\"],\"t\":1}}}",
            "{\"payload\":{\"source\":\"cli\",\"content\":[{\"type\":\"input_text\",\"text\":\"hi\"},\"s\",{\"text\":3}]}}",
            "{\"type\":\"message\",\"role\":\"user\",\"content\":\"bare\",\"record_type\":null,\"output\":\"big\"}"
    })
    void theCodexFieldsOfJacksonsTree(String json) throws IOException {
        sameCodexFields(json, json);
    }

    private static void sameCodexFields(String line, String what) throws IOException {
        byte[] b = line.getBytes(StandardCharsets.UTF_8);
        JsonNode tree;
        try {
            tree = JACKSON.readTree(line.startsWith("\uFEFF") ? line.substring(1) : line);
        } catch (IOException e) {
            assertThatThrownBy(() -> CodexLine.read(b, 0, b.length)).as(what).isInstanceOf(IOException.class);
            return;
        }
        CodexLine got = CodexLine.read(b, 0, b.length);
        if (!tree.isObject()) {
            assertThat(got).as(what).isNull();
        } else {
            assertThat(got).as(what).isEqualTo(CodexLine.of(tree));
        }
    }

    private static void sameClaudeFields(String line, String what) throws IOException {
        byte[] b = line.getBytes(StandardCharsets.UTF_8);
        JsonNode tree;
        try {
            tree = JACKSON.readTree(line.startsWith("\uFEFF") ? line.substring(1) : line);
        } catch (IOException e) {
            assertThatThrownBy(() -> ClaudeLine.read(b, 0, b.length)).as(what).isInstanceOf(IOException.class);
            return;
        }
        ClaudeLine got = ClaudeLine.read(b, 0, b.length);
        if (!tree.isObject()) {
            assertThat(got).as(what).isNull();
        } else {
            assertThat(got).as(what).isEqualTo(ClaudeLine.of(tree));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{}", "[]", "{\"a\":[]}", " { \"a\" : 1 , \"b\" : [ true , false , null ] } ",
            "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":\"x\\\"y\\\\z\"}]}}",
            "{\"s\":\"caf\\u00e9 \\ud83d\\ude00 \\/ \\b\\f\\n\\r\\t\"}",
            "{\"s\":\"8bytes!\\\"\",\"t\":\"1234567\\\\\",\"u\":\"12345678\\\"90\"}",
            "{\"s\":\"日本語のテキスト😀, encoded in UTF-8\"}",
            "{\"n\":[0,-0,1,-17,9223372036854775807,-9223372036854775808,9223372036854775808,12345678901234567890123]}",
            "{\"d\":[1.5,-0.25,1e3,1E-3,2.5e+10,0.0]}",
            "{\"toolUseResult\":{\"a\":[1,{\"b\":\"}]\\\"\"}],\"c\":null},\"snapshot\":[\"{\",\"[\"],\"x\":1}",
            "{\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Write\",\"input\":{\"file_path\":\"/a\",\"content\":\"big\"}}]}}",
            "{\"payload\":{\"type\":\"function_call_output\",\"output\":\"lots\\nof\\ntext\"}}",
            "{\"a\":1,\"a\":2}",
            "{\"lone\":[\"\\ud83d x\",\"\\ude00\",\"x\\ud83d\",\"\\ud83d\\u0041\",\"\\ud83d\\ud83d\\ude00\"]}",
            "{\"e\":\"\\u00e9\\u0800\\uffff\\u0000 \\\\n\\n\\n\\\"\\\\\"}",
            "\uFEFF{\"bom\":true}",
            "\"just a string\"", "42", "[1,[2,[3]]]"
    })
    void theSameTreeAsJackson(String json) throws IOException {
        sameTree(json);
    }

    @Test
    void aLongTextFullOfEscapesIsDecodedAsJacksonDecodesIt() throws IOException {
        Random r = new Random(5);
        String[] pieces = {"a", "é", "日本", "😀", "\\n", "\\\"", "\\u00e9", "\\ud83d\\ude00", "\\t", " "};
        for (int len : new int[] {1, 10, 100, 10_000}) {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < len; i++) {
                s.append(pieces[r.nextInt(pieces.length)]);
            }
            sameTree("{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"" + s + "\"}]},\"k\":\"" + s + "\"}");
        }
    }

    private static void sameTree(String json) throws IOException {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        assertThat(LeanJson.read(b)).isEqualTo(JacksonLeanJson.read(b));
        // the same bytes in the middle of a larger buffer
        byte[] padded = new byte[b.length + 20];
        java.util.Arrays.fill(padded, (byte) '"');
        System.arraycopy(b, 0, padded, 7, b.length);
        assertThat(LeanJson.read(padded, 7, b.length)).isEqualTo(JacksonLeanJson.read(b));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "", "   ", "not json", "{", "{\"a\":1", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1,]", "[1 2]",
            "{\"a\":1} x", "{\"a\":1}{}", "{\"a\":\"unterminated}", "{\"a\":\"bad \\x escape\"}",
            "{\"a\":\"bad \\u12g4\"}", "{\"a\":\"cut \\u12\"}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":01}", "{\"a\":1.}",
            "{\"a\":-}", "{\"a\":1e}", "{\"a\":.5}", "{\"a\":\"tab\there\"}",
            "{\"toolUseResult\":{\"a\":[1,2}}", "{\"toolUseResult\":\"unterminated}",
            "{\"toolUseResult\":{\"a\":\"x\" \"b\"}}", "{\"toolUseResult\":[1,,2]}"
    })
    void whatIsNotJsonIsRefused(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> LeanJson.read(b)).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> ClaudeLine.read(b, 0, b.length)).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> CodexLine.read(b, 0, b.length)).isInstanceOf(IOException.class);
    }

    @Test
    void aStringOfEveryLengthAroundTheEightByteStepEndsAtItsQuote() throws IOException {
        Random r = new Random(7);
        for (int len = 0; len < 40; len++) {
            for (int esc = -1; esc < len; esc++) {
                StringBuilder s = new StringBuilder();
                for (int i = 0; i < len; i++) {
                    s.append(i == esc ? "\\\"" : String.valueOf((char) ('a' + r.nextInt(26))));
                }
                for (String key : List.of("kept", "toolUseResult")) {
                    byte[] b = ("{\"" + key + "\":\"" + s + "\",\"z\":1}").getBytes(StandardCharsets.UTF_8);
                    assertThat(LeanJson.read(b)).isEqualTo(JacksonLeanJson.read(b));
                }
            }
        }
    }

    @Test
    void readLinesHandsOverEveryLineWhateverTheBufferSize() throws IOException {
        Path f = Files.createTempFile("lines", ".jsonl");
        try {
            Random r = new Random(3);
            List<String> want = new ArrayList<>();
            StringBuilder all = new StringBuilder();
            for (int i = 0; i < 300; i++) {
                String line = "x".repeat(r.nextInt(i % 50 == 0 ? 5_000 : 40)) + i;
                want.add(line);
                all.append(line).append(i % 7 == 0 ? "\r\n" : "\n");
            }
            all.append("incomplete");
            byte[] bytes = all.toString().getBytes(StandardCharsets.UTF_8);
            Files.write(f, bytes);
            for (int chunk : new int[] {64, 100, 4096, 1 << 20}) {
                List<String> got = new ArrayList<>();
                long[] end = StoreImporter.readLines(f, 0, bytes.length, 0, chunk,
                        (buf, off, len, lineNo) -> got.add(new String(buf, off, len, StandardCharsets.UTF_8)));
                assertThat(got).as("chunk " + chunk).isEqualTo(want);
                assertThat(end).containsExactly(bytes.length - "incomplete".length(), 300);
            }
        } finally {
            Files.delete(f);
        }
    }

    /**
     * With a line length limit, a longer line goes to the long-line consumer (number, length) instead of its bytes,
     * the others are handed over as without it, however the file is read in pieces (each read going on from where
     * the last stopped, in an over-long line or not), and each read says the last bytes it read.
     */
    @Test
    void readLinesPassesOverLinesLongerThanTheLimitWhateverThePieces() throws IOException {
        Path f = Files.createTempFile("lines", ".jsonl");
        try {
            Random r = new Random(5);
            int limit = 300;
            List<String> want = new ArrayList<>();
            StringBuilder all = new StringBuilder();
            for (int i = 1; i <= 200; i++) {
                int length = i % 9 == 0 ? limit + 1 + r.nextInt(2_000) : i % 10 == 0 ? limit : r.nextInt(60);
                String line = "y".repeat(length);
                want.add(length > limit ? "long " + i + " " + length : line);
                all.append(line).append('\n');
            }
            all.append("z".repeat(limit + 50)); // over the limit, no line end yet
            byte[] bytes = all.toString().getBytes(StandardCharsets.UTF_8);
            Files.write(f, bytes);
            for (int chunk : new int[] {64, 100, 4096, 1 << 20}) {
                for (int pieces : new int[] {1, 7, 40}) {
                    List<String> got = new ArrayList<>();
                    long offset = 0;
                    long lines = 0;
                    long longLineFrom = -1;
                    for (int k = 1; k <= pieces; k++) {
                        long to = k == pieces ? bytes.length : Math.max(offset, (long) bytes.length * k / pieces - r.nextInt(50));
                        StoreImporter.LinesRead read = StoreImporter.readLines(f, offset, to, lines, chunk, limit, longLineFrom,
                                (buf, off, len, lineNo) -> got.add(new String(buf, off, len, StandardCharsets.UTF_8)),
                                (lineNo, length) -> got.add("long " + lineNo + " " + length));
                        offset = read.offset();
                        lines = read.lines();
                        longLineFrom = read.longLineFrom();
                        int before = (int) Math.min(StoreImporter.TAIL, offset);
                        assertThat(read.tail()).isEqualTo(Arrays.copyOfRange(bytes, (int) offset - before, (int) offset));
                    }
                    String as = "chunk " + chunk + ", " + pieces + " pieces";
                    assertThat(got).as(as).isEqualTo(want);
                    assertThat(lines).as(as).isEqualTo(200);
                    assertThat(offset).as(as).isEqualTo(bytes.length);
                    assertThat(longLineFrom).as(as).isEqualTo(bytes.length - limit - 50);
                }
            }
        } finally {
            Files.delete(f);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "2025-10-01T12:34:56.789Z", "2025-10-01T12:34:56Z", "2025-10-01T12:34:56.7Z", "2025-10-01T12:34:56.123456789Z",
            "2024-02-29T23:59:59.999Z", "1969-12-31T23:59:59.5Z", "0001-01-01T00:00:00Z", "2025-10-01T12:34:56.789+02:00",
            "2025-02-30T12:00:00Z", "2025-02-29T12:00:00Z", "2025-13-01T12:00:00Z", "2025-10-01T24:00:00Z",
            "2025-10-01T12:60:00Z", "2025-10-01T23:59:60Z", "2025-10-01T12:00:00.Z", "2025-1a-01T12:00:00Z", "yesterday",
            "2025-10-01T12:00:00.1234567890Z", "+12025-10-01T12:00:00Z"
    })
    void aTimeIsReadOrRefusedAsInstantParseDoes(String t) {
        Long want;
        try {
            want = Instant.parse(t).toEpochMilli();
        } catch (DateTimeParseException e) {
            want = null;
        }
        if (want == null) {
            assertThatThrownBy(() -> SessionParser.epochMillis(t)).isInstanceOf(DateTimeParseException.class);
        } else {
            assertThat(SessionParser.epochMillis(t)).isEqualTo(want);
        }
    }

    @Test
    void textRulesGiveWhatTheRegexesGave() {
        Random r = new Random(11);
        String alphabet = "ab \t\n\r\u000B\f\u0085\u2028\u2029\u00A0\u2003x";
        for (int i = 0; i < 5_000; i++) {
            StringBuilder s = new StringBuilder();
            for (int k = r.nextInt(12); k > 0; k--) {
                s.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            String t = s.toString();
            String oneLine = t.replaceAll("\\s+", " ").strip();
            assertThat(Text.oneLine(t)).as("oneLine of %s", escape(t)).isEqualTo(oneLine.isEmpty() ? null : oneLine);
            String first = "";
            for (String line : t.split("\\R")) {
                if (!line.isBlank()) {
                    first = line.strip();
                    break;
                }
            }
            assertThat(Text.firstLine(t)).as("firstLine of %s", escape(t)).isEqualTo(first);
        }
        for (int i = 0; i < 5_000; i++) {
            StringBuilder s = new StringBuilder();
            for (int k = r.nextInt(80); k > 0; k--) {
                s.append(r.nextInt(3) == 0 ? "\uD83D\uDE00" : String.valueOf(alphabet.charAt(r.nextInt(alphabet.length()))));
            }
            String t = s.toString();
            assertThat(Text.oneLineShortened(t, 5)).as("summary of %s", escape(t))
                    .isEqualTo(Text.shorten(Text.oneLine(t), 5));
        }
    }

    @Test
    void eventIdsAreTheNameBasedUuidsTheyWere() {
        for (String name : List.of("", "claude-code/abc/def/claimed", "ü/日本/😀", "x".repeat(1_000))) {
            assertThat(EventFactory.eventId(name))
                    .isEqualTo(java.util.UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString());
        }
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder();
        s.chars().forEach(c -> b.append(c < 0x7F && c >= 0x20 ? String.valueOf((char) c) : String.format("\\u%04x", c)));
        return b.toString();
    }

    private static String abbreviate(String line) {
        return line.length() <= 300 ? line : line.substring(0, 300) + "...";
    }
}

package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.Stores.Imported;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * The real transcripts in {@code ../shared/data/agent-stores} (see its PROVENANCE.txt), copied at test time into a
 * temporary home laid out as {@code .claude/projects/...} and {@code .codex/sessions/...}. Skipped when the shared
 * data is absent.
 */
class RealStoresTest {
    static final String S624 = "624a4a58-b34c-462d-a70d-13421c8125a8";
    static final String S196 = "196820da-1026-4b6f-a513-a6aae42da1a6";
    static final String S9ED = "9eda1058-9706-484a-b992-d03f9cfa2546";
    static final String S3FE = "3fe1b6bc-dbd0-4320-b980-4f147befa187";
    static final String S4C2 = "4c2ddfdc-b619-4525-8d03-1950fb1b0257";
    static final String CODEX = "019e1625-789d-76c0-80ab-3724b5ddb799";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    Path tmp;
    Path data;
    Stores stores;

    @BeforeEach
    void setUp() {
        data = SharedData.require("data/agent-stores");
        stores = Stores.empty(tmp);
        Stores.copyTree(data.resolve("claude/projects"), stores.claude);
        Stores.copyTree(data.resolve("codex/sessions"), stores.codex);
        stores.touchAll(Stores.NOW.minus(Duration.ofMinutes(1)));
    }

    @Test
    void sixAgentSessionsEachWithItsFolderFromCwdAndItsFirstPrompt() {
        Imported got = stores.importAll(stores.importer());

        assertThat(got.summary().sessions()).isEqualTo(6);
        Map<String, RunClaimed> first = new java.util.HashMap<>();
        got.claims().stream().filter(c -> c.getContinueFromJobId() == null).forEach(c -> first.put(c.getAgentSessionId(), c));
        // five Claude Code sessions and one Codex session; agent-36541525.jsonl shares 4c2ddfdc's id and is no session
        assertThat(first).containsOnlyKeys(S624, S196, S9ED, S3FE, S4C2, CODEX);
        assertThat(got.summary().skippedFiles()).singleElement().satisfies(s -> {
            assertThat(s.file().getFileName().toString()).isEqualTo("agent-36541525.jsonl");
            assertThat(s.reason()).isEqualTo("sub-agent transcript");
        });

        assertThat(first.get(S624).getFolder()).isEqualTo("/Users/user/repo");
        assertThat(first.get(S624).getTask().getTitle()).startsWith(
                "@src/providers/plugins/sso/ARCHITECTURE-REFACTORING.md review old and current implementation");
        assertThat(first.get(S196).getFolder()).isEqualTo("/Users/user/repo");
        // the transcript starts with a /clear command and its output: the first prompt comes after
        assertThat(first.get(S196).getTask().getTitle()).startsWith("ultrathink there is logic that tracks files");
        assertThat(first.get(S9ED).getTask().getTitle()).isEqualTo("show tools and store response in file");
        // a custom slash command the agent answers is the first prompt (its expanded meta text is not another one)
        assertThat(first.get(S3FE).getTask().getTitle()).isEqualTo("/bmad:bmm:workflows:create-tech-spec");
        assertThat(got.claims(S3FE).get(1).getTask().getTitle()).startsWith("analyze existing codex folder for sessions structure");
        assertThat(first.get(S4C2).getFolder()).isEqualTo("/tmp/private");
        assertThat(first.get(S4C2).getTask().getTitle()).isEqualTo("create hello.py, md and js");
        assertThat(first.get(CODEX).getFolder()).isEqualTo("/Users/Sample_User/repos/codemie-ai/codemie-code");
        assertThat(first.get(CODEX).getTask().getTitle()).isEqualTo("show tools");
        assertThat(first.get(CODEX).getModel()).isEqualTo("gpt-5.5");
        assertThat(first.values()).allSatisfy(c -> assertThat(c.getRunId()).isEqualTo(c.getAgent() + ":" + c.getAgentSessionId()));
    }

    @Test
    void runsAreTheRealPromptsAndEngineEventsTheDistinctReplies() throws IOException {
        Imported got = stores.importAll(stores.importer());

        // real prompts counted by reading the transcripts (interruption markers, /clear and its output, meta and
        // compaction lines left out; 3fe1b6bc's answered /bmad:... command counted)
        assertThat(Map.of(S624, got.claims(S624).size(), S196, got.claims(S196).size(), S9ED, got.claims(S9ED).size(),
                S3FE, got.claims(S3FE).size(), S4C2, got.claims(S4C2).size(), CODEX, got.claims(CODEX).size()))
                .containsOnly(entry(S624, 14), entry(S196, 13), entry(S9ED, 3), entry(S3FE, 8), entry(S4C2, 3), entry(CODEX, 2));
        for (String sid : List.of(S624, S196, S9ED, S3FE, S4C2)) {
            Path file = stores.claude.resolve(sid.equals(S4C2) ? "-tmp-private" : "-Users-user-repo").resolve(sid + ".jsonl");
            assertThat(got.engine(sid)).as(sid).hasSize(distinctClaudeReplies(file));
        }
        assertThat(got.engine(CODEX)).hasSize(codexTokenCounts(codexFile()).size());
    }

    @Test
    void codexFillIsTheLastTokenCountsLastInputOverTheModelContextWindow() throws IOException {
        Imported got = stores.importAll(stores.importer());
        JsonNode lastInfo = codexTokenCounts(codexFile()).get(codexTokenCounts(codexFile()).size() - 1);

        EngineEvent last = got.engine(CODEX).get(got.engine(CODEX).size() - 1);
        assertThat(last.getContextUsed()).isEqualTo(lastInfo.path("last_token_usage").path("input_tokens").asLong());
        assertThat(last.getContextSize()).isEqualTo(lastInfo.path("model_context_window").asLong());
        assertThat((double) last.getContextUsed() / last.getContextSize()).isBetween(0.0, 1.0);
        assertThat(got.claims(CODEX)).allSatisfy(c -> assertThat(c.getContextWindow()).isEqualTo(258_400L));
    }

    @Test
    void claudeFillOfTheLastReplyIsInputPlusCacheOverTwoHundredThousand() throws IOException {
        Imported got = stores.importAll(stores.importer());
        Path file = stores.claude.resolve("-tmp-private").resolve(S4C2 + ".jsonl");
        JsonNode lastUsage = null;
        for (JsonNode line : lines(file)) {
            if ("assistant".equals(line.path("type").asText()) && !line.path("isSidechain").asBoolean()
                    && line.path("message").has("usage")) {
                lastUsage = line.path("message").path("usage");
            }
        }

        EngineEvent last = got.engine(S4C2).get(got.engine(S4C2).size() - 1);
        assertThat(last.getContextUsed()).isEqualTo(lastUsage.path("input_tokens").asLong()
                + lastUsage.path("cache_read_input_tokens").asLong() + lastUsage.path("cache_creation_input_tokens").asLong());
        assertThat(last.getContextSize()).isEqualTo(200_000L);
    }

    @Test
    void summaryLinesOf9eda1058RecordTheSessionTheyContinueOnlyWhenTheLeafIsFound() throws IOException {
        Path folder = stores.claude.resolve("-Users-user-repo");
        Set<String> leaves = new LinkedHashSet<>();
        for (JsonNode line : lines(folder.resolve(S9ED + ".jsonl"))) {
            if ("summary".equals(line.path("type").asText())) {
                leaves.add(line.path("leafUuid").asText());
            }
        }
        String expected = null;
        try (Stream<Path> files = Files.list(folder)) {
            for (Path f : files.filter(p -> !p.getFileName().toString().equals(S9ED + ".jsonl")).sorted().toList()) {
                for (JsonNode line : lines(f)) {
                    if (expected == null && leaves.contains(line.path("uuid").asText())) {
                        expected = line.path("sessionId").asText();
                    }
                }
            }
        }

        Imported got = stores.importAll(stores.importer());

        assertThat(leaves).hasSize(16);
        // what the data says: none of the 16 leaves is a message of the sibling sessions, so nothing is continued
        assertThat(expected).isNull();
        assertThat(got.claims(S9ED).get(0).getContinuesSessionOf()).isEqualTo(expected);
    }

    @Test
    void importingTwiceEmitsNothingTheSecondTime() {
        StoreImporter importer = stores.importer();
        Imported first = stores.importAll(importer);
        Imported second = stores.importAll(importer);

        assertThat(first.events()).hasSizeGreaterThan(300);
        assertThat(first.ids()).doesNotHaveDuplicates();
        assertThat(second.events()).isEmpty();
        assertThat(second.summary().skippedFilesByKind()).containsOnly(entry("unchanged", 6L), entry("sub-agent transcript", 1L));
    }

    @Test
    void linesAppendedToACopyAreReadAloneAndGiveTheSameEventsAsOneImport() throws IOException {
        Path source = data.resolve("claude/projects/-tmp-private/" + S4C2 + ".jsonl");
        List<String> all = Files.readAllLines(source);
        Stores grow = Stores.empty(tmp.resolve("grow"));
        Path copy = grow.claude.resolve("-tmp-private").resolve(S4C2 + ".jsonl");
        Files.createDirectories(copy.getParent());
        Files.write(copy, all.subList(0, 14)); // the first turn; the second prompt is line 15
        Stores.touch(copy, Stores.NOW.minusSeconds(120));
        List<Long> read = new ArrayList<>();
        StoreImporter importer = new StoreImporter(grow.config(), new ImportProgress() {
            @Override
            public void onFile(Path file, long bytes) {
                read.add(bytes);
            }
        });

        Imported before = grow.importAll(importer);
        long sizeBefore = Files.size(copy);
        Files.write(copy, all.subList(14, all.size()), StandardOpenOption.APPEND);
        Stores.touch(copy, Stores.NOW.minusSeconds(60));
        Imported after = grow.importAll(importer);

        assertThat(before.claims()).extracting(c -> c.getTask().getTitle()).containsExactly("create hello.py, md and js");
        assertThat(after.claims()).extracting(c -> c.getTask().getTitle())
                .containsExactly("update py with one liner comment", "delete js");
        assertThat(read).containsExactly(sizeBefore, Files.size(copy) - sizeBefore);

        Stores once = Stores.empty(tmp.resolve("once"));
        Path whole = once.claude.resolve("-tmp-private").resolve(S4C2 + ".jsonl");
        Files.createDirectories(whole.getParent());
        Files.copy(source, whole);
        Stores.touch(whole, Stores.NOW.minusSeconds(60));
        List<String> split = new ArrayList<>(before.ids());
        split.addAll(after.ids());
        assertThat(split).containsExactlyInAnyOrderElementsOf(once.importAll(once.importer()).ids());
    }

    @Test
    void cuttingEachRealTranscriptAtLineBoundariesGivesTheSameEventIdsAsOneImport() throws IOException {
        List<Path> transcripts = new ArrayList<>();
        try (Stream<Path> files = Stream.concat(Files.walk(data.resolve("claude/projects")), Files.walk(data.resolve("codex/sessions")))) {
            files.filter(p -> p.toString().endsWith(".jsonl") && !p.getFileName().toString().startsWith("agent-"))
                    .sorted().forEach(transcripts::add);
        }
        assertThat(transcripts).hasSize(6);
        int n = 0;
        for (Path source : transcripts) {
            byte[] bytes = Files.readAllBytes(source);
            List<Integer> ends = new ArrayList<>();
            for (int i = 0; i < bytes.length - 1; i++) {
                if (bytes[i] == '\n') {
                    ends.add(i + 1);
                }
            }
            List<String> whole = importInPieces(tmp.resolve("w" + n), source, bytes, bytes.length);
            for (int j = 1; j <= 7; j++) { // seven cuts spread over the file
                int cut = ends.get(ends.size() * j / 8);
                assertThat(importInPieces(tmp.resolve("s" + n + "-" + j), source, bytes, cut))
                        .as("%s cut at byte %d", source.getFileName(), cut).containsExactlyInAnyOrderElementsOf(whole);
            }
            n++;
        }
    }

    /** Imports {@code bytes[0, cut)} of a copy of {@code source}, then (with a restarted importer) the rest. */
    private List<String> importInPieces(Path home, Path source, byte[] bytes, int cut) throws IOException {
        Stores s = Stores.empty(home);
        boolean codex = source.startsWith(data.resolve("codex"));
        Path copy = codex ? s.codex.resolve(data.resolve("codex/sessions").relativize(source).toString())
                : s.claude.resolve(data.resolve("claude/projects").relativize(source).toString());
        Files.createDirectories(copy.getParent());
        Files.write(copy, java.util.Arrays.copyOf(bytes, cut));
        Stores.touch(copy, Stores.NOW.minusSeconds(120));
        List<String> ids = new ArrayList<>(s.importAll(s.importer()).ids());
        if (cut < bytes.length) {
            Files.write(copy, java.util.Arrays.copyOfRange(bytes, cut, bytes.length), StandardOpenOption.APPEND);
            Stores.touch(copy, Stores.NOW.minusSeconds(60));
            ids.addAll(s.importAll(s.importer()).ids());
        }
        return ids;
    }

    private Path codexFile() throws IOException {
        try (Stream<Path> files = Files.walk(stores.codex)) {
            return files.filter(p -> p.getFileName().toString().startsWith("rollout-")).findFirst().orElseThrow();
        }
    }

    /** The {@code info} of every token_count event that has one, in file order. */
    private static List<JsonNode> codexTokenCounts(Path file) throws IOException {
        List<JsonNode> infos = new ArrayList<>();
        for (JsonNode line : lines(file)) {
            JsonNode p = line.path("payload");
            if ("event_msg".equals(line.path("type").asText()) && "token_count".equals(p.path("type").asText())
                    && p.path("info").isObject()) {
                infos.add(p.path("info"));
            }
        }
        return infos;
    }

    /** Distinct message ids of main-conversation assistant lines with usage. */
    private static int distinctClaudeReplies(Path file) throws IOException {
        Set<String> ids = new HashSet<>();
        for (JsonNode line : lines(file)) {
            JsonNode m = line.path("message");
            if ("assistant".equals(line.path("type").asText()) && !line.path("isSidechain").asBoolean()
                    && m.has("usage") && !"<synthetic>".equals(m.path("model").asText())) {
                ids.add(m.path("id").asText());
            }
        }
        return ids.size();
    }

    private static List<JsonNode> lines(Path file) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            if (!line.isBlank()) {
                out.add(MAPPER.readTree(line));
            }
        }
        return out;
    }
}

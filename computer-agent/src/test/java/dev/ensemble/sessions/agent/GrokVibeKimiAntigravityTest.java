package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.Stores.Imported;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatusChanged;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Grok Build, Mistral Vibe, Kimi Code CLI and Antigravity, on the synthetic stores of
 * {@code src/test/resources/synthetic-stores} (see PROVENANCE.md there: field names from each agent's own source)
 * laid out in a temporary home as on a computer.
 */
class GrokVibeKimiAntigravityTest {
    static final String GROK = "019f7000-0000-7000-8000-000000000001";
    static final String GROK_SUB = "019f7000-0000-7000-8000-000000000002";
    static final String GROK_DIR = ".grok/sessions/%2Fhome%2Fana%2Fgrok%20app/";
    static final String VIBE = "6c1f2a3b-9d4e-4f10-8a2b-3c4d5e6f7a80";
    static final String VIBE_DIR = ".vibe/logs/session/session_20260715_100000_6c1f2a3b";
    static final String KIMI = "5e4f6a7b-8c9d-4e0f-a1b2-c3d4e5f60718";
    static final String KIMI_DIR = ".kimi/sessions/db498d6c47b817a3c8f84bee6c0d8480/";
    static final String KIMI_CODE = "session_3b9c1d2e-4f5a-4b6c-8d7e-9f0a1b2c3d4e";
    static final String KIMI_CODE_DIR = ".kimi-code/sessions/wd_kimi-web_51f2e67c8553/";

    @TempDir
    Path tmp;

    /** {@code src/test/resources/synthetic-stores}. */
    static Path synthetic() {
        try {
            return Path.of(java.util.Objects.requireNonNull(GrokVibeKimiAntigravityTest.class.getResource("/synthetic-stores")).toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
    Stores stores;

    @BeforeEach
    void setUp() {
        stores = Stores.empty(tmp);
        Path fixtures = synthetic();
        Stores.copyTree(fixtures.resolve("grok"), stores.home.resolve(".grok"));
        Stores.copyTree(fixtures.resolve("vibe"), stores.home.resolve(".vibe"));
        Stores.copyTree(fixtures.resolve("kimi"), stores.home.resolve(".kimi"));
        Stores.copyTree(fixtures.resolve("kimi-code"), stores.home.resolve(".kimi-code"));
        Stores.copyTree(fixtures.resolve("antigravity"), stores.home.resolve(".gemini/antigravity"));
        stores.touchAll(Stores.NOW.minus(Duration.ofMinutes(1)));
    }

    @Test
    void grokBuildPromptsAreRunsWithTheirFolderModelAndTheFillGrokCounts() {
        Imported got = stores.importStores(stores.importer());

        List<RunClaimed> claims = got.claims(GROK);
        // the auto-wake turn (hostTurn), the prompt's image chunk and the interjection are not prompts
        assertThat(claims).extracting(c -> c.getTask().getTitle())
                .containsExactly("Add a retry with backoff to src/fetch.rs", "Now add a test for it");
        assertThat(claims).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("grok-build");
            assertThat(c.getFolder()).isEqualTo("/home/ana/grok app");
            assertThat(c.getModel()).isEqualTo("grok-build-fast");
            assertThat(c.getContextWindow()).isEqualTo(256_000L);
        });
        assertThat(claims.get(0).getRunId()).isEqualTo("grok-build:" + GROK);
        assertThat(claims.get(0).getTask().getDescription()).isEqualTo("Add a retry with backoff to src/fetch.rs\nKeep it under 3 attempts");
        assertThat(claims.get(1).getContinueFromJobId()).isEqualTo("grok-build:" + GROK);
        assertThat(got.eventOf(claims.get(0)).getOccurredAt()).isEqualTo(Instant.ofEpochMilli(1784538000100L));

        List<EngineEvent> engine = got.engine(GROK);
        assertThat(engine).extracting(EngineEvent::getContextUsed).containsExactly(14_100L, 23_800L);
        assertThat(engine).extracting(EngineEvent::getContextSize).containsExactly(256_000L, 256_000L);

        RunStatusChanged first = got.done("grok-build:" + GROK);
        assertThat(first.getFilesChanged()).containsExactly("/home/ana/grok app/src/fetch.rs");
        assertThat(first.getTokens()).isEqualTo(26_100L + 640L);
        assertThat(first.getReportSummary()).isEqualTo("Added a retry with exponential backoff.");
        RunStatusChanged second = got.done(claims.get(1).getRunId());
        assertThat(second.getReportSummary()).isEqualTo("Test added; it uses the mock clock.");
        assertThat(second.getFilesChanged()).containsExactly("/home/ana/grok app/tests/fetch_retry.rs");

        // a sub-agent's session (session_kind "subagent") is not a session of its own
        assertThat(got.claims(GROK_SUB)).isEmpty();
        assertThat(got.summary().skipped()).anySatisfy(k -> {
            assertThat(k.file().toString()).contains(GROK_SUB);
            assertThat(k.reason()).isEqualTo("sub-agent transcript");
        });
    }

    @Test
    void mistralVibePromptsAreRunsAndTheLastRequestGivesTheUsedContextOfUnknownWindow() {
        Imported got = stores.importStores(stores.importer());

        List<RunClaimed> claims = got.claims(VIBE);
        // the injected reminder is not a prompt
        assertThat(claims).extracting(c -> c.getTask().getTitle()).containsExactly("Sort the list in utils.py by date", "Also add a docstring");
        assertThat(claims).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("mistral-vibe");
            assertThat(c.getFolder()).isEqualTo("/home/ana/vibe-app");
            assertThat(c.getModel()).isEqualTo("mistral-vibe-cli-latest");
            assertThat(c.getContextWindow()).isNull();
        });
        assertThat(got.eventOf(claims.get(0)).getOccurredAt()).isEqualTo(Instant.parse("2026-07-15T10:00:00.123Z"));
        assertThat(got.eventOf(claims.get(1)).getOccurredAt()).isEqualTo(Instant.parse("2026-07-15T10:09:30Z"));
        assertThat(got.done("mistral-vibe:" + VIBE).getFilesChanged()).containsExactly("/home/ana/vibe-app/utils.py");
        assertThat(got.done("mistral-vibe:" + VIBE).getReportSummary()).isEqualTo("Sorted by date now.");

        // the first turn has no usage of its own (unknown, never 0); the open one the last request's prompt
        List<EngineEvent> engine = got.engine(VIBE);
        assertThat(engine).hasSize(2);
        assertThat(engine.get(0).getContextUsed()).isNull();
        assertThat(engine.get(1).getContextUsed()).isEqualTo(14_200L);
        assertThat(engine.get(1).getContextSize()).isNull();
        assertThat(engine.get(1).getRunId()).isEqualTo(claims.get(1).getRunId());

        // the sub-agent's log under the session's agents/ is not a session
        assertThat(got.claims("0a0b0c0d-2222-4000-8000-000000000000")).isEmpty();
    }

    @Test
    void aGrokForkAndAVibeForkContinueTheirParentsWhosePromptsTheyBeginWithAreNotTheirRuns() throws IOException {
        String fork = "019f7000-0000-7000-8000-000000000003";
        Path dir = stores.home.resolve(GROK_DIR + fork);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("summary.json"), "{\"info\": {\"id\": \"" + fork + "\", \"cwd\": \"/home/ana/grok app\"},"
                + " \"current_model_id\": \"grok-build-fast\", \"parent_session_id\": \"" + GROK + "\", \"session_kind\": \"fork\"}");
        // a fork's log begins with its parent's, copied (the session id rewritten): those prompts are the parent's
        List<String> parentLines = Files.readAllLines(stores.home.resolve(GROK_DIR + GROK + "/updates.jsonl"));
        String copied = String.join("\n", parentLines.subList(0, 6)).replace(GROK, fork) + "\n";
        Files.writeString(dir.resolve("updates.jsonl"), copied + "{\"timestamp\":1784539000,\"method\":\"session/update\",\"params\":"
                + "{\"sessionId\":\"" + fork + "\",\"update\":{\"sessionUpdate\":\"user_message_chunk\",\"content\":{\"type\":\"text\","
                + "\"text\":\"Try it with jitter instead\"},\"_meta\":{\"modelId\":\"grok-build-fast\",\"promptIndex\":2}},"
                + "\"_meta\":{\"eventId\":\"ev-f-1\",\"agentTimestampMs\":1784539000000}}}\n");
        String compacted = "9d8e7f60-1a2b-4c3d-8e4f-3c4d5e6f7a80";
        Path vibe = stores.home.resolve(".vibe/logs/session/session_20260715_101000_9d8e7f60");
        Files.createDirectories(vibe);
        Files.writeString(vibe.resolve("meta.json"), "{\"session_id\": \"" + compacted + "\", \"parent_session_id\": \"" + VIBE + "\","
                + " \"start_time\": \"2026-07-15T10:10:00+00:00\", \"end_time\": \"2026-07-15T10:11:00+00:00\","
                + " \"environment\": {\"working_directory\": \"/home/ana/vibe-app\"}, \"total_messages\": 1}");
        // a fork begins with copies of its parent's messages (the same message ids): the parent's prompts
        List<String> parentMessages = Files.readAllLines(stores.home.resolve(VIBE_DIR + "/messages.jsonl"));
        Files.writeString(vibe.resolve("messages.jsonl"), String.join("\n", parentMessages.subList(0, 4)) + "\n"
                + "{\"role\": \"user\", \"content\": \"Keep going\", \"message_id\": \"m-1\"}\n");

        Imported got = stores.importStores(stores.importer());

        assertThat(got.claims(fork)).singleElement().satisfies(c -> {
            assertThat(c.getContinuesSessionOf()).isEqualTo(GROK);
            assertThat(c.getTask().getTitle()).isEqualTo("Try it with jitter instead");
        });
        assertThat(got.claims(GROK).get(0).getContinuesSessionOf()).isNull();
        assertThat(got.engine(fork)).allSatisfy(e -> assertThat(e.getContextUsed()).isNull()); // not the parent's turn
        assertThat(got.claims(compacted)).singleElement().satisfies(c -> {
            assertThat(c.getContinuesSessionOf()).isEqualTo(VIBE);
            assertThat(c.getTask().getTitle()).isEqualTo("Keep going");
        });
        assertThat(got.claims(VIBE).get(0).getContinuesSessionOf()).isNull();
    }

    @Test
    void aVibeSessionIsReadOnceItsMetaJsonNamesItsId() throws IOException {
        Path meta = stores.home.resolve(VIBE_DIR + "/meta.json");
        byte[] written = Files.readAllBytes(meta);
        Files.delete(meta);
        StoreImporter importer = stores.importer();

        Imported first = stores.importStores(importer);

        assertThat(first.claims()).noneMatch(c -> c.getAgent().equals("mistral-vibe"));
        assertThat(first.summary().skipped()).anySatisfy(k -> assertThat(k.reason()).isEqualTo("no meta.json yet"));
        Files.write(meta, written);
        assertThat(stores.importStores(importer).claims(VIBE)).extracting(RunClaimed::getRunId)
                .first().isEqualTo("mistral-vibe:" + VIBE);
    }

    @Test
    void kimiCodeTurnsAreRunsWithTheFolderFromKimiJsonAndTheFillKimiReports() {
        Imported got = stores.importStores(stores.importer());

        List<RunClaimed> claims = got.claims(KIMI);
        // the <system-reminder> turn Kimi started after a background task is not a prompt
        assertThat(claims).extracting(c -> c.getTask().getTitle()).containsExactly("Rename parse_args to parse_cli in main.py", "Run the tests");
        assertThat(claims).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("kimi-code");
            assertThat(c.getFolder()).isEqualTo("/home/ana/kimi-app");
            assertThat(c.getModel()).isNull(); // the wire log names no model
        });
        assertThat(claims.get(0).getRunId()).isEqualTo("kimi-code:" + KIMI);
        assertThat(got.eventOf(claims.get(0)).getOccurredAt()).isEqualTo(Instant.ofEpochMilli(1784100000250L));

        List<EngineEvent> engine = got.engine(KIMI);
        // the sub-agent's StatusUpdate (inside a SubagentEvent) is not this session's
        assertThat(engine).extracting(EngineEvent::getContextUsed).containsExactly(19_240L, 19_620L, 21_000L);
        assertThat(engine).extracting(EngineEvent::getContextSize).containsOnly(262_144L);
        assertThat(claims.get(1).getContextWindow()).isEqualTo(262_144L);

        RunStatusChanged first = got.done("kimi-code:" + KIMI);
        assertThat(first.getFilesChanged()).containsExactly("/home/ana/kimi-app/main.py");
        assertThat(first.getReportSummary()).isEqualTo("Renamed parse_args to parse_cli.");
        assertThat(first.getTokens()).isEqualTo(1240 + 18000 + 96 + 380 + 19240 + 40L);
        assertThat(got.done(claims.get(1).getRunId()).getReportSummary()).isEqualTo("All 12 tests pass.");
    }

    @Test
    void theSummaryNamesEveryStoreAndAntigravitysWithWhyItIsNotRead() {
        Imported got = stores.importStores(stores.importer());

        List<String> lines = got.summary().storeLines();
        assertThat(lines).contains(
                "Grok Build (" + stores.home.resolve(".grok") + "): 1 session, imported 1 (2 new runs)",
                "Mistral Vibe (" + stores.home.resolve(".vibe") + "): 1 session, imported 1 (2 new runs)",
                "kimi-cli (" + stores.home.resolve(".kimi") + "): 1 session, imported 1 (2 new runs)",
                "Kimi Code (" + stores.home.resolve(".kimi-code") + "): 1 session, imported 1 (2 new runs)");
        assertThat(lines).anySatisfy(l -> assertThat(l).isEqualTo("Antigravity (" + stores.home.resolve(".gemini/antigravity")
                + "): unreadable: 1 conversation not read: Antigravity encrypts them (conversations/*.pb, AES with a key"
                + " only the app holds; no public format)"));
        assertThat(got.claims()).noneMatch(c -> c.getAgent().equals("antigravity"));
    }

    @Test
    void kimiCodesNewerStoreMainAgentTurnsAreRunsAndItsSubAgentsAreNot() {
        Imported got = stores.importStores(stores.importer());

        List<RunClaimed> claims = got.claims(KIMI_CODE);
        // the /review skill's turn is not a person's prompt
        assertThat(claims).extracting(c -> c.getTask().getTitle())
                .containsExactly("Fix the flaky login test in tests/login.spec.ts", "Now run it ten times");
        assertThat(claims).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("kimi-code");
            assertThat(c.getFolder()).isEqualTo("/home/ana/kimi-web");
            assertThat(c.getModel()).isEqualTo("kimi-for-coding");
            assertThat(c.getContextWindow()).isEqualTo(262_144L); // from config.toml: the wire log does not carry it
        });
        assertThat(claims.get(0).getRunId()).isEqualTo("kimi-code:" + KIMI_CODE);
        assertThat(KimiCodeParser.windows(synthetic().resolve("kimi-code/config.toml"))).containsOnly(
                Map.entry("kimi-code/kimi-for-coding", 262_144L), Map.entry("kimi-for-coding", 262_144L),
                Map.entry("kimi-code/k3", 1_048_576L), Map.entry("k3", 1_048_576L));
        assertThat(got.eventOf(claims.get(0)).getOccurredAt()).isEqualTo(Instant.ofEpochMilli(1785000001000L));

        List<EngineEvent> engine = got.engine(KIMI_CODE);
        assertThat(engine).extracting(EngineEvent::getContextUsed).containsExactly(18_100L, 18_580L, 19_500L);
        assertThat(engine).extracting(EngineEvent::getContextSize).containsOnly(262_144L);

        RunStatusChanged first = got.done("kimi-code:" + KIMI_CODE);
        assertThat(first.getFilesChanged()).containsExactly("/home/ana/kimi-web/tests/login.spec.ts");
        assertThat(first.getReportSummary()).isEqualTo("Fixed: the test waits for the button.");
        assertThat(first.getTokens()).isEqualTo(18_100L + 180 + 18_580 + 25);
        assertThat(got.claims()).noneMatch(c -> c.getTask().getTitle().equals("Find the login test"));
        assertThat(got.summary().storeLines()).contains(
                "Kimi Code (" + stores.home.resolve(".kimi-code") + "): 1 session, imported 1 (2 new runs)");
    }

    @Test
    void readingAppendedLinesGivesTheSameEventsAsReadingTheWholeFile() throws IOException {
        Path fixtures = synthetic();
        Stores whole = Stores.empty(tmp.resolve("whole"));
        Stores halves = Stores.empty(tmp.resolve("halves"));
        for (Stores s : List.of(whole, halves)) {
            Stores.copyTree(fixtures.resolve("grok"), s.home.resolve(".grok"));
            Stores.copyTree(fixtures.resolve("kimi"), s.home.resolve(".kimi"));
            Stores.copyTree(fixtures.resolve("kimi-code"), s.home.resolve(".kimi-code"));
            s.touchAll(Stores.NOW.minus(Duration.ofMinutes(2)));
        }
        List<String> wholeIds = whole.importStores(whole.importer()).ids();

        Path grok = halves.home.resolve(GROK_DIR + GROK + "/updates.jsonl");
        Path kimi = halves.home.resolve(KIMI_DIR + KIMI + "/wire.jsonl");
        Path kimiCode = halves.home.resolve(KIMI_CODE_DIR + KIMI_CODE + "/agents/main/wire.jsonl");
        Map<Path, List<String>> lines = Map.of(grok, Files.readAllLines(grok), kimi, Files.readAllLines(kimi),
                kimiCode, Files.readAllLines(kimiCode));
        for (Map.Entry<Path, List<String>> e : lines.entrySet()) {
            List<String> l = e.getValue();
            // cut in the middle of a line: the incomplete line waits for the next import
            String text = String.join("\n", l) + "\n";
            Files.writeString(e.getKey(), text.substring(0, text.length() / 2), StandardCharsets.UTF_8);
            Stores.touch(e.getKey(), Stores.NOW.minus(Duration.ofMinutes(2)));
        }
        StoreImporter importer = halves.importer();
        List<String> ids = new ArrayList<>(halves.importStores(importer).ids());
        assertThat(ids).isNotEmpty().hasSizeLessThan(wholeIds.size());
        for (Map.Entry<Path, List<String>> e : lines.entrySet()) {
            Files.writeString(e.getKey(), String.join("\n", e.getValue()) + "\n", StandardCharsets.UTF_8);
            Stores.touch(e.getKey(), Stores.NOW.minus(Duration.ofMinutes(1)));
        }
        ids.addAll(halves.importStores(importer).ids());

        assertThat(ids).containsExactlyInAnyOrderElementsOf(wholeIds);
        assertThat(halves.importStores(importer).events()).isEmpty();
    }

    // ---- deletion, each in the agent's own store

    Set<String> listing() {
        return AgentStoreDeleterNewAgentsTest.listing(stores.home);
    }

    static Set<String> minus(Set<String> a, Set<String> b) {
        return AgentStoreDeleterNewAgentsTest.minus(a, b);
    }

    AgentStoreDeleter deleter() {
        return new AgentStoreDeleter(stores.agentStores());
    }

    @Test
    void grokBuildDeletesTheSessionFolderAndNothingElse() {
        Set<String> before = listing();

        AgentStoreDeleter.Result r = deleter().delete("grok-build", List.of(GROK));

        assertThat(r.ok()).isTrue();
        String dir = GROK_DIR + GROK;
        assertThat(minus(before, listing())).containsExactlyInAnyOrder(dir, dir + "/summary.json", dir + "/signals.json",
                dir + "/updates.jsonl");
        assertThat(listing()).contains(GROK_DIR + GROK_SUB + "/updates.jsonl");
        assertThat(deleter().delete("grok-build", List.of(GROK))).satisfies(again -> {
            assertThat(again.ok()).isTrue();
            assertThat(again.removedPaths()).isEmpty();
        });
    }

    @Test
    void mistralVibeDeletesTheSessionFolderWithItsSubAgentsAndThePointerNamingItNotAFolderWithTheSameShortId()
            throws IOException {
        // another session whose id starts with the same 8 characters: Vibe's own delete checks meta.json's id
        Path other = stores.home.resolve(".vibe/logs/session/session_20260716_090000_6c1f2a3b");
        Files.createDirectories(other);
        Files.writeString(other.resolve("meta.json"), "{\"session_id\": \"6c1f2a3b-0000-4000-8000-000000000000\"}");
        Files.writeString(other.resolve("messages.jsonl"), "{\"role\": \"user\", \"content\": \"hi\"}\n");
        Set<String> before = listing();

        AgentStoreDeleter.Result r = deleter().delete("mistral-vibe", List.of(VIBE));

        assertThat(r.ok()).isTrue();
        String sub = VIBE_DIR + "/agents/explore_20260715_100200_0a0b0c0d";
        assertThat(minus(before, listing())).containsExactlyInAnyOrder(VIBE_DIR, VIBE_DIR + "/meta.json",
                VIBE_DIR + "/messages.jsonl", VIBE_DIR + "/agents", sub, sub + "/meta.json", sub + "/messages.jsonl",
                ".vibe/logs/session/.last_session/pts-3");
        assertThat(deleter().delete("mistral-vibe", List.of(VIBE)).removedPaths()).isEmpty();
    }

    @Test
    void kimiCodeDeletesTheSessionFolderAndNothingElse() {
        Set<String> before = listing();

        AgentStoreDeleter.Result r = deleter().delete("kimi-code", List.of(KIMI));

        assertThat(r.ok()).isTrue();
        String dir = KIMI_DIR + KIMI;
        assertThat(minus(before, listing())).containsExactlyInAnyOrder(dir, dir + "/wire.jsonl", dir + "/context.jsonl",
                dir + "/state.json", dir + "/subagents", dir + "/subagents/sa-1", dir + "/subagents/sa-1/wire.jsonl");
        assertThat(listing()).contains(".kimi/kimi.json", KIMI_DIR.substring(0, KIMI_DIR.length() - 1));
        assertThat(deleter().delete("kimi-code", List.of(KIMI)).ok()).isTrue();
    }

    @Test
    void kimiCodesNewerStoreDeletesTheSessionFolderAndRecordsItsTombstoneInTheIndexAsKimiCodeDoes() throws IOException {
        Path index = stores.home.resolve(".kimi-code/session_index.jsonl");
        List<String> indexBefore = Files.readAllLines(index);
        Set<String> before = listing();

        AgentStoreDeleter.Result r = deleter().delete("kimi-code", List.of(KIMI_CODE));

        assertThat(r.ok()).isTrue();
        String dir = KIMI_CODE_DIR + KIMI_CODE;
        assertThat(minus(before, listing())).containsExactlyInAnyOrder(dir, dir + "/state.json", dir + "/agents",
                dir + "/agents/main", dir + "/agents/main/wire.jsonl", dir + "/agents/agent-1", dir + "/agents/agent-1/wire.jsonl");
        List<String> indexAfter = Files.readAllLines(index);
        assertThat(indexAfter.subList(0, indexBefore.size())).isEqualTo(indexBefore);
        assertThat(indexAfter.subList(indexBefore.size(), indexAfter.size()))
                .containsExactly("{\"sessionId\":\"" + KIMI_CODE + "\",\"deleted\":true}");
        // already gone: deleted, and no second tombstone
        assertThat(deleter().delete("kimi-code", List.of(KIMI_CODE)).removedPaths()).isEmpty();
        assertThat(Files.readAllLines(index)).hasSize(indexAfter.size());
    }

    @Test
    void aSessionDeletedInItsStoreIsGoneAtTheNextImportAndItsRunsStay() {
        StoreImporter importer = stores.importer();
        stores.importStores(importer);

        for (String[] s : new String[][] {{"grok-build", GROK}, {"mistral-vibe", VIBE}, {"kimi-code", KIMI}, {"kimi-code", KIMI_CODE}}) {
            assertThat(deleter().delete(s[0], List.of(s[1])).ok()).isTrue();
        }
        Imported next = stores.importStores(importer);

        for (String id : List.of(GROK, VIBE, KIMI, KIMI_CODE)) {
            assertThat(next.engine(id)).as(id).singleElement().satisfies(e -> assertThat(e.getTranscriptGone()).isTrue());
        }
        assertThat(next.claims()).isEmpty();
    }

    @Test
    void antigravitySessionsAreNotDeletedAndTheAnswerSaysSo() {
        Set<String> before = listing();

        AgentStoreDeleter.Result r = deleter().delete("antigravity", List.of("7d3e9a10-4b2c-4e5f-8a6b-9c0d1e2f3a4b"));

        assertThat(r.ok()).isFalse();
        assertThat(r.error()).contains("not antigravity");
        assertThat(listing()).isEqualTo(before);
    }

    @Test
    void theEnvironmentMovesEachStore() {
        AgentStores s = AgentStores.defaults(Path.of("/home/ana"), Map.of("GROK_HOME", "/data/grok", "VIBE_HOME", "/data/vibe",
                "KIMI_SHARE_DIR", "/data/kimi", "KIMI_CODE_HOME", "/data/kimi-code"));
        assertThat(s.grok()).containsExactly(Path.of("/data/grok"));
        assertThat(s.vibe()).containsExactly(Path.of("/data/vibe"));
        assertThat(s.kimi()).containsExactly(Path.of("/data/kimi"), Path.of("/data/kimi-code"));
        assertThat(s.antigravity()).containsExactly(Path.of("/home/ana/.gemini/antigravity"));
        AgentStores plain = AgentStores.defaults(Path.of("/home/ana"), Map.of());
        assertThat(plain.grok()).containsExactly(Path.of("/home/ana/.grok"));
        assertThat(plain.vibe()).containsExactly(Path.of("/home/ana/.vibe"));
        assertThat(plain.kimi()).containsExactly(Path.of("/home/ana/.kimi"), Path.of("/home/ana/.kimi-code"));
    }
}

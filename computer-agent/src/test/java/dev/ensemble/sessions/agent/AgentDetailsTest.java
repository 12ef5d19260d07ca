package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.Stores.Imported;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Details found on real transcripts, each on a small transcript written here: Claude Code's task notifications,
 * Codex forks, Desktop rollouts and wrapped prompts, several working folders, the last line's time, Gemini
 * messages written again, Copilot's usage readings, transcripts gone from disk and the 30-minute rule's summary.
 */
class AgentDetailsTest {
    static final String T = "2026-03-01T10:00:0";

    @TempDir
    Path tmp;

    static void write(Path file, String... lines) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
            Stores.touch(file, Stores.NOW.minus(Duration.ofMinutes(1)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String claudeUser(String uuid, int second, String cwd, String content) {
        return "{\"type\":\"user\",\"sessionId\":\"S\",\"uuid\":\"" + uuid + "\",\"timestamp\":\"" + T + second + "Z\",\"cwd\":\""
                + cwd + "\",\"message\":{\"role\":\"user\",\"content\":" + EventJsonText.quote(content) + "}}";
    }

    static String claudeReply(String id, int second, String cwd, String text) {
        return "{\"type\":\"assistant\",\"sessionId\":\"S\",\"uuid\":\"a-" + id + "\",\"timestamp\":\"" + T + second + "Z\",\"cwd\":\""
                + cwd + "\",\"message\":{\"id\":\"" + id + "\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\","
                + "\"content\":[{\"type\":\"text\",\"text\":\"" + text + "\"}],\"stop_reason\":\"end_turn\","
                + "\"usage\":{\"input_tokens\":100,\"output_tokens\":5}}}";
    }

    @Test
    void aClaudeTaskNotificationIsNoPromptAndSeveralFoldersAreAllKept() {
        Stores stores = Stores.empty(tmp);
        write(stores.claude.resolve("-a/S.jsonl"),
                claudeUser("u1", 1, "/a", "first prompt"),
                claudeReply("m1", 2, "/a", "started a background task"),
                claudeUser("u2", 3, "/a", "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"),
                claudeReply("m2", 4, "/a", "the task finished"),
                claudeUser("u3", 5, "/b", "second prompt, in another folder"),
                claudeReply("m3", 6, "/b", "done"));

        Imported got = stores.importStores(stores.importer());

        List<RunClaimed> claims = got.claims("S");
        assertThat(claims).extracting(c -> c.getTask().getTitle()).containsExactly("first prompt", "second prompt, in another folder");
        assertThat(claims.get(0).getFolder()).isEqualTo("/a");
        assertThat(claims.get(1).getFolder()).isEqualTo("/b");
        assertThat(claims.get(1).getFolders()).containsExactly("/a", "/b");
    }

    static String codex(int second, String type, String payload) {
        return "{\"timestamp\":\"" + T + second + ".000Z\",\"type\":\"" + type + "\",\"payload\":" + payload + "}";
    }

    static String userMessage(int second, String text) {
        return codex(second, "event_msg", "{\"type\":\"user_message\",\"message\":" + EventJsonText.quote(text) + ",\"images\":[]}");
    }

    static String userItem(int second, String text) {
        return codex(second, "response_item", "{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":"
                + EventJsonText.quote(text) + "}]}");
    }

    static final String PARENT = "019e0000-0000-7000-8000-00000000000a";
    static final String FORK = "019e0000-0000-7000-8000-00000000000b";
    static final String DESKTOP = "019e0000-0000-7000-8000-00000000000c";

    @Test
    void aCodexForkContinuesItsParentAndItsReplayedPromptsAreNotItsRuns() {
        Stores stores = Stores.empty(tmp);
        write(stores.codex.resolve("2026/03/01/rollout-2026-03-01T10-00-00-" + PARENT + ".jsonl"),
                codex(0, "session_meta", "{\"id\":\"" + PARENT + "\",\"cwd\":\"/p\",\"source\":\"cli\"}"),
                userItem(1, "parent one"), userMessage(1, "parent one"),
                userItem(2, "parent two"), userMessage(2, "parent two"));
        write(stores.codex.resolve("2026/03/01/rollout-2026-03-01T10-00-05-" + FORK + ".jsonl"),
                codex(5, "session_meta", "{\"id\":\"" + FORK + "\",\"forked_from_id\":\"" + PARENT + "\",\"cwd\":\"/p\",\"source\":\"cli\"}"),
                codex(5, "session_meta", "{\"id\":\"" + PARENT + "\",\"cwd\":\"/p\",\"source\":\"cli\"}"),
                userItem(5, "parent one"), userMessage(5, "parent one"),
                userItem(5, "parent two"), userMessage(5, "parent two"),
                userItem(6, "the fork's own"), userMessage(6, "the fork's own"));

        Imported got = stores.importStores(stores.importer());

        assertThat(got.claims(PARENT)).hasSize(2);
        assertThat(got.claims(FORK)).singleElement().satisfies(c -> {
            assertThat(c.getTask().getTitle()).isEqualTo("the fork's own");
            assertThat(c.getContinuesSessionOf()).isEqualTo(PARENT);
            assertThat(c.getRunId()).isEqualTo("codex:" + FORK);
        });
    }

    @Test
    void aCodexDesktopRolloutHasItsPromptsAsUserMessagesOnlyAndTheRequestIsTakenOutOfItsWrapper() {
        Stores stores = Stores.empty(tmp);
        write(stores.codex.resolve("2026/03/01/rollout-2026-03-01T10-00-00-" + DESKTOP + ".jsonl"),
                codex(0, "session_meta", "{\"id\":\"" + DESKTOP + "\",\"cwd\":\"/d\",\"originator\":\"Codex Desktop\",\"source\":\"vscode\"}"),
                userMessage(1, "# Files mentioned by the user:\n\n## flags.ts: /d/src/flags.ts\n\n## My request for Codex:\nrename the flag"),
                codex(2, "event_msg", "{\"type\":\"agent_message\",\"message\":\"renamed\"}"),
                userMessage(3, "and document it"),
                codex(4, "event_msg", "{\"type\":\"agent_message\",\"message\":\"documented\"}"));

        Imported got = stores.importStores(stores.importer());

        assertThat(got.claims(DESKTOP)).extracting(c -> c.getTask().getTitle()).containsExactly("rename the flag", "and document it");
        assertThat(got.claims(DESKTOP).get(0).getFolder()).isEqualTo("/d");
        // no token_count: one engine event of unknown fill
        assertThat(got.engine(DESKTOP)).singleElement().satisfies(e -> assertThat(e.getContextUsed()).isNull());
    }

    @Test
    void theRealCodexSessionIsLastActiveAtItsLastLinesTime() {
        Path data = SharedData.require("data/agent-stores");
        Stores stores = Stores.empty(tmp);
        Stores.copyTree(data.resolve("codex/sessions"), stores.codex);
        stores.touchAll(Stores.NOW.minus(Duration.ofMinutes(1)));

        Imported got = stores.importStores(stores.importer());

        Instant last = got.events().stream().map(Event::getOccurredAt).max(Comparator.naturalOrder()).orElseThrow();
        assertThat(last).isEqualTo(Instant.parse("2026-05-11T08:44:58.544Z"));
        assertThat(got.claims(RealStoresTest.CODEX).get(0).getTask().getTitle()).isEqualTo("show tools");
    }

    @Test
    void aGeminiMessageWrittenAgainWithItsTokensIsOneReplyAndASubAgentsChatIsNoSession() {
        Stores stores = Stores.empty(tmp);
        Path chats = stores.home.resolve(".gemini/tmp/proj/chats");
        write(stores.home.resolve(".gemini/tmp/proj/.project_root"), "/work/proj");
        write(chats.resolve("session-2026-03-01T10-00-aaaaaaaa.jsonl"),
                "{\"sessionId\":\"aaaaaaaa-1\",\"projectHash\":\"h\",\"startTime\":\"" + T + "0Z\",\"lastUpdated\":\"" + T + "0Z\",\"kind\":\"main\"}",
                "{\"id\":\"u1\",\"timestamp\":\"" + T + "1Z\",\"type\":\"user\",\"content\":[{\"text\":\"write hello.md\"}]}",
                "{\"$set\":{\"lastUpdated\":\"" + T + "1Z\"}}",
                "{\"id\":\"g1\",\"timestamp\":\"" + T + "2Z\",\"type\":\"gemini\",\"content\":\"\",\"model\":\"gemini-2.5-pro\","
                        + "\"toolCalls\":[{\"id\":\"t1\",\"name\":\"write_file\",\"args\":{\"file_path\":\"hello.md\"}}]}",
                "{\"id\":\"g1\",\"timestamp\":\"" + T + "2Z\",\"type\":\"gemini\",\"content\":\"\",\"model\":\"gemini-2.5-pro\","
                        + "\"toolCalls\":[{\"id\":\"t1\",\"name\":\"write_file\",\"args\":{\"file_path\":\"hello.md\"}}],"
                        + "\"tokens\":{\"input\":9000,\"output\":20,\"cached\":4000,\"total\":9020}}",
                "{\"id\":\"u1\",\"timestamp\":\"" + T + "1Z\",\"type\":\"user\",\"content\":[{\"text\":\"write hello.md\"}]}");
        write(chats.resolve("aaaaaaaa-1/sub-1.jsonl"),
                "{\"sessionId\":\"sub-1\",\"projectHash\":\"h\",\"kind\":\"subagent\"}",
                "{\"id\":\"s1\",\"timestamp\":\"" + T + "3Z\",\"type\":\"user\",\"content\":\"the parent's task\"}");

        Imported got = stores.importStores(stores.importer());

        assertThat(got.claims("aaaaaaaa-1")).singleElement().satisfies(c -> {
            assertThat(c.getFolder()).isEqualTo("/work/proj");
            assertThat(c.getModel()).isEqualTo("gemini-2.5-pro");
        });
        assertThat(got.engine("aaaaaaaa-1")).singleElement().satisfies(e -> {
            assertThat(e.getContextUsed()).isEqualTo(9_000L);
            assertThat(e.getContextSize()).isEqualTo(1_048_576L);
        });
        assertThat(got.claims("sub-1")).isEmpty();
        assertThat(got.summary().skippedFiles()).anySatisfy(s -> assertThat(s.reason()).isEqualTo("sub-agent transcript"));
    }

    @Test
    void copilotsUsageReadingGivesTheFill() {
        Stores stores = Stores.empty(tmp);
        String id = "c0c0c0c0-0000-4000-8000-000000000001";
        write(stores.home.resolve(".copilot/session-state/" + id + "/events.jsonl"),
                "{\"type\":\"session.start\",\"data\":{\"sessionId\":\"" + id + "\",\"context\":{\"cwd\":\"/c\"}},\"id\":\"e1\",\"timestamp\":\"" + T + "0Z\"}",
                "{\"type\":\"session.model_change\",\"data\":{\"newModel\":\"gpt-5\"},\"id\":\"e2\",\"timestamp\":\"" + T + "0Z\"}",
                "{\"type\":\"user.message\",\"data\":{\"content\":\"fix the build\"},\"id\":\"e3\",\"timestamp\":\"" + T + "1Z\"}",
                "{\"type\":\"session.usage_info\",\"data\":{\"tokenLimit\":128000,\"currentTokens\":32000,\"messagesLength\":3},\"id\":\"e4\",\"timestamp\":\"" + T + "2Z\"}",
                "{\"type\":\"assistant.usage\",\"data\":{\"model\":\"gpt-5\",\"inputTokens\":31000,\"outputTokens\":200},\"id\":\"e5\",\"timestamp\":\"" + T + "3Z\"}",
                "{\"type\":\"session.task_complete\",\"data\":{\"summary\":\"fixed\"},\"id\":\"e6\",\"timestamp\":\"" + T + "4Z\"}");

        Imported got = stores.importStores(stores.importer());

        assertThat(got.claims(id)).singleElement().satisfies(c -> {
            assertThat(c.getFolder()).isEqualTo("/c");
            assertThat(c.getModel()).isEqualTo("gpt-5");
        });
        assertThat(got.engine(id)).singleElement().satisfies(e -> {
            assertThat(e.getContextUsed()).isEqualTo(32_000L);
            assertThat(e.getContextSize()).isEqualTo(128_000L);
        });
        assertThat(got.done("copilot:" + id).getReportSummary()).isEqualTo("fixed");
    }

    @Test
    void aTranscriptGoneWithItsTurnOpenHasItsRunClosedAndTheSummarySaysOnlyThatItIsGone() throws IOException {
        Stores stores = Stores.empty(tmp);
        Path file = stores.claude.resolve("-a/S.jsonl");
        write(file, claudeUser("u1", 1, "/a", "first prompt"));
        StoreImporter importer = stores.importer();
        stores.importStores(importer);

        Files.delete(file);
        Imported got = stores.importStores(importer);
        assertThat(got.done("claude-code:S")).isNotNull();
        assertThat(got.summary().gone()).isEqualTo(1);
        assertThat(got.summary().sessions()).isZero();
        assertThat(got.summary().toString()).isEqualTo("1 session whose transcript is gone from disk marked gone");
    }

    @Test
    void aTranscriptGoneFromDiskIsReportedOnceAsGoneAndNothingElseIsSent() throws IOException {
        Stores stores = Stores.empty(tmp);
        Path file = stores.claude.resolve("-a/S.jsonl");
        write(file, claudeUser("u1", 1, "/a", "first prompt"), claudeReply("m1", 2, "/a", "ok"));
        write(stores.claude.resolve("-a/T.jsonl"), claudeUser("v1", 1, "/a", "other").replace("\"S\"", "\"T\""));
        StoreImporter importer = stores.importer();
        stores.importStores(importer);

        String asLastSeen = Files.size(file) + "-" + Files.getLastModifiedTime(file).toMillis();
        Files.delete(file);
        Imported got = stores.importStores(importer);

        assertThat(got.events()).singleElement().satisfies(e -> {
            EngineEvent ee = (EngineEvent) e.getPayload();
            assertThat(ee.getTranscriptGone()).isTrue();
            assertThat(ee.getRunId()).isEqualTo("claude-code:S");
            assertThat(ee.getAgentSessionId()).isEqualTo("S");
            // one id per disappearance: restored and deleted again, it is reported again
            assertThat(e.getEventId()).isEqualTo(EventFactory.eventId("claude-code/S/transcript/gone/" + asLastSeen));
        });
        assertThat(got.summary().gone()).isEqualTo(1);
        assertThat(got.summary().toString()).isEqualTo("1 session whose transcript is gone from disk marked gone");
        assertThat(stores.importStores(importer).events()).isEmpty();
    }

    /** A transcript emptied (its session read before), then deleted: still its session's, so it is reported gone. */
    @Test
    void aTranscriptEmptiedThenDeletedIsReportedGone() throws IOException {
        Stores stores = Stores.empty(tmp);
        Path file = stores.claude.resolve("-a/S.jsonl");
        write(file, claudeUser("u1", 1, "/a", "first prompt"), claudeReply("m1", 2, "/a", "ok"));
        StoreImporter importer = stores.importer();
        stores.importStores(importer);

        Files.write(file, new byte[0]);
        assertThat(stores.importStores(importer).payloads(EngineEvent.class)).as("emptied: nothing new").isEmpty();
        stores.importStores(importer); // unchanged since
        Files.delete(file);
        Imported got = stores.importStores(importer);

        assertThat(got.payloads(EngineEvent.class)).singleElement().satisfies(ee -> {
            assertThat(ee.getTranscriptGone()).isTrue();
            assertThat(ee.getRunId()).isEqualTo("claude-code:S");
            assertThat(ee.getAgentSessionId()).isEqualTo("S");
        });
        assertThat(got.summary().gone()).isEqualTo(1);
    }

    @Test
    void aTranscriptGoneWithItsTurnOpenHasTheTurnDoneAsOfItsLastLine() throws IOException {
        Stores stores = Stores.empty(tmp);
        Path file = stores.claude.resolve("-a/S.jsonl");
        write(file, claudeUser("u1", 1, "/a", "first prompt"), claudeUser("u2", 3, "/a", "[Request interrupted by user]"));
        StoreImporter importer = stores.importer();
        assertThat(stores.importStores(importer).statuses("claude-code:S")).hasSize(1); // WORKING

        Files.delete(file);
        Imported got = stores.importStores(importer);

        assertThat(got.done("claude-code:S").getDurationMs()).isEqualTo(2_000L);
        // the first turn ended without usage: its engine event of unknown fill, then the one saying the transcript is gone
        assertThat(got.payloads(EngineEvent.class)).extracting(EngineEvent::getTranscriptGone).containsExactly(false, true);
    }

    @Test
    void aStoreFolderThatIsGoneIsNotTakenForDeletedSessions() throws IOException {
        Stores stores = Stores.empty(tmp);
        Path file = stores.claude.resolve("-a/S.jsonl");
        write(file, claudeUser("u1", 1, "/a", "first prompt"), claudeReply("m1", 2, "/a", "ok"));
        StoreImporter importer = stores.importer();
        stores.importStores(importer);

        Files.delete(file);
        Files.delete(file.getParent());
        Files.delete(stores.claude);
        assertThat(stores.importStores(importer).events()).isEmpty();
    }

    @Test
    void aStoreThatCannotBeReadIsNamedWithTheReasonAndItsSessionsAreNotTakenForGone() throws IOException {
        Path data = SharedData.require("data/agent-stores");
        Stores stores = Stores.empty(tmp);
        Stores.copyTree(data.resolve("opencode"), stores.home.resolve(".local/share/opencode"));
        write(stores.claude.resolve("-a/S.jsonl"), claudeUser("u1", 1, "/a", "first prompt"));
        StoreImporter importer = stores.importer();
        assertThat(stores.importStores(importer).claims("ses_main001")).hasSize(2);

        Path db = stores.home.resolve(".local/share/opencode/opencode.db");
        Files.writeString(db, "this is not a database, but a file of the same name with some text in it ......");
        Imported got = stores.importStores(importer);

        assertThat(got.summary().storeLines()).anySatisfy(l -> assertThat(l)
                .startsWith("OpenCode (" + stores.home.resolve(".local/share/opencode") + "): unreadable: ")
                .contains("opencode.db"));
        assertThat(got.payloads(EngineEvent.class)).noneMatch(EngineEvent::getTranscriptGone);
    }

    @Test
    void theSummaryOfAnImportThatOnlyClosedIdleRunsSaysSo() {
        Stores stores = Stores.empty(tmp);
        write(stores.claude.resolve("-a/S.jsonl"), claudeUser("u1", 1, "/a", "first prompt"));
        StoreImporter importer = stores.importer();
        stores.importStores(importer);

        stores.clock.advance(Duration.ofMinutes(31));
        Imported got = stores.importStores(importer);

        assertThat(got.summary().toString()).isEqualTo("1 run marked done after 30 minutes without change");
        assertThat(got.summary().sessions()).isZero();
        assertThat(got.summary().storeLines()).anySatisfy(l -> assertThat(l)
                .startsWith("Claude Code (").endsWith("1 session, 1 run marked done after 30 minutes without change"));
    }
}

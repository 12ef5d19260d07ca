package dev.ensemble.sessions.agent.assistant;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.assistant.AssistantSessions.Entry;
import dev.ensemble.sessions.agent.assistant.AssistantSessions.Retired;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.assistant.TurnRules.Action;
import dev.ensemble.sessions.assistant.TurnRules.Chat;
import dev.ensemble.sessions.assistant.TurnRules.Decision;
import dev.ensemble.sessions.assistant.TurnRules.Kind;
import dev.ensemble.sessions.assistant.TurnRules.Reason;
import dev.ensemble.sessions.assistant.TurnRules.Turn;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static dev.ensemble.sessions.agent.assistant.FakeHome.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The computer's {@code <state>/assistant-sessions.json} and the chats' own folders (guide §5 "One chat, one session"). */
class AssistantSessionsTest {
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final Clock CLOCK = Clock.fixed(T, ZoneOffset.UTC);
    static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    Path tmp;
    Path state;
    Path workspace;

    @BeforeEach
    void setUp() {
        state = tmp.resolve(".ensemble/computer-agent");
        workspace = tmp.resolve("Ensemble");
    }

    AssistantSessions current;

    /** Opens the store as a restarted agent would: the one opened before is closed first (its lock released). */
    AssistantSessions open() {
        if (current != null) {
            current.close();
        }
        current = AssistantSessions.open(state, CLOCK);
        return current;
    }

    @AfterEach
    void closeStore() {
        if (current != null) {
            current.close();
        }
    }

    static Entry entry(String key, String sessionId) {
        return new Entry(key, "copilot", sessionId, "gpt-5", List.of("You are Ensemble.", "Answer briefly."),
                "/w/projects/Launch", 7, 6, 3, 3, "laptop", T, List.of(new Retired("copilot", "old-1")));
    }

    @Nested
    class TheFile {
        @Test
        void anEntryIsKeptWithEveryFieldAcrossAReopen() {
            AssistantSessions s = open();
            Entry full = entry("chat-1", "s1");
            Entry sparse = new Entry("chat-2", "claude-code", "s2", null, List.of(), null, null, 0, 0, null, null, T, List.of());
            s.put(full);
            s.put(sparse);

            AssistantSessions again = open();

            assertThat(again.get("chat-1")).isEqualTo(full);
            assertThat(again.get("chat-2")).isEqualTo(sparse);
            assertThat(again.all()).containsOnlyKeys("chat-1", "chat-2");
        }

        @Test
        void theFileIsOneObjectOfVersionOneWithTheGuidesFields() throws IOException {
            open().put(entry("chat-1", "s1"));

            JsonNode root = MAPPER.readTree(state.resolve("assistant-sessions.json").toFile());
            assertThat(root.path("version").asInt()).isEqualTo(1);
            JsonNode e = root.path("sessions").path("chat-1");
            assertThat(e.path("agent").asText()).isEqualTo("copilot");
            assertThat(e.path("sessionId").asText()).isEqualTo("s1");
            assertThat(e.path("instructionLines")).hasSize(2);
            assertThat(e.path("folder").asText()).isEqualTo("/w/projects/Launch");
            assertThat(e.path("keepDays").asInt()).isEqualTo(7);
            assertThat(e.path("positionLeft").asInt()).isEqualTo(6);
            assertThat(e.path("messagesSent").asInt()).isEqualTo(3);
            assertThat(e.path("promptsNoted").asInt()).isEqualTo(3);
            assertThat(e.path("computerId").asText()).isEqualTo("laptop");
            assertThat(e.path("updatedAt").asText()).isEqualTo("2026-11-02T09:00:00Z");
            assertThat(e.path("retired").get(0).path("sessionId").asText()).isEqualTo("old-1");
        }

        @Test
        void aWriteReplacesTheFileWholeAndLeavesNoTemporaryFile() throws IOException {
            AssistantSessions s = open();
            for (int i = 0; i < 20; i++) {
                s.put(entry("chat-" + i, "s" + i));
            }
            s.remove("chat-3");

            try (var files = Files.list(state)) {
                assertThat(files.map(p -> p.getFileName().toString()).toList())
                        .containsExactlyInAnyOrder("assistant-sessions.json", "assistant-sessions.lock");
            }
            assertThat(open().all()).hasSize(19).doesNotContainKey("chat-3");
        }

        @Test
        void temporaryFilesAWriteCutShortLeftAreDeletedWhenTheStoreOpens() {
            write(state.resolve("assistant-sessions.json"), "{\"version\": 1, \"sessions\": {}}");
            Path left = write(state.resolve(".assistant-sessions.json1234567.tmp"), "{\"version\": 1, \"sess");
            Path other = write(state.resolve(".other.json1.tmp"), "not the store's");

            open();

            assertThat(left).doesNotExist();
            assertThat(other).as("not the store's").exists();
            assertThat(state.resolve("assistant-sessions.json")).exists();
        }

        @Test
        void removingAChatWithNoEntryWritesNothing() {
            assertThat(open().remove("nothing")).isNull();
            assertThat(state.resolve("assistant-sessions.json")).doesNotExist();
        }

        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {
                "not json at all",
                "[]",
                "{\"version\": 2, \"sessions\": {}}",
                "{\"version\": 1}",
                "{\"version\": 1, \"sessions\": {\"c\": {\"agent\": \"copilot\", \"positionLeft\": 0, \"messagesSent\": 0, \"updatedAt\": \"2026-11-02T09:00:00Z\"}}}",
                "{\"version\": 1, \"sessions\": {\"c\": {\"agent\": \"copilot\", \"sessionId\": \"s\", \"positionLeft\": -1, \"messagesSent\": 0, \"updatedAt\": \"2026-11-02T09:00:00Z\"}}}",
                "{\"version\": 1, \"sessions\": {\"c\": {\"agent\": \"copilot\", \"sessionId\": \"s\", \"positionLeft\": 0, \"messagesSent\": 0, \"updatedAt\": \"yesterday\"}}}",
                "{\"version\": 1, \"sessions\": {\"c\": {\"agent\": \"copilot\", \"sessionId\": \"s\", \"positionLeft\": 1.5, \"messagesSent\": 0, \"updatedAt\": \"2026-11-02T09:00:00Z\"}}}",
                "{\"version\": 1, \"sessions\": {\"c\": {\"agent\": \"copilot\", \"sessionId\": \"s\", \"positionLeft\": 0, \"messagesSent\": 0, \"updatedAt\": \"2026-11-02T09:00:00Z\", \"instructionLines\": [1]}}}",
                "{\"version\": 1, \"sessions\": {\"c\": {\"agent\": \"copilot\", \"sessionId\": \"s\", \"positionLeft\": 0, \"messagesSent\": 0, \"updatedAt\": \"2026-11-02T09:00:00Z\"",
        })
        void aCorruptFileIsKeptAsideAndTheStoreStartsEmpty(String text) throws IOException {
            write(state.resolve("assistant-sessions.json"), text);

            AssistantSessions s = open();

            assertThat(s.all()).isEmpty();
            Path aside = state.resolve("assistant-sessions.json.corrupt-" + T.toEpochMilli());
            assertThat(aside).as("kept aside, byte for byte").hasContent(text);
            assertThat(state.resolve("assistant-sessions.json")).doesNotExist();
            s.put(entry("chat-1", "s1"));
            assertThat(open().get("chat-1")).as("and the store works on").isNotNull();
            assertThat(aside).hasContent(text);
        }

        @Test
        void aSecondCorruptFileAtTheSameInstantIsKeptAsideBesideTheFirst() {
            write(state.resolve("assistant-sessions.json"), "first");
            open();
            write(state.resolve("assistant-sessions.json"), "second");

            assertThat(open().all()).isEmpty();
            assertThat(state.resolve("assistant-sessions.json.corrupt-" + T.toEpochMilli())).hasContent("first");
            assertThat(state.resolve("assistant-sessions.json.corrupt-" + T.toEpochMilli() + "-1")).hasContent("second");
        }

        @Test
        void aSecondStoreOfTheSameStateFolderIsRefusedUntilTheFirstIsClosed() {
            AssistantSessions first = open();
            first.put(entry("chat-1", "s1"));

            assertThatThrownBy(() -> AssistantSessions.open(state, CLOCK)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("assistant-sessions.lock").hasMessageContaining("another computer agent");
            first.put(entry("chat-2", "s2"));

            first.close();
            assertThatThrownBy(() -> first.put(entry("chat-3", "s3"))).as("closed").isInstanceOf(IllegalStateException.class);
            AssistantSessions second = AssistantSessions.open(state, CLOCK);
            try {
                assertThat(second.all()).as("no entry lost").containsOnlyKeys("chat-1", "chat-2");
            } finally {
                second.close();
            }
        }

        @Test
        void anEntryWithANegativeCountIsRefused() {
            assertThatThrownBy(() -> new Entry("c", "copilot", "s", null, List.of(), null, null, 0, -1, null, null, T, List.of()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chat c");
        }
    }

    @Nested
    class AFolderPerChat {
        @Test
        void theChatsFolderIsUnderStateAssistantAndTheSameAsTheRulesOne() {
            AssistantSessions s = open();
            TurnRules.Places places = s.places(workspace);

            for (String key : List.of("0f9c2a1e-6b7d-4a8e-9f00-123456789abc", "ask-page-3f2a9c0d1e4b5a6f", "..", ".", "../../etc",
                    "a/b", "C:\\x", "chat\u0000nul", " ", "")) {
                Path folder = s.chatFolder(key);
                assertThat(folder.getParent()).as(key).isEqualTo(state.toAbsolutePath().resolve("assistant"));
                assertThat(folder.toString()).as(key).isEqualTo(TurnRules.chatFolder(places, key));
            }
            assertThat(s.chatFolder("0f9c2a1e-6b7d-4a8e-9f00-123456789abc").getFileName().toString())
                    .isEqualTo("0f9c2a1e-6b7d-4a8e-9f00-123456789abc");
            assertThat(s.chatFolder("..")).isNotEqualTo(s.chatFolder("."));
        }

        @Test
        void makingItMakesItOnceAndRefusesALink() throws IOException {
            AssistantSessions s = open();
            Path made = s.makeChatFolder("chat-1");
            assertThat(made).isDirectory();
            assertThat(s.makeChatFolder("chat-1")).isEqualTo(made);

            Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
            Files.createSymbolicLink(s.chatFolder("chat-2"), elsewhere);
            assertThatThrownBy(() -> s.makeChatFolder("chat-2")).hasMessageContaining("chat-2")
                    .cause().hasMessageContaining("is a link");
        }

        @Test
        void theChatsOwnFolderIsToldFromAGroupsProjectFolder() {
            AssistantSessions s = open();
            assertThat(s.isChatsOwn("chat-1", s.chatFolder("chat-1").toString())).isTrue();
            assertThat(s.isChatsOwn("chat-1", workspace.resolve("projects/Launch").toString())).isFalse();
            assertThat(s.isChatsOwn("chat-1", s.chatFolder("chat-2").toString())).isFalse();
            assertThat(s.isChatsOwn("chat-1", null)).isFalse();
        }
    }

    /** The store's entries are what the turn rules take and give, across turns and a restart. */
    @Nested
    class EntriesAndTheTurnRules {
        Decision decide(AssistantSessions s, String key, Turn turn) {
            Entry e = s.get(key);
            return TurnRules.decide(new Chat(key, Kind.CHAT, null, null, e == null ? null : e.toSessionEntry(false), List.of()),
                    turn, s.places(workspace));
        }

        @Test
        void aFirstTurnIsStoredAndTheNextResumesItAfterARestart() {
            AssistantSessions s = open();
            Turn first = new Turn("claude-code", "sonnet", "laptop", 0, List.of("You are Ensemble."), null);
            Decision d = decide(s, "chat-1", first);
            assertThat(d.reason()).isEqualTo(Reason.FIRST_TURN);
            s.put(Entry.of("chat-1", TurnRules.afterTurn(d, first, "sess-1", true, 1), d.keepDays(), T, List.of()));

            AssistantSessions restarted = open();
            Entry stored = restarted.get("chat-1");
            assertThat(stored.folder()).isEqualTo(restarted.chatFolder("chat-1").toString());
            assertThat(stored.positionLeft()).isEqualTo(2);
            assertThat(stored.messagesSent()).isEqualTo(1);
            assertThat(stored.promptsNoted()).isEqualTo(1);

            Decision next = decide(restarted, "chat-1", new Turn("claude-code", "sonnet", "laptop", 2, List.of("You are Ensemble."), 1));
            assertThat(next.action()).isEqualTo(Action.RESUME);
            assertThat(next.sessionId()).isEqualTo("sess-1");
        }

        @Test
        void aTouchedSessionIsKeptAsRetiredInTheNewEntry() {
            AssistantSessions s = open();
            Turn first = new Turn("copilot", "gpt-5", "laptop", 0, List.of("a"), null);
            Decision d = decide(s, "chat-1", first);
            s.put(Entry.of("chat-1", TurnRules.afterTurn(d, first, "sess-1", true, 1), d.keepDays(), T, List.of()));

            Turn touched = new Turn("copilot", "gpt-5", "laptop", 2, List.of("a"), 2);
            Decision d2 = decide(s, "chat-1", touched);
            assertThat(d2.reason()).isEqualTo(Reason.TOUCHED_OUTSIDE);
            Entry before = s.get("chat-1");
            s.put(Entry.of("chat-1", TurnRules.afterTurn(d2, touched, "sess-2", true, 1), d2.keepDays(), T,
                    before.withRetired(new Retired(before.agent(), d2.retired())).retired()));

            assertThat(open().get("chat-1").sessionId()).isEqualTo("sess-2");
            assertThat(open().get("chat-1").retired()).containsExactly(new Retired("copilot", "sess-1"));
        }
    }
}

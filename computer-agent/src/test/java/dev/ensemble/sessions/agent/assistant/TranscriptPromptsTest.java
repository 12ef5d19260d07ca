package dev.ensemble.sessions.agent.assistant;

import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.agent.StoreImporter;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.assistant.TurnRules.Chat;
import dev.ensemble.sessions.assistant.TurnRules.Decision;
import dev.ensemble.sessions.assistant.TurnRules.Kind;
import dev.ensemble.sessions.assistant.TurnRules.Reason;
import dev.ensemble.sessions.assistant.TurnRules.SessionEntry;
import dev.ensemble.sessions.assistant.TurnRules.Turn;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.ensemble.sessions.agent.assistant.FakeHome.append;
import static dev.ensemble.sessions.agent.assistant.FakeHome.write;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The prompt count of a session's own transcript (guide §5 "A session used outside Ensemble"): Claude Code's user
 * prompts in {@code ~/.claude/projects/<folder>/<id>.jsonl}, Copilot's {@code user.message} events in
 * {@code session-state/<id>/events.jsonl} (and the older {@code <id>.jsonl}); null when not counted or not readable.
 */
class TranscriptPromptsTest {
    @TempDir
    Path tmp;
    FakeHome home;
    TranscriptPrompts prompts;

    @BeforeEach
    void setUp() {
        home = new FakeHome(tmp);
        prompts = new TranscriptPrompts(home.stores());
    }

    /** The real transcripts of ../shared/data/agent-stores; the counts are the importer's runs of the same files. */
    @Nested
    class RealTranscripts {
        @BeforeEach
        void copy() {
            home.copyAgentStores(SharedData.require("data/agent-stores"));
        }

        @Test
        void claudeCodesPromptsAreTheImportersRealPrompts() {
            // the importer, on the same files: one run per real prompt (interruption markers, /clear and its output,
            // meta, compaction and sub-agent lines left out; an answered slash command counted)
            List<Event> events = new ArrayList<>();
            new StoreImporter(new ImportConfig("ana", "laptop", Clock.systemUTC(), tmp.resolve("import-state.json")))
                    .importStores(home.stores(), events::add);
            Map<String, Integer> runs = new TreeMap<>();
            for (Event e : events) {
                if (e.getPayload() instanceof RunClaimed c && "claude-code".equals(String.valueOf(c.getAgent()))) {
                    runs.merge(String.valueOf(c.getAgentSessionId()), 1, Integer::sum);
                }
            }
            assertThat(runs).as("the shared data's five Claude Code sessions").hasSize(5);

            Map<String, Integer> counted = new TreeMap<>();
            runs.keySet().forEach(id -> counted.put(id, prompts.count("claude-code", id)));
            assertThat(counted).isEqualTo(runs);
        }

        @Test
        void copilotsPromptsAreItsUserMessagesWithContentNotAutopilotsNudges() {
            assertThat(prompts.count("copilot", "07c40cd0-ff51-4d6e-bdcd-ac2f90877203")).isEqualTo(7);
        }

        @Test
        void aPromptTypedInTheAgentsOwnAppRaisesTheCountAndTheRulesRetireTheSession() throws IOException {
            String id = "9eda1058-9706-484a-b992-d03f9cfa2546";
            Integer noted = prompts.count("claude-code", id);
            append(home.claudeProjects().resolve("-Users-user-repo").resolve(id + ".jsonl"),
                    "{\"type\":\"user\",\"sessionId\":\"" + id + "\",\"uuid\":\"typed-outside\",\"message\":{\"role\":\"user\","
                            + "\"content\":\"a question of my own\"},\"cwd\":\"/Users/user/repo\"}\n");
            Integer now = prompts.count("claude-code", id);

            assertThat(now).isEqualTo(noted + 1);
            SessionEntry e = new SessionEntry(id, "claude-code", "sonnet", "laptop", 4, 2, List.of("be brief"),
                    "/s/assistant/c1", noted, false);
            Decision d = TurnRules.decide(new Chat("c1", Kind.CHAT, null, null, e, List.of()),
                    new Turn("claude-code", "sonnet", "laptop", 4, List.of("be brief"), now), new TurnRules.Places("/w", "/s"));
            assertThat(d.reason()).isEqualTo(Reason.TOUCHED_OUTSIDE);
            assertThat(d.retired()).isEqualTo(id);
        }
    }

    @Nested
    class ClaudeCode {
        static final String ID = "aaaaaaaa-1111-4111-8111-000000000001";

        Path transcript() {
            return home.claudeProjects().resolve("-home-ana-Ensemble-projects-Launch").resolve(ID + ".jsonl");
        }

        static String user(String content, String extra) {
            return "{\"type\":\"user\",\"sessionId\":\"" + ID + "\"" + extra + ",\"message\":{\"role\":\"user\",\"content\":" + content + "}}\n";
        }

        static String assistant(String text) {
            return "{\"type\":\"assistant\",\"sessionId\":\"" + ID + "\",\"message\":{\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\","
                    + "\"content\":[{\"type\":\"text\",\"text\":\"" + text + "\"}]}}\n";
        }

        @Test
        void onlyAPersonsPromptsCount() {
            write(transcript(), ""
                    + user("\"Build the ranking API\"", "")                                                          // 1
                    + "{\"type\":\"assistant\",\"sessionId\":\"" + ID + "\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{}}]}}\n"
                    + user("[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"ok\"}]", ",\"toolUseResult\":{}") // tool result
                    + user("\"<task-notification>build finished</task-notification>\"", "")                          // a background task
                    + user("\"Caveat: The messages below were generated by the user while running local commands\"", ",\"isMeta\":true")
                    + user("\"a sub-agent's prompt\"", ",\"isSidechain\":true")                                       // sub-agent
                    + user("\"This session is being continued from a previous conversation\"", ",\"isCompactSummary\":true")
                    + user("\"<command-name>/clear</command-name>\\n<command-message>clear</command-message>\\n<command-args></command-args>\"", "")
                    + user("\"<local-command-stdout></local-command-stdout>\"", "")                                   // /clear: local
                    + assistant("after clear")
                    + user("\"<command-name>/review</command-name>\\n<command-message>review</command-message>\\n<command-args>api</command-args>\"", "")
                    + user("\"Review the API for mistakes\"", ",\"isMeta\":true")                                     // its expanded text
                    + assistant("Reviewing")                                                                          // 2: answered command
                    + user("[{\"type\":\"text\",\"text\":\"[Request interrupted by user]\"}]", "")
                    + user("[{\"type\":\"text\",\"text\":\"And add tests\"}]", "")                                    // 3
                    + "{\"type\":\"user\",\"sessionId\":\"" + ID + "\",\"message\":{\"role\":\"user\",\"content\":\"half a line");

            assertThat(prompts.count("claude-code", ID)).isEqualTo(3);
        }

        @Test
        void aPromptSentOutsideEnsembleRaisesTheCountByOne() {
            write(transcript(), user("\"first\"", "") + assistant("ok") + user("\"second\"", "") + assistant("ok"));
            assertThat(prompts.count("claude-code", ID)).isEqualTo(2);

            append(transcript(), user("\"typed in the terminal\"", ""));

            assertThat(prompts.count("claude-code", ID)).isEqualTo(3);
        }

        @Test
        void aTranscriptInTwoProjectFoldersCountsBoth() {
            write(transcript(), user("\"first\"", ""));
            write(home.claudeProjects().resolve("-tmp-other").resolve(ID + ".jsonl"), user("\"elsewhere\"", ""));
            assertThat(prompts.count("claude-code", ID)).isEqualTo(2);
        }

        @Test
        void aTranscriptThatIsNotThereOrNotTextIsNotCounted() throws IOException {
            assertThat(prompts.count("claude-code", ID)).as("no transcript").isNull();
            Files.createDirectories(transcript().getParent());
            Files.write(transcript(), new byte[] {'{', (byte) 0xC3, (byte) 0x28, '\n'});
            assertThat(prompts.count("claude-code", ID)).as("not UTF-8: cannot be read").isNull();
        }
    }

    @Nested
    class Copilot {
        static final String ID = "c0c0c0c0-2222-4222-8222-000000000001";

        static String event(String type, String data) {
            return "{\"type\":\"" + type + "\",\"data\":" + data + ",\"id\":\"e\",\"timestamp\":\"2026-11-02T09:00:00Z\"}\n";
        }

        @Test
        void userMessagesWithContentCountAutopilotNudgesDoNot() {
            write(home.copilotState().resolve(ID).resolve("events.jsonl"), ""
                    + event("session.start", "{\"sessionId\":\"" + ID + "\",\"context\":{\"cwd\":\"/w\"}}")
                    + event("user.message", "{\"content\":\"Fix the build\"}")
                    + event("assistant.message", "{\"content\":\"the user.message above\"}")
                    + event("user.message", "{\"content\":\"\",\"transformedContent\":\"continue\"}")
                    + event("user.message", "{\"content\":\"   \"}")
                    + event("user.message", "{\"content\":\"Now the docs\"}"));

            assertThat(prompts.count("copilot", ID)).isEqualTo(2);
        }

        @Test
        void theOlderFlatLayoutCounts() {
            write(home.copilotState().resolve(ID + ".jsonl"), event("user.message", "{\"content\":\"hello\"}"));
            assertThat(prompts.count("copilot", ID)).isEqualTo(1);
        }

        @Test
        void theSessionFoldersEventsWinOverTheOlderFlatFileOfTheSameSession() {
            write(home.copilotState().resolve(ID + ".jsonl"), event("user.message", "{\"content\":\"hello\"}"));
            write(home.copilotState().resolve(ID).resolve("events.jsonl"), event("user.message", "{\"content\":\"hello\"}")
                    + event("user.message", "{\"content\":\"and more\"}"));
            assertThat(prompts.count("copilot", ID)).as("events.jsonl only, not both").isEqualTo(2);
        }

        @Test
        void noTranscriptIsNotCounted() {
            assertThat(prompts.count("copilot", ID)).isNull();
        }
    }

    @Test
    void otherAgentsAndIdsThatAreNotFileNamesAreNotCounted() {
        write(home.claudeProjects().resolve("-x").resolve("s1.jsonl"), ClaudeCode.user("\"hi\"", ""));
        assertThat(prompts.count("claude-code", "s1")).isEqualTo(1);
        assertThat(prompts.count("codex", "s1")).as("an agent whose transcript is not counted").isNull();
        assertThat(prompts.count("cursor", "s1")).isNull();
        assertThat(prompts.count("claude-code", "../-x/s1")).as("not a file name").isNull();
        assertThat(prompts.count("claude-code", null)).isNull();
    }
}

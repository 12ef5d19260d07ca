package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.assistant.AssistantSessions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The computer agent's own drop of assistant sessions unused past their keepDays (guide §5), on a fake HOME. */
class ComputerAgentAssistantTest {
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final String OLD = "11111111-aaaa-4aaa-8aaa-000000000001";
    static final String RECENT = "22222222-aaaa-4aaa-8aaa-000000000002";

    @TempDir
    Path home;

    @Test
    void sessionsUnusedPastTheirKeepDaysAreDroppedAndTheOthersKept() throws Exception {
        Path state = home.resolve(".ensemble/computer-agent");
        Path projects = home.resolve(".claude/projects");
        Path old = projects.resolve("-w").resolve(OLD + ".jsonl");
        Path recent = projects.resolve("-w").resolve(RECENT + ".jsonl");
        Files.createDirectories(old.getParent());
        Files.writeString(old, "{}\n");
        Files.writeString(recent, "{}\n");
        Instant now = T.plus(Duration.ofDays(30));
        ImportConfig config = new ImportConfig("acct-ana", "laptop", Clock.fixed(now, ZoneOffset.UTC), state.resolve("import-state.json"));
        ComputerAgent agent = new ComputerAgent("unused:9092", config, AgentStores.underHome(home), Duration.ofSeconds(5), ImportProgress.NONE);
        assertThat(agent.assistantState()).isEqualTo(state.toAbsolutePath().normalize());

        agent.dropExpiredAssistantSessions();
        assertThat(state).as("no store yet: nothing is made").doesNotExist();

        try (AssistantSessions s = AssistantSessions.open(state, config.clock())) {
            // 30 days unused (the default) is due; 29 days is not; keepDays 0 is never
            s.put(new AssistantSessions.Entry("old", "claude-code", OLD, null, List.of(), s.makeChatFolder("old").toString(), null, 2, 1, null,
                    "laptop", T, List.of()));
            s.put(new AssistantSessions.Entry("recent", "claude-code", RECENT, null, List.of(), null, null, 2, 1, null, "laptop",
                    T.plus(Duration.ofDays(1)), List.of()));
            s.put(new AssistantSessions.Entry("kept", "antigravity", "ag-1", null, List.of(), null, 0, 2, 1, null, "laptop",
                    T.minus(Duration.ofDays(400)), List.of()));
        }
        agent.dropExpiredAssistantSessions();

        try (AssistantSessions s = AssistantSessions.open(state, config.clock())) {
            assertThat(s.all().keySet()).containsExactly("recent", "kept");
            assertThat(s.chatFolder("old")).doesNotExist();
        }
        assertThat(old).as("deleted from the agent").doesNotExist();
        assertThat(recent).exists();
    }
}

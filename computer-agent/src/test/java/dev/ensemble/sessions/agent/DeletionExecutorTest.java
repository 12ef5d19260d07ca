package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Which accepted deletions a computer carries out, and its answer. */
class DeletionExecutorTest {
    static final String SID = "aaaaaaaa-1111-4111-8111-000000000001";
    static final Instant NOW = Instant.parse("2026-11-02T09:00:00Z");

    static Event accepted(String account, String source, List<String> computers, String agent) {
        return Event.newBuilder().setEventId("e-" + source).setAccount(account).setSpace("web:s").setOccurredAt(NOW).setRecordedAt(NOW)
                .setSource(source).setPayload(SessionDeletionAccepted.newBuilder().setSessionId("job-1").setRequestId("req-1")
                        .setRunIds(List.of("job-1")).setComputerIds(computers).setAgentSessionIds(List.of(SID)).setAgent(agent).build())
                .build();
    }

    @Test
    void itDeletesOnlyWhatTheProjectorAcceptedForThisComputerAndAnswers(@TempDir Path home) throws Exception {
        Path projects = home.resolve("projects");
        Path transcript = projects.resolve("-w/" + SID + ".jsonl");
        Files.createDirectories(transcript.getParent());
        Files.writeString(transcript, "{}\n");
        ImportConfig config = new ImportConfig("acct-ana", "laptop", Clock.fixed(NOW, ZoneOffset.UTC), home.resolve("state.json"));
        DeletionExecutor x = new DeletionExecutor("unused:9092", config, new AgentStoreDeleter(List.of(projects), List.of()), e -> { });

        assertThat(x.handle(null)).as("a handover marker of the log (no value)").isNull();
        assertThat(x.handle(accepted("acct-ana", "service:projector", List.of("desk"), "claude-code"))).as("another computer").isNull();
        assertThat(x.handle(accepted("acct-bo", "service:projector", List.of("laptop"), "claude-code"))).as("another account").isNull();
        assertThat(x.handle(accepted("acct-ana", "person:ana", List.of("laptop"), "claude-code"))).as("not the guard's").isNull();
        assertThat(Files.exists(transcript)).isTrue();

        Event answer = x.handle(accepted("acct-ana", "service:projector", List.of("desk", "laptop"), "claude-code"));
        SessionDeletedOnComputer a = (SessionDeletedOnComputer) answer.getPayload();
        assertThat(a.getOk()).isTrue();
        assertThat(a.getComputerId()).isEqualTo("laptop");
        assertThat(a.getRequestId()).isEqualTo("req-1");
        assertThat(a.getRemovedPaths()).containsExactly(transcript.toString());
        assertThat(answer.getSource()).isEqualTo("computer:laptop");
        assertThat(Files.exists(transcript)).isFalse();

        Event again = x.handle(accepted("acct-ana", "service:projector", List.of("laptop"), "claude-code"));
        assertThat(again.getEventId()).as("the same request answers with the same id").isEqualTo(answer.getEventId());
        assertThat(((SessionDeletedOnComputer) again.getPayload()).getOk()).as("already gone counts as deleted").isTrue();

        Event unknownAgent = x.handle(accepted("acct-ana", "service:projector", List.of("laptop"), "antigravity"));
        assertThat(((SessionDeletedOnComputer) unknownAgent.getPayload()).getOk()).isFalse();
        assertThat(((SessionDeletedOnComputer) unknownAgent.getPayload()).getError()).contains("antigravity");
    }
}

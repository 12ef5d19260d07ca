package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.TaskFacts;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Events encoded with the first schema version and committed under {@code src/test/resources/samples/v1}.
 * {@link #main} wrote them; it is kept so the way they were made stays readable, and is never run by the
 * build.
 */
final class Samples {
    private Samples() {
    }

    static Event envelope(String id, Object payload) {
        return Event.newBuilder().setEventId(id).setAccount("acct-sample").setSpace("local:c1")
                .setOccurredAt(Instant.parse("2026-11-02T09:00:00Z")).setRecordedAt(Instant.parse("2026-11-02T09:00:01Z"))
                .setSource("computer:c1").setPayload(payload).build();
    }

    static Event engineEvent() {
        return envelope("e-engine", EngineEvent.newBuilder().setRunId("run-1").setAgentSessionId("sess-1")
                .setContextUsed(18000L).setContextSize(200000L).setModel(null).build());
    }

    static List<Event> all() {
        return List.of(
                envelope("e-claim", RunClaimed.newBuilder().setRunId("run-1").setComputerId("c1").setAgent("claude-code")
                        .setKind(RunKind.TASK_RUN).setFolder("/home/u/repo")
                        .setTask(TaskFacts.newBuilder().setTitle("Build the ranking API").setLabels(List.of("api")).build())
                        .build()),
                engineEvent(),
                envelope("e-done", RunStatusChanged.newBuilder().setRunId("run-1").setStatus(RunStatus.DONE)
                        .setReportSummary("done").setFilesChanged(List.of("a.java")).setTokens(10L).build()),
                envelope("e-computer", ComputerStatus.newBuilder().setComputerId("c1").setOnline(true)
                        .setCapabilities(Map.of("sessionDelete", 1)).build()));
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        List<Event> all = all();
        for (int i = 0; i < all.size(); i++) {
            Files.write(dir.resolve("event-" + i + ".bin"), serde.encode(all.get(i)));
        }
    }
}

package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.events.TaskFacts;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.file.Files;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * "Given events, expect views": drives the projector's real topology ({@link Projector#buildTopology()}) in a
 * TopologyTestDriver and keeps the newest view of each session.
 */
final class ChainFixture implements AutoCloseable {
    static final String ACCOUNT = "acct-ana";
    static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");

    final TopologyTestDriver driver;
    final TestInputTopic<String, Event> events;
    final TestOutputTopic<String, SessionView> views;
    final TestOutputTopic<byte[], byte[]> deadLetters;
    final Map<String, SessionView> latest = new HashMap<>();
    int emitted;

    ChainFixture() {
        try {
            driver = new TopologyTestDriver(Projector.buildTopology(), StreamsDefaults.properties("test-projector", "dummy:9092",
                    Files.createTempDirectory("ttd"), 1, Map.of()));
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        events = driver.createInputTopic(Topics.EVENTS.name(), new StringSerializer(), Topics.EVENTS.valueSerde().serializer());
        views = driver.createOutputTopic(Topics.SESSIONS_VIEW.name(), Topics.SESSIONS_VIEW.keySerde().deserializer(),
                Topics.SESSIONS_VIEW.valueSerde().deserializer());
        deadLetters = driver.createOutputTopic(Topics.DEAD_LETTER.name(), Topics.DEAD_LETTER.keySerde().deserializer(),
                Topics.DEAD_LETTER.valueSerde().deserializer());
    }

    ChainFixture given(Event... es) {
        for (Event e : es) {
            events.pipeInput(e.getAccount(), e);
            driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL); // the changed sessions' views are forwarded
        }
        drain();
        return this;
    }

    void drain() {
        for (var kv : views.readKeyValuesToList()) {
            latest.put(kv.key, kv.value);
            emitted++;
        }
    }

    SessionView session(String id) {
        return latest.get(Keys.of(ACCOUNT, id));
    }

    /** The session's whole view as the projector's state holds it now (published or not), or null. */
    SessionView stored(String key) {
        KeyValueStore<String, SessionView> views = driver.getKeyValueStore(StoreNames.SESSION_CHAINS);
        KeyValueStore<String, SessionFill> fills = driver.getKeyValueStore(StoreNames.SESSION_FILLS);
        KeyValueStore<String, RunRecord> runs = driver.getKeyValueStore(StoreNames.RUNS);
        return new SessionStore(views, fills, runs).get(key);
    }

    @Override
    public void close() {
        driver.close();
    }

    // ---- event builders -------------------------------------------------------------------------------

    static int seconds;

    static Event event(Object payload, Instant at) {
        return Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(ACCOUNT).setSpace("web:space-1")
                .setOccurredAt(at).setRecordedAt(at).setSource("computer:laptop").setPayload(payload).build();
    }

    static Instant at(int minute) {
        return T0.plusSeconds(60L * minute);
    }

    static Event claimed(String runId, String continueFrom, String title, int minute) {
        return event(RunClaimed.newBuilder().setRunId(runId).setTaskId("task-" + runId).setComputerId("laptop")
                .setAgent("claude-code").setModel("claude-sonnet-4-5").setFolder("/work/ranking").setKind(RunKind.TASK_RUN)
                .setContinueFromJobId(continueFrom)
                .setTask(TaskFacts.newBuilder().setTitle(title).build()).build(), at(minute));
    }

    static Event status(String runId, RunStatus status, int minute) {
        return event(RunStatusChanged.newBuilder().setRunId(runId).setStatus(status).build(), at(minute));
    }

    static Event done(String runId, String summary, List<String> files, int minute) {
        return event(RunStatusChanged.newBuilder().setRunId(runId).setStatus(RunStatus.DONE).setReportSummary(summary)
                .setFilesChanged(files).setTokens(1000L).setDurationMs(60_000L).build(), at(minute));
    }

    static Event engine(String runId, String agentSessionId, Long used, Long size, int minute) {
        return event(EngineEvent.newBuilder().setRunId(runId).setAgentSessionId(agentSessionId).setContextUsed(used)
                .setContextSize(size).build(), at(minute));
    }

    /**
     * A session deleted the only way there is (guide §6): its computer online and able to delete, a person's
     * request naming the runs they saw, the guard's acceptance, the computer's confirmation; SessionDeleted
     * follows from the projector.
     */
    static Event[] deleted(String sessionId, List<String> runIds, int minute) {
        Event online = event(ComputerStatus.newBuilder().setComputerId("laptop").setOnline(true)
                .setCapabilities(Map.of("sessionDelete", 1)).build(), at(minute));
        Event request = event(SessionDeletionRequested.newBuilder().setSessionId(sessionId).setRequestedBy(Requester.person)
                .setRequesterId("ana").setReason("person").setRunIds(runIds).build(), at(minute));
        Event answer = event(SessionDeletedOnComputer.newBuilder().setSessionId(sessionId).setRequestId(request.getEventId())
                .setComputerId("laptop").setOk(true).build(), at(minute));
        return new Event[]{online, request, answer};
    }
}

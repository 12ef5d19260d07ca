package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.events.TaskChanged;
import dev.ensemble.sessions.events.TaskFacts;
import dev.ensemble.sessions.events.TaskStatus;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * "Given events, when a request, expect events": the projector's real topology in a TopologyTestDriver, with
 * every output kept — the newest session, retirement and audit views, the decisions it appended to the log,
 * and the dead letters.
 */
final class DeletionFixture implements AutoCloseable {
    static final String ACCOUNT = "acct-ana";
    static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");

    final TopologyTestDriver driver;
    final TestInputTopic<String, Event> events;
    final TestOutputTopic<String, Event> log;
    final TestOutputTopic<String, SessionView> sessionsOut;
    final TestOutputTopic<String, RetirementView> retirementOut;
    final TestOutputTopic<String, DeletionAudit> auditOut;
    final TestOutputTopic<byte[], byte[]> deadOut;
    final TestOutputTopic<String, dev.ensemble.sessions.views.ConversationView> assistantOut;
    /** The newest conversation views published, by key. */
    final Map<String, dev.ensemble.sessions.views.ConversationView> conversations = new HashMap<>();
    final Map<String, SessionView> sessions = new HashMap<>();
    final Map<String, RetirementView> retirement = new HashMap<>();
    final Map<String, DeletionAudit> audits = new HashMap<>();
    /** Every event the projector appended to the log, in order. */
    final List<Event> appended = new ArrayList<>();
    final List<byte[]> dead = new ArrayList<>();
    /** The reason of each dead letter (header {@code __streams.errors.message}), in order. */
    final List<String> deadReasons = new ArrayList<>();
    /** Every event piped in, in order (the log as the test wrote it). */
    final List<Event> piped = new ArrayList<>();

    /** The registry the projector counts its deletion outcomes into. */
    final io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();

    /** How many deletions had {@code outcome} (and {@code reason}), as the projector counted them. */
    double counted(String outcome, String reason) {
        var c = meters.find(DeletionWorkflow.DELETIONS).tags("outcome", outcome, "reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    DeletionFixture() {
        this(RetirementRules.Config.defaults());
    }

    DeletionFixture(RetirementRules.Config rules) {
        try {
            driver = new TopologyTestDriver(Projector.buildTopology(rules), dev.ensemble.sessions.streams.ServiceMeters.withRegistry(
                    StreamsDefaults.properties("test-projector", "dummy:9092", Files.createTempDirectory("ttd"), 1, Map.of()), meters));
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        events = driver.createInputTopic(Topics.EVENTS.name(), new StringSerializer(), Topics.EVENTS.valueSerde().serializer());
        log = driver.createOutputTopic(Topics.EVENTS.name(), Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer());
        sessionsOut = driver.createOutputTopic(Topics.SESSIONS_VIEW.name(), Topics.SESSIONS_VIEW.keySerde().deserializer(),
                Topics.SESSIONS_VIEW.valueSerde().deserializer());
        retirementOut = driver.createOutputTopic(Topics.RETIREMENT_VIEW.name(), Topics.RETIREMENT_VIEW.keySerde().deserializer(),
                Topics.RETIREMENT_VIEW.valueSerde().deserializer());
        auditOut = driver.createOutputTopic(Topics.DELETION_AUDIT.name(), Topics.DELETION_AUDIT.keySerde().deserializer(),
                Topics.DELETION_AUDIT.valueSerde().deserializer());
        assistantOut = driver.createOutputTopic(Topics.ASSISTANT_VIEW.name(), Topics.ASSISTANT_VIEW.keySerde().deserializer(),
                Topics.ASSISTANT_VIEW.valueSerde().deserializer());
        deadOut = driver.createOutputTopic(Topics.DEAD_LETTER.name(), Topics.DEAD_LETTER.keySerde().deserializer(),
                Topics.DEAD_LETTER.valueSerde().deserializer());
    }

    DeletionFixture given(Event... es) {
        for (Event e : es) {
            piped.add(e);
            events.pipeInput(e.getAccount(), e, e.getRecordedAt());
            driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL); // the changed sessions' views are forwarded
            drain();
        }
        return this;
    }

    void drain() {
        for (var kv : sessionsOut.readKeyValuesToList()) {
            sessions.merge(kv.key, kv.value, (a, b) -> b.getSequence() > a.getSequence() ? b : a);
        }
        for (var kv : retirementOut.readKeyValuesToList()) {
            retirement.merge(kv.key, kv.value, (a, b) -> b.getSequence() > a.getSequence() ? b : a);
        }
        for (var kv : auditOut.readKeyValuesToList()) {
            audits.merge(kv.key, kv.value, (a, b) -> b.getSequence() > a.getSequence() ? b : a);
        }
        for (var kv : log.readKeyValuesToList()) {
            if (DeletionWorkflow.SOURCE.equals(kv.value.getSource())) {
                appended.add(kv.value);
            }
        }
        for (var kv : assistantOut.readKeyValuesToList()) {
            conversations.merge(kv.key, kv.value, (a, b) -> b.getSequence() > a.getSequence() ? b : a);
        }
        for (var r : deadOut.readRecordsToList()) {
            dead.add(r.value());
            var h = r.headers().lastHeader("__streams.errors.message");
            deadReasons.add(h == null ? "" : new String(h.value(), java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    SessionView session(String id) {
        return sessions.get(Keys.of(ACCOUNT, id));
    }

    RetirementView retirement(String id) {
        return retirement.get(Keys.of(ACCOUNT, id));
    }

    dev.ensemble.sessions.views.ConversationView conversation(String key) {
        return conversations.get(Keys.of(ACCOUNT, key));
    }

    DeletionAudit audit(String requestId) {
        return audits.get(Keys.of(ACCOUNT, requestId));
    }

    /** The payloads the projector appended, of one type. */
    <T> List<T> appended(Class<T> type) {
        return appended.stream().map(Event::getPayload).filter(type::isInstance).map(type::cast).toList();
    }

    @Override
    public void close() {
        driver.close();
    }

    // ---- event builders -------------------------------------------------------------------------------

    static Instant at(Duration d) {
        return T0.plus(d);
    }

    static Instant min(long minutes) {
        return T0.plusSeconds(60 * minutes);
    }

    static Event event(Object payload, Instant at, String source) {
        return Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(ACCOUNT).setSpace("web:space-1")
                .setOccurredAt(at).setRecordedAt(at).setSource(source).setPayload(payload).build();
    }

    static Event claimed(String runId, String continueFrom, String taskId, String computer, Instant at) {
        return claimed(runId, continueFrom, taskId, computer, RunKind.TASK_RUN, null, null, at);
    }

    static Event claimed(String runId, String continueFrom, String taskId, String computer, RunKind kind, String sourceRef,
                         Integer keepDays, Instant at) {
        return event(RunClaimed.newBuilder().setRunId(runId).setTaskId(taskId).setComputerId(computer).setAgent("claude-code")
                .setFolder("/work/ranking").setKind(kind).setContinueFromJobId(continueFrom).setSourceRef(sourceRef)
                .setKeepDays(keepDays).setTask(taskId == null ? null : TaskFacts.newBuilder().setTitle("Task " + taskId).build())
                .build(), at, "computer:" + computer);
    }

    static Event status(String runId, RunStatus status, Instant at) {
        return event(RunStatusChanged.newBuilder().setRunId(runId).setStatus(status).build(), at, "computer:laptop");
    }

    static Event engine(String runId, String agentSessionId, Instant at) {
        return event(dev.ensemble.sessions.events.EngineEvent.newBuilder().setRunId(runId).setAgentSessionId(agentSessionId).build(),
                at, "computer:laptop");
    }

    static Event task(String taskId, TaskStatus status, boolean pinned, Instant at) {
        return event(TaskChanged.newBuilder().setTaskId(taskId).setStatus(status).setPinned(pinned)
                .setCompletedAt(status == TaskStatus.DONE || status == TaskStatus.DROPPED ? at : null)
                .setDeletedAt(status == TaskStatus.DELETED ? at : null).build(), at, "person:ana");
    }

    static Event computer(String id, boolean online, int sessionDelete, Instant at) {
        return event(ComputerStatus.newBuilder().setComputerId(id).setOnline(online).setCapabilities(Map.of("sessionDelete", sessionDelete))
                .build(), at, "computer:" + id);
    }

    static Event request(String sessionId, Requester by, String requester, String reason, List<String> runIds, Instant at) {
        return request(sessionId, by, requester, reason, runIds, null, at);
    }

    static Event request(String sessionId, Requester by, String requester, String reason, List<String> runIds, String confirmedBy,
                         Instant at) {
        return event(SessionDeletionRequested.newBuilder().setSessionId(sessionId).setRequestedBy(by).setRequesterId(requester)
                .setReason(reason).setRunIds(runIds).setConfirmedBy(confirmedBy).build(), at,
                by == Requester.system ? "service:cleanup" : by.name() + ":" + requester);
    }

    static Event answer(String sessionId, String requestId, String computer, boolean ok, String error, Instant at) {
        return event(SessionDeletedOnComputer.newBuilder().setSessionId(sessionId).setRequestId(requestId).setComputerId(computer)
                .setOk(ok).setError(error).build(), at, "computer:" + computer);
    }
}

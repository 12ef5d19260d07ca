package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.events.SessionDeletionSkipped;
import dev.ensemble.sessions.events.TaskChanged;
import dev.ensemble.sessions.events.TaskFacts;
import dev.ensemble.sessions.events.TaskStatus;
import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionAuditAnswer;
import dev.ensemble.sessions.views.RetirementView;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random histories of runs, tasks, engine events, computers going offline and online, deletions by people and
 * nodes, answers and sweeps, interleaved, through the projector's and the cleanup's real topologies (each in a
 * TopologyTestDriver, wired as the topics wire them). Invariants (guide §6):
 * <ol>
 *   <li>no deletion is accepted unless, at that point of the log, the session had exactly the runs it names,
 *       none going, every computer asked online and able to delete, and — for a retirement — every task
 *       retired at the request's time (checked against a model kept by this test, not by the projector);</li>
 *   <li>no session is deleted without every computer asked having confirmed, and every deletion has its whole
 *       audit trail: the request, the guard's decision, each computer's answer, the times;</li>
 *   <li>replaying the same log into a fresh projector decides the same and deletes the same sessions.</li>
 * </ol>
 */
class DeletionPropertiesTest {
    static final String ACCOUNT = "acct-ana";
    static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");
    static final List<String> COMPUTERS = List.of("laptop", "desk");
    static final List<String> TASKS = List.of("t1", "t2", "t3");
    /** Sweeps every 3 hours here (15 minutes in production) so that days pass in few steps of the drivers. */
    static final Duration SWEEP = Duration.ofHours(3);

    // ---- steps ---------------------------------------------------------------------------------------

    sealed interface Step {
    }

    record NewSession(int computer, int task, boolean node, RunStatus then) implements Step {
    }

    record Continue(int run, int computer, int task, boolean asNode, RunStatus then) implements Step {
    }

    record Status(int run, RunStatus status) implements Step {
    }

    record Engine(int run) implements Step {
    }

    record TaskState(int task, TaskStatus status, boolean pinned) implements Step {
    }

    record Computer(int computer, boolean online, int sessionDelete) implements Step {
    }

    record Advance(int minutes) implements Step {
    }

    record PersonDelete(int session, boolean stale) implements Step {
    }

    record NodeDelete(int session, boolean confirmed, boolean own) implements Step {
    }

    record Answer(boolean failFirst) implements Step {
    }

    record SweepNow() implements Step {
    }

    @Provide
    Arbitrary<List<Step>> histories() {
        Arbitrary<Integer> idx = Arbitraries.integers().between(0, 50);
        Arbitrary<Integer> comp = Arbitraries.integers().between(0, COMPUTERS.size() - 1);
        // a run without a task (index TASKS.size()) never retires: rare, so that retirement happens
        Arbitrary<Integer> task = Arbitraries.frequency(net.jqwik.api.Tuple.of(9, 0), net.jqwik.api.Tuple.of(9, 1),
                net.jqwik.api.Tuple.of(9, 2), net.jqwik.api.Tuple.of(2, TASKS.size()));
        // most runs end soon after they are claimed; some stay going or queued
        Arbitrary<RunStatus> end = Arbitraries.frequency(net.jqwik.api.Tuple.of(12, RunStatus.DONE), net.jqwik.api.Tuple.of(2, RunStatus.FAILED),
                net.jqwik.api.Tuple.of(2, RunStatus.WORKING), net.jqwik.api.Tuple.of(1, RunStatus.WAITING),
                net.jqwik.api.Tuple.of(1, RunStatus.QUEUED));
        Arbitrary<Step> step = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, Combinators.combine(comp, task, Arbitraries.of(true, false, false, false), end).as(NewSession::new)),
                net.jqwik.api.Tuple.of(4, Combinators.combine(idx, comp, task, Arbitraries.of(true, false), end).as(Continue::new)),
                net.jqwik.api.Tuple.of(3, Combinators.combine(idx, Arbitraries.of(RunStatus.WORKING, RunStatus.WAITING,
                        RunStatus.QUEUED, RunStatus.DONE, RunStatus.DONE, RunStatus.FAILED)).as(Status::new)),
                net.jqwik.api.Tuple.of(2, idx.map(Engine::new)),
                net.jqwik.api.Tuple.of(6, Combinators.combine(Arbitraries.integers().between(0, TASKS.size() - 1),
                        Arbitraries.of(TaskStatus.OPEN, TaskStatus.DONE, TaskStatus.DONE, TaskStatus.DROPPED, TaskStatus.DELETED,
                                TaskStatus.DELETED), Arbitraries.of(false, false, false, false, true)).as(TaskState::new)),
                net.jqwik.api.Tuple.of(2, Combinators.combine(comp, Arbitraries.of(true, true, false), Arbitraries.of(1, 1, 1, 0))
                        .as(Computer::new)),
                net.jqwik.api.Tuple.of(5, Arbitraries.of(1, 5, 9, 11, 30, 90, 6 * 60, 26 * 60, 3 * 24 * 60, 8 * 24 * 60).map(Advance::new)),
                net.jqwik.api.Tuple.of(4, Combinators.combine(idx, Arbitraries.of(false, false, false, true)).as(PersonDelete::new)),
                net.jqwik.api.Tuple.of(2, Combinators.combine(idx, Arbitraries.of(true, true, false), Arbitraries.of(true, true, false))
                        .as(NodeDelete::new)),
                net.jqwik.api.Tuple.of(6, Arbitraries.of(false, false, false, true).map(Answer::new)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new SweepNow())));
        return step.list().ofMinSize(15).ofMaxSize(60);
    }

    @Property(tries = 40)
    void deletionsAreOnlyEverRightCompleteAndReplayable(@ForAll("histories") List<Step> steps) throws Exception {
        List<Event> log;
        Map<String, String> decisions;
        Set<String> deletedSessions;
        try (World w = new World()) {
            w.start();
            for (Step s : steps) {
                w.apply(s);
            }
            w.checkAuditTrails();
            assertThat(w.dead).as("nothing the simulation sends is refused").isEmpty();
            net.jqwik.api.statistics.Statistics.label("accepted").collect(bucket(w.decisions, "SessionDeletionAccepted"));
            net.jqwik.api.statistics.Statistics.label("skipped").collect(bucket(w.decisions, "SessionDeletionSkipped"));
            net.jqwik.api.statistics.Statistics.label("deleted").collect(bucket(w.decisions, "SessionDeleted"));
            for (DeletionAudit a : w.audits.values()) {
                net.jqwik.api.statistics.Statistics.label("decisions").collect(a.getRequestedBy() + " " + a.getReason() + " → "
                        + (a.getSkipReason() == null ? "accepted" : a.getSkipReason()));
            }
            net.jqwik.api.statistics.Statistics.label("by the sweeps").collect(w.requests.values().stream()
                    .anyMatch(r -> r.getRequestedBy() == Requester.system) ? "some" : "none");
            log = w.log;
            decisions = w.decisions;
            deletedSessions = w.deletedSessions;
        }
        try (World replay = new World()) {
            for (Event e : log) {
                if (!"service:projector".equals(e.getSource())) {
                    replay.model(e);
                }
                replay.projectorInput(e);
            }
            assertThat(replay.decisions).as("the same log decides the same").isEqualTo(decisions);
            assertThat(replay.deletedSessions).isEqualTo(deletedSessions);
            assertThat(replay.dead).as("nothing of the log is refused on replay").isEmpty();
        }
    }

    // ---- the world: two topologies wired by topics, and a model of what the test sent ----------------

    static final class World implements AutoCloseable {
        final TopologyTestDriver projector;
        final TopologyTestDriver cleanup;
        final TestInputTopic<String, Event> events;
        final TestOutputTopic<String, Event> appendedOut;
        final TestOutputTopic<String, RetirementView> retirementOut;
        final TestOutputTopic<String, DeletionAudit> auditOut;
        final TestOutputTopic<byte[], byte[]> deadOut;
        final TestInputTopic<String, RetirementView> cleanupViews;
        final TestInputTopic<String, dev.ensemble.sessions.commands.CleanupCommand> commands;
        final TestOutputTopic<String, Event> requestsOut;

        Instant now = T0;
        int seq;
        /** The log in the order the projector read it: each input, then the decisions it appended. */
        final List<Event> log = new ArrayList<>();
        /** eventId → type of every decision the projector appended. */
        final Map<String, String> decisions = new LinkedHashMap<>();
        final Set<String> deletedSessions = new HashSet<>();
        final Map<String, DeletionAudit> audits = new HashMap<>();
        final List<byte[]> dead = new ArrayList<>();
        final Map<String, SessionDeletionRequested> requests = new HashMap<>();
        final Map<String, Instant> requestTimes = new HashMap<>();

        // the model
        final Map<String, ModelRun> runs = new LinkedHashMap<>();
        final Map<String, List<String>> sessionRuns = new LinkedHashMap<>();
        final Map<String, String> sessionSource = new HashMap<>();
        final Set<String> deleting = new HashSet<>();
        final Map<String, TaskChanged> tasks = new HashMap<>();
        final Map<String, Instant> taskChangedAt = new HashMap<>();
        final Map<String, ComputerStatus> computers = new HashMap<>();
        /** Accepted deletions' computers that have not answered yet: requestId → session and computers. */
        final Map<String, Map.Entry<String, List<String>>> pendingAsks = new LinkedHashMap<>();
        /** For each session, the computers asked and those that confirmed, over every attempt. */
        final Map<String, Set<String>> asked = new HashMap<>();
        final Map<String, Set<String>> confirmed = new HashMap<>();

        World() throws Exception {
            projector = new TopologyTestDriver(Projector.buildTopology(dev.ensemble.sessions.projector.RetirementRules.Config.defaults(), true), StreamsDefaults.properties("prop-projector", "dummy:9092",
                    Files.createTempDirectory("prop-p"), 1, Map.of()), T0);
            cleanup = new TopologyTestDriver(CleanupTopology.build(CleanupConfig.defaults().withSweepInterval(SWEEP), true), StreamsDefaults.properties("prop-cleanup",
                    "dummy:9092", Files.createTempDirectory("prop-c"), 1, Map.of()), T0);
            events = projector.createInputTopic(Topics.EVENTS.name(), new StringSerializer(), Topics.EVENTS.valueSerde().serializer());
            appendedOut = projector.createOutputTopic(Topics.EVENTS.name(), Topics.EVENTS.keySerde().deserializer(),
                    Topics.EVENTS.valueSerde().deserializer());
            retirementOut = projector.createOutputTopic(Topics.RETIREMENT_VIEW.name(), Topics.RETIREMENT_VIEW.keySerde().deserializer(),
                    Topics.RETIREMENT_VIEW.valueSerde().deserializer());
            auditOut = projector.createOutputTopic(Topics.DELETION_AUDIT.name(), Topics.DELETION_AUDIT.keySerde().deserializer(),
                    Topics.DELETION_AUDIT.valueSerde().deserializer());
            deadOut = projector.createOutputTopic(Topics.DEAD_LETTER.name(), Topics.DEAD_LETTER.keySerde().deserializer(),
                    Topics.DEAD_LETTER.valueSerde().deserializer());
            cleanupViews = cleanup.createInputTopic(Topics.RETIREMENT_VIEW.name(), Topics.RETIREMENT_VIEW.keySerde().serializer(),
                    Topics.RETIREMENT_VIEW.valueSerde().serializer());
            commands = cleanup.createInputTopic(Topics.CLEANUP_COMMANDS.name(), Topics.CLEANUP_COMMANDS.keySerde().serializer(),
                    Topics.CLEANUP_COMMANDS.valueSerde().serializer());
            requestsOut = cleanup.createOutputTopic(Topics.EVENTS.name(), Topics.EVENTS.keySerde().deserializer(),
                    Topics.EVENTS.valueSerde().deserializer());
        }

        void start() {
            for (String c : COMPUTERS) {
                send(ComputerStatus.newBuilder().setComputerId(c).setOnline(true).setCapabilities(Map.of("sessionDelete", 1)).build(), "computer:" + c);
            }
        }

        Event event(Object payload, String source) {
            String id = new UUID(0x5EED, ++seq).toString();
            return Event.newBuilder().setEventId(id).setAccount(ACCOUNT).setSpace("web:space-1").setOccurredAt(now)
                    .setRecordedAt(now).setSource(source).setPayload(payload).build();
        }

        void send(Object payload, String source) {
            Event e = event(payload, source);
            model(e);
            projectorInput(e);
            afterProjector();
        }

        /** One event into the projector; its decisions are read and checked against the model as of now. */
        void projectorInput(Event e) {
            log.add(e);
            if (e.getPayload() instanceof SessionDeletionRequested r) {
                requests.put(e.getEventId(), r);
                requestTimes.put(e.getEventId(), e.getOccurredAt());
            }
            events.pipeInput(e.getAccount(), e, e.getRecordedAt());
            projector.advanceWallClockTime(dev.ensemble.sessions.projector.Projector.VIEW_EMIT_INTERVAL); // views forwarded
            for (var kv : appendedOut.readKeyValuesToList()) {
                Event d = kv.value;
                if (!"service:projector".equals(d.getSource())) {
                    continue;
                }
                log.add(d);
                decisions.putIfAbsent(d.getEventId(), d.getPayload().getClass().getSimpleName());
                if (d.getPayload() instanceof SessionDeletionAccepted a) {
                    onAccepted(a);
                } else if (d.getPayload() instanceof SessionDeleted del) {
                    onDeleted(del);
                } else if (d.getPayload() instanceof SessionDeletionSkipped) {
                    // nothing changes
                }
            }
            for (var kv : auditOut.readKeyValuesToList()) {
                audits.merge(kv.key, kv.value, (a, b) -> b.getSequence() > a.getSequence() ? b : a);
            }
            for (var kv : deadOut.readKeyValuesToList()) {
                dead.add(kv.value);
            }
        }

        void afterProjector() {
            for (var kv : retirementOut.readKeyValuesToList()) {
                cleanupViews.pipeInput(kv.key, kv.value);
            }
            drainRequests();
        }

        void drainRequests() {
            for (var kv : requestsOut.readKeyValuesToList()) {
                Event r = kv.value;
                projectorInput(r);
                for (var v : retirementOut.readKeyValuesToList()) {
                    cleanupViews.pipeInput(v.key, v.value);
                }
            }
        }

        // ---- invariant 1: at the moment of acceptance ---------------------------------------------

        void onAccepted(SessionDeletionAccepted a) {
            String sid = a.getSessionId();
            SessionDeletionRequested r = requests.get(a.getRequestId());
            Instant at = requestTimes.get(a.getRequestId());
            assertThat(r).as("an accepted deletion answers a request in the log").isNotNull();
            assertThat(Set.copyOf(a.getRunIds())).as("accepted with exactly the runs of the session")
                    .isEqualTo(Set.copyOf(sessionRuns.get(sid)));
            assertThat(Set.copyOf(r.getRunIds())).as("and exactly the runs the requester saw").isEqualTo(Set.copyOf(sessionRuns.get(sid)));
            for (String run : sessionRuns.get(sid)) {
                String st = runs.get(run).status;
                assertThat(st).as("run %s of %s going when its deletion was accepted", run, sid).isNotIn("WORKING", "WAITING");
            }
            for (String c : a.getComputerIds()) {
                ComputerStatus cs = computers.get(c);
                assertThat(cs != null && cs.getOnline() && cs.getCapabilities().getOrDefault("sessionDelete", 0) >= 1)
                        .as("computer %s online and able to delete", c).isTrue();
            }
            boolean retry = deleting.contains(sid);
            if (!retry && "retired".equals(r.getReason())) {
                for (String run : sessionRuns.get(sid)) {
                    String task = runs.get(run).taskId;
                    assertThat(task).as("a run without a task is never retired").isNotNull();
                    assertThat(retired(task, at)).as("task %s of %s retired at %s", task, sid, at).isTrue();
                }
            }
            if (!retry && "node-idle".equals(r.getReason())) {
                assertThat(sessionSource.get(sid)).startsWith("node:");
                for (String run : sessionRuns.get(sid)) {
                    ModelRun m = runs.get(run);
                    assertThat(m.lastActivity().plus(Duration.ofDays(7))).as("no run started or finished in 7 days").isBeforeOrEqualTo(at);
                    if (m.sourceRef == null) {
                        TaskChanged t = m.taskId == null ? null : tasks.get(m.taskId);
                        assertThat(t != null && t.getStatus() != TaskStatus.OPEN).as("no person's open task keeps it (%s)", m.taskId).isTrue();
                    }
                }
            }
            if ("node".equals(r.getRequestedBy().name())) {
                assertThat(sessionSource.get(sid)).isEqualTo("node:" + r.getRequesterId());
                assertThat(r.getConfirmedBy()).isNotBlank();
            }
            deleting.add(sid);
            for (String run : sessionRuns.get(sid)) {
                if ("QUEUED".equals(runs.get(run).status)) {
                    runs.get(run).status = "CANCELLED";
                    runs.get(run).endedAt = now;
                }
            }
            pendingAsks.put(a.getRequestId(), Map.entry(sid, new ArrayList<>(a.getComputerIds())));
            asked.computeIfAbsent(sid, k -> new HashSet<>()).addAll(a.getComputerIds());
        }

        boolean retired(String taskId, Instant at) {
            TaskChanged t = tasks.get(taskId);
            if (t == null) {
                return false;
            }
            Instant changed = taskChangedAt.get(taskId);
            return switch (t.getStatus()) {
                case DELETED -> !at.isBefore(changed.plus(Duration.ofMinutes(10)));
                case DONE, DROPPED -> !t.getPinned() && at.isAfter(changed.plus(Duration.ofDays(7)));
                default -> false;
            };
        }

        void onDeleted(SessionDeleted d) {
            String sid = d.getSessionId();
            assertThat(confirmed.getOrDefault(sid, Set.of())).as("every computer asked confirmed before %s was deleted", sid)
                    .containsAll(asked.get(sid));
            deletedSessions.add(sid);
        }

        // ---- invariant 2: every deletion's audit trail ---------------------------------------------

        void checkAuditTrails() {
            for (String requestId : requests.keySet()) {
                DeletionAudit a = audits.get(Keys.of(ACCOUNT, requestId));
                assertThat(a).as("every request has its audit record").isNotNull();
                assertThat(a.getDecision()).isIn("ACCEPTED", "SKIPPED");
                assertThat(decisions).as("and its decision in the log").containsKey(a.getDecisionEventId());
                assertThat(a.getRequestedAt()).isEqualTo(requestTimes.get(requestId));
            }
            for (String sid : deletedSessions) {
                List<DeletionAudit> trail = audits.values().stream().filter(a -> a.getSessionId().equals(sid) && "ACCEPTED".equals(a.getDecision()))
                        .toList();
                assertThat(trail).as("the accepted requests of deleted %s", sid).isNotEmpty();
                Set<String> okFrom = new HashSet<>();
                for (DeletionAudit a : trail) {
                    assertThat(a.getStatus()).isEqualTo("DELETED");
                    assertThat(a.getDeletedAt()).isNotNull();
                    assertThat(a.getGuard().getGoingRunIds()).as("the guard saw no run going").isEmpty();
                    assertThat(a.getComputersAsked()).isNotEmpty();
                    for (DeletionAuditAnswer ans : a.getAnswers()) {
                        if (ans.getOk()) {
                            okFrom.add(ans.getComputerId());
                        }
                    }
                }
                Set<String> askedAll = new HashSet<>();
                trail.forEach(a -> askedAll.addAll(a.getComputersAsked()));
                assertThat(okFrom).as("every computer's answer is in the audit").containsAll(askedAll);
            }
        }

        // ---- the model of what was sent ------------------------------------------------------------

        static final class ModelRun {
            String sessionId;
            String taskId;
            String sourceRef;
            String status = "WORKING";
            Instant claimedAt;
            Instant startedAt;
            Instant endedAt;

            Instant lastActivity() {
                Instant t = claimedAt;
                if (startedAt != null && startedAt.isAfter(t)) {
                    t = startedAt;
                }
                return endedAt != null && endedAt.isAfter(t) ? endedAt : t;
            }
        }

        void model(Event e) {
            Object p = e.getPayload();
            if (p instanceof RunClaimed rc) {
                ModelRun m = new ModelRun();
                m.taskId = rc.getTaskId();
                m.sourceRef = rc.getSourceRef();
                m.claimedAt = e.getOccurredAt();
                String parent = rc.getContinueFromJobId();
                String sid = parent == null ? rc.getRunId() : runs.get(parent).sessionId;
                if (parent != null && deleting.contains(sid)) {
                    sid = rc.getRunId(); // a deleted session keeps only its own runs
                }
                if (!sessionRuns.containsKey(sid)) {
                    sessionRuns.put(sid, new ArrayList<>());
                    sessionSource.put(sid, rc.getSourceRef());
                }
                boolean going = sessionRuns.get(sid).stream().anyMatch(r -> List.of("WORKING", "WAITING", "QUEUED").contains(runs.get(r).status));
                m.status = going ? "QUEUED" : "WORKING";
                m.sessionId = sid;
                sessionRuns.get(sid).add(rc.getRunId());
                runs.put(rc.getRunId(), m);
            } else if (p instanceof RunStatusChanged rs) {
                ModelRun m = runs.get(rs.getRunId());
                boolean ended = List.of("DONE", "FAILED", "CANCELLED").contains(m.status);
                boolean ending = List.of(RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED).contains(rs.getStatus());
                if (ended && !ending) {
                    return;
                }
                m.status = rs.getStatus().name();
                if (rs.getStatus() == RunStatus.WORKING && m.startedAt == null) {
                    m.startedAt = e.getOccurredAt();
                }
                if (ending) {
                    m.endedAt = e.getOccurredAt();
                }
            } else if (p instanceof TaskChanged tc) {
                tasks.put(tc.getTaskId(), tc);
                taskChangedAt.put(tc.getTaskId(), e.getOccurredAt());
            } else if (p instanceof ComputerStatus cs) {
                computers.put(cs.getComputerId(), cs);
            } else if (p instanceof SessionDeletedOnComputer a && a.getOk()) {
                confirmed.computeIfAbsent(a.getSessionId(), k -> new HashSet<>()).add(a.getComputerId());
            }
        }

        /** A run: the newest ones more often (half the picks are among the last three). */
        String runAt(int i) {
            List<String> ids = new ArrayList<>(runs.keySet());
            if (ids.isEmpty()) {
                return null;
            }
            return i % 2 == 0 ? ids.get(ids.size() - 1 - (i / 2) % Math.min(3, ids.size())) : ids.get(i % ids.size());
        }

        String sessionAt(int i) {
            List<String> ids = new ArrayList<>(sessionRuns.keySet());
            return ids.isEmpty() ? null : ids.get(i % ids.size());
        }

        void apply(Step s) {
            if (s instanceof NewSession n) {
                claim(null, n.computer(), n.task(), n.node(), n.then());
            } else if (s instanceof Continue c) {
                String parent = runAt(c.run());
                if (parent != null) {
                    claim(parent, c.computer(), c.task(), c.asNode(), c.then());
                }
            } else if (s instanceof Status st) {
                String run = runAt(st.run());
                if (run != null) {
                    send(RunStatusChanged.newBuilder().setRunId(run).setStatus(st.status()).build(), "computer:laptop");
                }
            } else if (s instanceof Engine en) {
                String run = runAt(en.run());
                if (run != null) {
                    send(EngineEvent.newBuilder().setRunId(run).setAgentSessionId("agent-" + run).build(), "computer:laptop");
                }
            } else if (s instanceof TaskState t) {
                send(TaskChanged.newBuilder().setTaskId(TASKS.get(t.task())).setStatus(t.status()).setPinned(t.pinned())
                        .setCompletedAt(t.status() == TaskStatus.DONE || t.status() == TaskStatus.DROPPED ? now : null)
                        .setDeletedAt(t.status() == TaskStatus.DELETED ? now : null).build(), "person:ana");
            } else if (s instanceof Computer c) {
                send(ComputerStatus.newBuilder().setComputerId(COMPUTERS.get(c.computer())).setOnline(c.online())
                        .setCapabilities(Map.of("sessionDelete", c.sessionDelete())).build(), "computer:" + COMPUTERS.get(c.computer()));
            } else if (s instanceof Advance a) {
                advance(Duration.ofMinutes(a.minutes()));
            } else if (s instanceof PersonDelete d) {
                String sid = sessionAt(d.session());
                if (sid != null) {
                    List<String> saw = new ArrayList<>(sessionRuns.get(sid));
                    if (d.stale() && saw.size() > 1) {
                        saw.remove(saw.size() - 1);
                    }
                    send(SessionDeletionRequested.newBuilder().setSessionId(sid).setRequestedBy(Requester.person).setRequesterId("ana")
                            .setReason("person").setRunIds(saw).build(), "person:ana");
                }
            } else if (s instanceof NodeDelete d) {
                String sid = sessionAt(d.session());
                if (sid != null) {
                    send(SessionDeletionRequested.newBuilder().setSessionId(sid).setRequestedBy(Requester.node)
                            .setRequesterId(d.own() ? "n1" : "n2").setReason("node").setConfirmedBy(d.confirmed() ? "ana" : null)
                            .setRunIds(new ArrayList<>(sessionRuns.get(sid))).build(), "node:" + (d.own() ? "n1" : "n2"));
                }
            } else if (s instanceof Answer a) {
                answer(a.failFirst());
            } else if (s instanceof SweepNow) {
                commands.pipeInput(ACCOUNT, dev.ensemble.sessions.commands.CleanupCommand.newBuilder().setCommandId("c" + seq)
                        .setAccount(ACCOUNT).setRequestedBy("admin").setRequestedAt(now).build());
                drainRequests();
            }
        }

        void claim(String parent, int computer, int task, boolean node, RunStatus then) {
            String runId = "run-" + (runs.size() + 1);
            String taskId = task < TASKS.size() ? TASKS.get(task) : null;
            send(RunClaimed.newBuilder().setRunId(runId).setTaskId(taskId).setComputerId(COMPUTERS.get(computer)).setAgent("claude-code")
                    .setKind(RunKind.TASK_RUN).setContinueFromJobId(parent).setSourceRef(node ? "node:n1" : null)
                    .setTask(taskId == null ? null : TaskFacts.newBuilder().setTitle("Task " + taskId).build()).build(),
                    "computer:" + COMPUTERS.get(computer));
            if (then != RunStatus.WORKING) {
                now = now.plusSeconds(30);
                cleanup.advanceWallClockTime(Duration.ofSeconds(30));
                send(RunStatusChanged.newBuilder().setRunId(runId).setStatus(then).build(), "computer:" + COMPUTERS.get(computer));
            }
        }

        void answer(boolean failFirst) {
            boolean failed = false;
            for (var it = new ArrayList<>(pendingAsks.entrySet()).iterator(); it.hasNext(); ) {
                var ask = it.next();
                List<String> left = new ArrayList<>();
                for (String c : ask.getValue().getValue()) {
                    ComputerStatus cs = computers.get(c);
                    if (cs == null || !cs.getOnline()) {
                        left.add(c);
                        continue;
                    }
                    boolean ok = !(failFirst && !failed);
                    failed |= !ok;
                    send(SessionDeletedOnComputer.newBuilder().setSessionId(ask.getValue().getKey()).setRequestId(ask.getKey())
                            .setComputerId(c).setOk(ok).setError(ok ? null : "permission denied").build(), "computer:" + c);
                }
                if (left.isEmpty()) {
                    pendingAsks.remove(ask.getKey());
                } else {
                    pendingAsks.put(ask.getKey(), Map.entry(ask.getValue().getKey(), left));
                }
            }
        }

        /** Time passes; the cleanup's wall clock with it, a sweep every {@link #SWEEP}. */
        void advance(Duration d) {
            Instant until = now.plus(d);
            while (now.isBefore(until)) {
                Duration step = SWEEP;
                if (now.plus(step).isAfter(until)) {
                    step = Duration.between(now, until);
                }
                now = now.plus(step);
                cleanup.advanceWallClockTime(step);
                drainRequests();
            }
        }

        @Override
        public void close() {
            projector.close();
            cleanup.close();
        }
    }

    static String bucket(Map<String, String> decisions, String type) {
        long n = decisions.values().stream().filter(type::equals).count();
        return n == 0 ? "0" : n < 3 ? "1-2" : "3+";
    }

    static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static <K, V> Map<K, V> sorted(Map<K, V> m) {
        return new TreeMap<>(m);
    }

    static <T> Set<T> ordered(List<T> l) {
        return new LinkedHashSet<>(l);
    }
}

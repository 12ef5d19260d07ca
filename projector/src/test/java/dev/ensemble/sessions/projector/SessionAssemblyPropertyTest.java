package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.TaskChanged;
import dev.ensemble.sessions.events.TaskFacts;
import dev.ensemble.sessions.events.TaskStatus;
import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.SessionView;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reshaped session chains (a run's status, times and end report in its own record, the session's counts and last
 * active time in its fill, the whole view assembled: {@link SessionAssembly}) give, for any sequence of events, the
 * view that the rules gave when a session was one record ({@link ReferenceChainRules}): claims continuing runs claimed
 * before or after them (parked), status reports out of order and after the end, engine events, task changes, deletions.
 * Two differences by design: the files changed are listed in the chain's order of their runs, not in the order the
 * reports arrived, so they are compared as sets here (and in the chain's order by {@code SessionChainRulesTest}); and a
 * run whose newer end report carries no summary no longer counts for the session's and its task's latest report (the
 * one-record rules kept the older report's summary, which no run's end holds any more), so end reports here always
 * carry one ({@code SessionChainRulesTest} has the case).
 */
class SessionAssemblyPropertyTest {
    private static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");
    private static final String ACCOUNT = "acct-ana";

    @Property(tries = 400)
    void theAssembledViewIsTheOneRecordViewOfTheSameEvents(@ForAll long seed) {
        List<Event> events = events(new Random(seed));
        ReferenceChainRules.State reference = new ReferenceChainRules.State();
        MapChainState reshaped = new MapChainState();
        for (Event e : events) {
            ReferenceChainRules.apply(e, reference, v -> { });
            SessionChainRules.apply(e, reshaped, v -> { });
        }
        assertThat(reshaped.sessions.keySet()).isEqualTo(reference.sessions.keySet());
        for (String id : reference.sessions.keySet()) {
            SessionView want = normalized(MapChainState.copy(reference.sessions.get(id)));
            SessionView got = normalized(reshaped.view(id));
            assertThat(got.toString()).as("session %s after %s", id, describe(events)).isEqualTo(want.toString());
        }
    }

    /** The view with its lists of files changed sorted (their order is the chain's, not arrival's: see the class). */
    private static SessionView normalized(SessionView v) {
        v.setFilesChanged(new ArrayList<>(new TreeSet<>(v.getFilesChanged())));
        for (SessionTaskView t : v.getTasks()) {
            t.setFilesChanged(new ArrayList<>(new TreeSet<>(t.getFilesChanged())));
        }
        return v;
    }

    /** Claims of six runs (some continuing another, before or after it) and thirty other events, shuffled. */
    static List<Event> events(Random r) {
        int runs = 6;
        List<Event> out = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            String parent = i == 0 || r.nextInt(3) == 0 ? null : "run-" + r.nextInt(runs);
            if (("run-" + i).equals(parent)) {
                parent = null;
            }
            String task = r.nextInt(4) == 0 ? null : "task-" + r.nextInt(3);
            out.add(event(RunClaimed.newBuilder().setRunId("run-" + i).setTaskId(task).setComputerId("laptop")
                    .setAgent("claude-code").setModel(r.nextBoolean() ? "claude-sonnet-4-5" : null).setFolder("/work/f" + r.nextInt(2))
                    .setKind(RunKind.TASK_RUN).setContinueFromJobId(parent)
                    .setTask(task == null ? null : TaskFacts.newBuilder().setTitle("title " + task).build()).build(), r.nextInt(30)));
        }
        for (int n = 0; n < 30; n++) {
            String run = "run-" + r.nextInt(runs);
            int kind = r.nextInt(20);
            if (kind < 11) {
                RunStatus st = RunStatus.values()[r.nextInt(RunStatus.values().length)];
                List<String> files = new ArrayList<>();
                for (int f = 0; f < 6; f++) {
                    if (r.nextInt(4) == 0) {
                        files.add("src/f" + f + ".java");
                    }
                }
                out.add(event(RunStatusChanged.newBuilder().setRunId(run).setStatus(st)
                        .setReportSummary(r.nextInt(3) == 0 && !SessionChainRules.isEnded(st.name()) ? null : "summary " + r.nextInt(5))
                        .setFilesChanged(files)
                        .setTokens(r.nextBoolean() ? (long) r.nextInt(10_000) : null)
                        .setDurationMs(r.nextBoolean() ? (long) r.nextInt(100_000) : null).build(), r.nextInt(30)));
            } else if (kind < 16) {
                out.add(event(EngineEvent.newBuilder().setRunId(run).setAgentSessionId("agent-" + r.nextInt(3))
                        .setContextUsed(r.nextBoolean() ? (long) r.nextInt(200_000) : null).setContextSize(200_000L)
                        .setModel(r.nextInt(3) == 0 ? "claude-opus-4" : null).setTranscriptGone(r.nextInt(10) == 0).build(), r.nextInt(30)));
            } else if (kind < 18) {
                out.add(event(TaskChanged.newBuilder().setTaskId("task-" + r.nextInt(3))
                        .setStatus(TaskStatus.values()[r.nextInt(TaskStatus.values().length)]).setPinned(r.nextBoolean()).build(), r.nextInt(30)));
            } else if (kind < 19) {
                out.add(event(SessionDeletionAccepted.newBuilder().setSessionId(run).setRequestId("req").setRunIds(List.of(run))
                        .setComputerIds(List.of("laptop")).build(), r.nextInt(30)));
            } else {
                out.add(event(SessionDeleted.newBuilder().setSessionId(run).setRequestId("req").build(), r.nextInt(30)));
            }
        }
        Collections.shuffle(out, r);
        return out;
    }

    private static Event event(Object payload, int minute) {
        Instant at = T0.plusSeconds(60L * minute);
        return Event.newBuilder().setEventId(java.util.UUID.randomUUID().toString()).setAccount(ACCOUNT).setSpace("web:space-1")
                .setOccurredAt(at).setRecordedAt(at).setSource("computer:laptop").setPayload(payload).build();
    }

    private static String describe(List<Event> events) {
        StringBuilder b = new StringBuilder();
        for (Event e : events) {
            b.append("\n  ").append(e.getOccurredAt()).append(' ').append(e.getPayload());
        }
        return b.toString();
    }
}

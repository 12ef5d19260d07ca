package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pure rules ({@link SessionChainRules}) for a transcript gone from the computer's disk (an engine event with
 * {@code transcriptGone}) and for the folders of a session, as a table: events in, then the view's resumable,
 * gone, status, runs and fill.
 */
class SessionGoneRulesTest {
    static final String ACCOUNT = "ana";
    static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");
    static final String RUN = "claude-code:s1";

    static Stream<Arguments> table() {
        return Stream.of(
                // events                                                   resumable gone  status   runs fill
                Arguments.of("claimed, engine", List.of(claim(RUN, null, "/a", 0), engine(1, false)), true, false, SessionStatus.WORKING, 1, 0.25),
                Arguments.of("claimed, engine, done, gone", List.of(claim(RUN, null, "/a", 0), engine(1, false), done(2), engine(3, true)),
                        false, true, SessionStatus.IDLE, 1, 0.25),
                Arguments.of("gone before any engine report keeps the fill unknown",
                        List.of(claim(RUN, null, "/a", 0), engine(3, true)), false, true, SessionStatus.WORKING, 1, null),
                Arguments.of("a newer engine report after gone does not make it resumable again",
                        List.of(claim(RUN, null, "/a", 0), engine(3, true), engine(4, false)), false, true, SessionStatus.WORKING, 1, 0.25),
                Arguments.of("a task session's later run keeps it gone (its transcript is still missing); the runs stay",
                        List.of(taskRun(claim(RUN, null, "/a", 0)), engine(1, false), done(2), engine(3, true), taskRun(claim(RUN + ":2", RUN, "/a", 4))),
                        false, true, SessionStatus.WORKING, 2, 0.25),
                Arguments.of("a prompt imported from its transcript after it went (restored, used again): there again",
                        List.of(claim(RUN, null, "/a", 0), engine(1, false), done(2), engine(3, true), claim(RUN + ":2", RUN, "/a", 4)),
                        true, false, SessionStatus.WORKING, 2, 0.25),
                Arguments.of("a prompt of the restored transcript from before it went keeps it gone",
                        List.of(claim(RUN, null, "/a", 0), engine(1, false), done(2), engine(3, true), claim(RUN + ":2", RUN, "/a", 2)),
                        false, true, SessionStatus.WORKING, 2, 0.25),
                Arguments.of("gone and being deleted: not resumable",
                        List.of(claim(RUN, null, "/a", 0), engine(1, false), engine(3, true), accepted(4)), false, true, SessionStatus.WORKING, 1, 0.25));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void goneFromDisk(String name, List<Event> events, boolean resumable, boolean gone, SessionStatus status, int runs, Double fill) {
        MapChainState state = new MapChainState();
        List<SessionView> emitted = new ArrayList<>();
        events.forEach(e -> SessionChainRules.apply(e, state, emitted::add));
        SessionView s = state.view(RUN);
        assertThat(s.getResumable()).as("resumable").isEqualTo(resumable);
        assertThat(s.getGone()).as("gone").isEqualTo(gone);
        boolean reported = events.stream().anyMatch(e -> e.getPayload() instanceof EngineEvent ee && ee.getTranscriptGone());
        assertThat(s.getGoneAt()).as("goneAt: the last time it was found gone").isEqualTo(reported ? T0.plusSeconds(180) : null);
        assertThat(s.getStatus()).as("status").isEqualTo(status);
        assertThat(s.getRuns()).as("runs").hasSize(runs);
        assertThat(s.getFill()).as("fill").isEqualTo(fill);
        assertThat(s.getAgentSessionId()).isEqualTo("s1");
    }

    @Test
    void anOlderGoneReportChangesNothingAndANewerOneIsTheLastTimeItWasFoundGone() {
        MapChainState state = new MapChainState();
        List<SessionView> emitted = new ArrayList<>();
        for (Event e : List.of(claim(RUN, null, "/a", 0), engine(1, false), engine(3, true))) {
            SessionChainRules.apply(e, state, emitted::add);
        }
        int before = emitted.size();
        SessionChainRules.apply(engine(2, true), state, emitted::add);
        assertThat(emitted).hasSize(before);
        assertThat(state.view(RUN).getGoneAt()).isEqualTo(T0.plusSeconds(180));
        SessionChainRules.apply(engine(5, true), state, emitted::add);
        assertThat(state.view(RUN).getGoneAt()).isEqualTo(T0.plusSeconds(300));
        assertThat(state.view(RUN).getGone()).isTrue();
    }

    /** Gone or there again follows the events' own times, in whatever order they arrive (the parent's claim first). */
    @Test
    void goneOrThereAgainIsTheSameInEveryArrivalOrder() {
        Event parent = claim(RUN, null, "/a", 0);
        for (int restoredAt : new int[]{2, 4}) { // a prompt of the transcript from before it went, and one after
            List<Event> rest = List.of(engine(1, false), done(2), engine(3, true), claim(RUN + ":2", RUN, "/a", restoredAt));
            Boolean expected = null;
            for (List<Event> order : permutations(rest)) {
                MapChainState state = new MapChainState();
                SessionChainRules.apply(parent, state, v -> { });
                order.forEach(e -> SessionChainRules.apply(e, state, v -> { }));
                SessionView s = state.view(RUN);
                if (expected == null) {
                    expected = s.getGone();
                }
                assertThat(s.getGone()).as("prompt at minute " + restoredAt + ", order " + order).isEqualTo(expected);
                assertThat(s.getResumable()).isEqualTo(!expected);
            }
            assertThat(expected).as("prompt at minute " + restoredAt).isEqualTo(restoredAt < 3);
        }
    }

    private static List<List<Event>> permutations(List<Event> events) {
        if (events.size() <= 1) {
            return List.of(events);
        }
        List<List<Event>> out = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            List<Event> others = new ArrayList<>(events);
            Event first = others.remove(i);
            for (List<Event> p : permutations(others)) {
                List<Event> one = new ArrayList<>();
                one.add(first);
                one.addAll(p);
                out.add(one);
            }
        }
        return out;
    }

    @Test
    void theSessionKeepsEveryFolderItsRunsNamedTheFirstFirst() {
        MapChainState state = new MapChainState();
        List<SessionView> emitted = new ArrayList<>();
        RunClaimed second = (RunClaimed) claim(RUN + ":2", RUN, "/b", 2).getPayload();
        second.setFolders(List.of("/a", "/b", "/c"));
        for (Event e : List.of(claim(RUN, null, "/a", 0), event(second, 2))) {
            SessionChainRules.apply(e, state, emitted::add);
        }
        SessionView s = state.view(RUN);
        assertThat(s.getFolder()).isEqualTo("/a");
        assertThat(s.getFolders()).containsExactly("/a", "/b", "/c");
    }

    /** The same claim as a task run's ({@code TASK_RUN}), not a prompt imported from an agent's transcript. */
    static Event taskRun(Event claim) {
        ((RunClaimed) claim.getPayload()).setKind(RunKind.TASK_RUN);
        return claim;
    }

    static Event claim(String runId, String continueFrom, String folder, int minute) {
        return event(RunClaimed.newBuilder().setRunId(runId).setComputerId("laptop").setAgent("claude-code")
                .setFolder(folder).setKind(RunKind.TERMINAL_CHAT).setContinueFromJobId(continueFrom)
                .setAgentSessionId("s1").build(), minute);
    }

    static Event engine(int minute, boolean gone) {
        EngineEvent.Builder b = EngineEvent.newBuilder().setRunId(RUN).setAgentSessionId("s1").setTranscriptGone(gone);
        if (!gone) {
            b.setContextUsed(50_000L).setContextSize(200_000L);
        }
        return event(b.build(), minute);
    }

    static Event done(int minute) {
        return event(RunStatusChanged.newBuilder().setRunId(RUN).setStatus(RunStatus.DONE).build(), minute);
    }

    static Event accepted(int minute) {
        return event(SessionDeletionAccepted.newBuilder().setSessionId(RUN).setRequestId("r1").setRunIds(List.of(RUN))
                .setComputerIds(List.of("laptop")).build(), minute);
    }

    static Event event(Object payload, int minute) {
        Instant at = T0.plusSeconds(60L * minute);
        return Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(ACCOUNT).setSpace("local:laptop")
                .setSource("computer:laptop").setOccurredAt(at).setRecordedAt(at).setPayload(payload).build();
    }
}

package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionView;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

import static dev.ensemble.sessions.projector.ChainFixture.claimed;
import static dev.ensemble.sessions.projector.ChainFixture.deleted;
import static dev.ensemble.sessions.projector.ChainFixture.done;
import static dev.ensemble.sessions.projector.ChainFixture.engine;
import static dev.ensemble.sessions.projector.ChainFixture.status;
import static org.assertj.core.api.Assertions.assertThat;

/** The session-chain rules of the guide's §1, one case per rule, through the projector's real topology. */
class SessionChainRulesTest {

    @Nested
    class SessionIdentity {
        @Test
        void aRunWithNoContinueFromJobIdStartsASessionWhoseIdIsItsOwn() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "Build the ranking API", 0));
                SessionView s = f.session("job-1");
                assertThat(s).isNotNull();
                assertThat(s.getRuns()).extracting(RunView::getRunId).containsExactly("job-1");
                assertThat(s.getFirstTaskTitle()).isEqualTo("Build the ranking API");
                assertThat(s.getAgent()).isEqualTo("claude-code");
                assertThat(s.getFolder()).isEqualTo("/work/ranking");
            }
        }

        @Test
        void aRunThatContinuesARunJoinsThatRunsSession() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "First", 0), done("job-1", "one", List.of("a.ts"), 1),
                        claimed("job-2", "job-1", "Second", 2), done("job-2", "two", List.of("b.ts", "a.ts"), 3),
                        claimed("job-3", "job-2", "Third", 4));
                assertThat(f.latest).hasSize(1);
                SessionView s = f.session("job-1");
                assertThat(s.getRuns()).extracting(RunView::getRunId).containsExactly("job-1", "job-2", "job-3");
                assertThat(s.getFirstTaskTitle()).isEqualTo("First");
                assertThat(s.getLatestTaskTitle()).isEqualTo("Third");
                assertThat(s.getLatestReportSummary()).isEqualTo("two");
                assertThat(s.getFilesChanged()).containsExactly("a.ts", "b.ts");
                assertThat(s.getLastActiveAt()).isEqualTo(ChainFixture.at(4));
            }
        }

        @Test
        void aRunThatContinuesARunOfADeletedSessionStartsItsOwnAndRecordsWhichItContinues() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "First", 0), engine("job-1", "agent-a", 10L, 100L, 0), done("job-1", "one", List.of(), 1));
                f.given(deleted("job-1", List.of("job-1"), 5));
                f.given(claimed("job-2", "job-1", "Second", 6));
                SessionView old = f.session("job-1");
                assertThat(old.getDeleted()).isTrue();
                assertThat(old.getResumable()).isFalse();
                assertThat(old.getRuns()).as("the deleted session keeps only its own runs").extracting(RunView::getRunId).containsExactly("job-1");
                SessionView fresh = f.session("job-2");
                assertThat(fresh.getContinuesSessionId()).isEqualTo("job-1");
                assertThat(fresh.getRuns()).extracting(RunView::getRunId).containsExactly("job-2");
                f.given(claimed("job-3", "job-2", "Third", 7));
                assertThat(f.session("job-2").getRuns()).extracting(RunView::getRunId).containsExactly("job-2", "job-3");
            }
        }
    }

    @Nested
    class TasksOfASession {
        @Test
        void eachTaskKeepsItsFactsTheFilesItsRunsChangedAndItsReport() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "First", 0), done("job-1", "one", List.of("a.ts"), 1),
                        claimed("job-2", "job-1", "Second", 2), done("job-2", "two", List.of("b.ts"), 3));
                SessionView s = f.session("job-1");
                assertThat(s.getTasks()).hasSize(2);
                assertThat(s.getTasks().get(0).getFacts().getTitle()).isEqualTo("First");
                assertThat(s.getTasks().get(0).getFilesChanged()).containsExactly("a.ts");
                assertThat(s.getTasks().get(1).getReport()).isEqualTo("two");
                assertThat(s.getTasks().get(1).getSpace()).isEqualTo("web:space-1");
            }
        }

        @Test
        void aTaskChangeReachesEverySessionHoldingTheTask() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "First", 0), done("job-1", "one", List.of(), 1),
                        ChainFixture.event(dev.ensemble.sessions.events.TaskChanged.newBuilder().setTaskId("task-job-1")
                                .setStatus(dev.ensemble.sessions.events.TaskStatus.DONE).setPinned(true)
                                .setCompletedAt(ChainFixture.at(5)).build(), ChainFixture.at(5)));
                var t = f.session("job-1").getTasks().get(0);
                assertThat(t.getStatus()).isEqualTo("DONE");
                assertThat(t.getPinned()).isTrue();
                assertThat(t.getCompletedAt()).isEqualTo(ChainFixture.at(5));
            }
        }
    }

    @Nested
    class AgentSessionAndFill {
        @Test
        void theAgentSessionIdIsTheNewestEngineEvents() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "t", 0), engine("job-1", "agent-old", 10L, 100L, 1),
                        engine("job-1", "agent-new", 50L, 200L, 3),
                        engine("job-1", "agent-late-but-older", 90L, 100L, 2));
                SessionView s = f.session("job-1");
                assertThat(s.getAgentSessionId()).isEqualTo("agent-new");
                assertThat(s.getFill()).isEqualTo(0.25);
                assertThat(s.getContextUsed()).isEqualTo(50L);
            }
        }

        @Test
        void fillIsUnknownWithoutAnEngineEventOrWithoutASize() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "t", 0));
                assertThat(f.session("job-1").getFill()).isNull();
                f.given(engine("job-1", "agent-a", null, null, 1));
                assertThat(f.session("job-1").getFill()).isNull();
                assertThat(f.session("job-1").getAgentSessionId()).isEqualTo("agent-a");
                f.given(engine("job-1", "agent-a", 1000L, 0L, 2));
                assertThat(f.session("job-1").getFill()).as("a zero window is not a fill").isNull();
            }
        }

        @Test
        void aSessionIsResumableOnceItsAgentSessionIsKnownAndUntilItIsDeleted() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "t", 0));
                assertThat(f.session("job-1").getResumable()).as("nothing to resume yet").isFalse();
                f.given(engine("job-1", "agent-a", 1L, 10L, 1));
                assertThat(f.session("job-1").getResumable()).isTrue();
                f.given(done("job-1", "ok", List.of(), 2));
                f.given(deleted("job-1", List.of("job-1"), 3));
                assertThat(f.session("job-1").getResumable()).isFalse();
            }
        }
    }

    @Nested
    class OneTurnAtATime {
        @Test
        void aSecondRunWhileOneIsGoingIsQueued() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "t", 0), status("job-1", RunStatus.WORKING, 0));
                assertThat(f.session("job-1").getStatus()).isEqualTo(SessionStatus.WORKING);
                f.given(claimed("job-2", "job-1", "t2", 1));
                SessionView s = f.session("job-1");
                assertThat(s.getRuns().get(1).getStatus()).isEqualTo("QUEUED");
                assertThat(s.getStatus()).as("one run still works").isEqualTo(SessionStatus.WORKING);
                f.given(status("job-1", RunStatus.WAITING, 2));
                assertThat(f.session("job-1").getStatus()).isEqualTo(SessionStatus.WAITING);
                f.given(done("job-1", "ok", List.of(), 3));
                assertThat(f.session("job-1").getStatus()).isEqualTo(SessionStatus.QUEUED);
                f.given(status("job-2", RunStatus.WORKING, 4));
                assertThat(f.session("job-1").getStatus()).isEqualTo(SessionStatus.WORKING);
                f.given(done("job-2", "ok", List.of(), 5));
                assertThat(f.session("job-1").getStatus()).isEqualTo(SessionStatus.IDLE);
            }
        }

        @Test
        void aRunThatEndedDoesNotGoBackToWork() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "t", 0), done("job-1", "ok", List.of(), 2), status("job-1", RunStatus.WORKING, 1));
                assertThat(f.session("job-1").getStatus()).isEqualTo(SessionStatus.IDLE);
                assertThat(f.session("job-1").getRuns().get(0).getStatus()).isEqualTo("DONE");
            }
        }
    }

    @Nested
    class DeliveryAndOrder {
        @Test
        void aDuplicatedEventChangesNothing() {
            try (ChainFixture f = new ChainFixture()) {
                Event claim = claimed("job-1", null, "t", 0);
                Event report = done("job-1", "ok", List.of("a"), 1);
                f.given(claim, report);
                int before = f.emitted;
                long seq = f.session("job-1").getSequence();
                f.given(claim, report, claim);
                assertThat(f.emitted).isEqualTo(before);
                assertThat(f.session("job-1").getSequence()).isEqualTo(seq);
                assertThat(f.stored("acct-ana/job-1").getRuns()).hasSize(1);
            }
        }

        @Test
        void aDuplicatedEngineEventOrTaskChangeChangesNothingAlsoWhenTheFirstWasParked() {
            try (ChainFixture f = new ChainFixture()) {
                Event early = engine("job-1", "agent-a", 10L, 100L, 1); // parked: its run is not claimed yet
                Event later = engine("job-1", "agent-a", 20L, 100L, 2);
                Event task = ChainFixture.event(dev.ensemble.sessions.events.TaskChanged.newBuilder().setTaskId("task-job-1")
                        .setStatus(dev.ensemble.sessions.events.TaskStatus.DONE).setPinned(false).setCompletedAt(ChainFixture.at(3)).build(), ChainFixture.at(3));
                f.given(early, claimed("job-1", null, "t", 0), later, task);
                long seq = f.session("job-1").getSequence();
                int before = f.emitted;
                f.given(early, later, task, early);
                assertThat(f.session("job-1").getSequence()).as("each id was applied once").isEqualTo(seq);
                assertThat(f.emitted).isEqualTo(before);
                assertThat(f.session("job-1").getContextUsed()).isEqualTo(20L);
            }
        }

        @Test
        void aRunWhoseParentIsNotKnownYetIsParkedAndJoinsWhenTheParentArrives() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-2", "job-1", "Second", 2), engine("job-2", "agent-b", 30L, 100L, 3), done("job-2", "two", List.of(), 4));
                assertThat(f.latest).as("an orphan shows nowhere and makes no session of its own").isEmpty();
                f.given(claimed("job-1", null, "First", 0));
                assertThat(f.latest).containsOnlyKeys("acct-ana/job-1");
                SessionView s = f.session("job-1");
                assertThat(s.getRuns()).extracting(RunView::getRunId).containsExactly("job-1", "job-2");
                assertThat(s.getRuns().get(1).getStatus()).isEqualTo("DONE");
                assertThat(s.getAgentSessionId()).isEqualTo("agent-b");
                assertThat(s.getLatestReportSummary()).isEqualTo("two");
            }
        }

        @Test
        void eventsAboutARunNotClaimedYetWaitForItsClaim() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(engine("job-1", "agent-a", 5L, 10L, 1), status("job-1", RunStatus.WORKING, 1));
                assertThat(f.latest).isEmpty();
                f.given(claimed("job-1", null, "t", 0));
                assertThat(f.session("job-1").getFill()).isEqualTo(0.5);
                assertThat(f.session("job-1").getStatus()).isEqualTo(SessionStatus.WORKING);
            }
        }

        @Test
        void theSequenceGrowsWithEveryChange() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "t", 0));
                long a = f.session("job-1").getSequence();
                f.given(engine("job-1", "x", 1L, 2L, 1));
                assertThat(f.session("job-1").getSequence()).isEqualTo(a + 1);
            }
        }
    }

    /**
     * "Latest" in a view (latest report, first and latest task, last active, when a run started) follows the events'
     * own times and the chain's order, not arrival order (issue 14, item 4): each case's events, posted in order,
     * reversed and in three shuffles, give the same view, and the one the case expects.
     */
    @Nested
    class LatestFollowsTheEventsTimesNotTheirArrival {
        record Case(String name, List<Event> inOrder, String latestReport, String latestTask, String firstTask, int lastActiveMinute) {
        }

        static final List<Case> CASES = List.of(
                new Case("a later run's report is the latest though it arrives first",
                        List.of(claimed("job-1", null, "First", 0), done("job-1", "one", List.of("a.ts"), 3),
                                claimed("job-2", "job-1", "Second", 4), done("job-2", "two", List.of("b.ts"), 5)),
                        "two", "Second", "First", 5),
                new Case("two runs continuing one: the later claim is the latest task, the later end the latest report",
                        List.of(claimed("job-1", null, "First", 0), done("job-1", "one", List.of(), 1),
                                claimed("job-2", "job-1", "Second", 2), claimed("job-3", "job-1", "Third", 3),
                                done("job-3", "three", List.of(), 6), done("job-2", "two", List.of(), 8)),
                        "two", "Third", "First", 8),
                new Case("equal times: the chain's order decides",
                        List.of(claimed("job-1", null, "First", 0), claimed("job-2", "job-1", "Second", 0),
                                done("job-1", "one", List.of(), 2), done("job-2", "two", List.of(), 2)),
                        "two", "Second", "First", 2),
                new Case("a run without a report keeps the one before as the latest",
                        List.of(claimed("job-1", null, "First", 0), done("job-1", "one", List.of(), 1),
                                claimed("job-2", "job-1", "Second", 2), status("job-2", RunStatus.FAILED, 3)),
                        "one", "Second", "First", 3),
                new Case("a stale WORKING after the end still tells when it started and was active",
                        List.of(claimed("job-1", null, "First", 0), status("job-1", RunStatus.WORKING, 1),
                                status("job-1", RunStatus.WAITING, 2), done("job-1", "one", List.of(), 4),
                                status("job-1", RunStatus.WORKING, 5)),
                        "one", "First", "First", 5));

        /** What of a view must not depend on arrival order (lists whose order is arrival order are compared as sets). */
        static Map<String, Object> orderFree(SessionView s) {
            Map<String, Object> m = new TreeMap<>();
            m.put("latestReportSummary", s.getLatestReportSummary());
            m.put("latestTask", s.getLatestTaskId() + " " + s.getLatestTaskTitle());
            m.put("firstTask", s.getFirstTaskId() + " " + s.getFirstTaskTitle());
            m.put("lastActiveAt", s.getLastActiveAt());
            m.put("status", s.getStatus());
            m.put("filesChanged", new TreeSet<>(s.getFilesChanged()));
            for (RunView r : s.getRuns()) {
                m.put("run " + r.getRunId(), r.getStatus() + " started " + r.getStartedAt() + " ended " + r.getEndedAt()
                        + " report " + r.getReportSummary());
            }
            for (var t : s.getTasks()) {
                m.put("task " + t.getTaskId(), t.getReport() + " " + new TreeSet<>(t.getFilesChanged()));
            }
            return m;
        }

        static SessionView viewAfter(List<Event> arrival) {
            try (ChainFixture f = new ChainFixture()) {
                f.given(arrival.toArray(Event[]::new));
                assertThat(f.latest).as("one session").hasSize(1);
                return f.session("job-1");
            }
        }

        @Test
        void outOfOrderArrivalGivesTheSameViewAsInOrder() {
            for (Case c : CASES) {
                SessionView expected = viewAfter(c.inOrder());
                assertThat(expected.getLatestReportSummary()).as(c.name()).isEqualTo(c.latestReport());
                assertThat(expected.getLatestTaskTitle()).as(c.name()).isEqualTo(c.latestTask());
                assertThat(expected.getFirstTaskTitle()).as(c.name()).isEqualTo(c.firstTask());
                assertThat(expected.getLastActiveAt()).as(c.name()).isEqualTo(ChainFixture.at(c.lastActiveMinute()));
                List<List<Event>> arrivals = new ArrayList<>();
                List<Event> reversed = new ArrayList<>(c.inOrder());
                Collections.reverse(reversed);
                arrivals.add(reversed);
                Random random = new Random(14);
                for (int i = 0; i < 3; i++) {
                    List<Event> shuffled = new ArrayList<>(c.inOrder());
                    Collections.shuffle(shuffled, random);
                    arrivals.add(shuffled);
                }
                for (List<Event> arrival : arrivals) {
                    assertThat(orderFree(viewAfter(arrival))).as(c.name() + ", arriving " + describe(arrival)).isEqualTo(orderFree(expected));
                }
            }
        }

        @Test
        void theChainsOrderPutsARunAfterTheRunItContinuesAndOtherwiseGoesByClaimTime() {
            RunView a = RunView.newBuilder().setRunId("a").setComputerId("laptop").setStatus("DONE").setClaimedAt(ChainFixture.at(5)).build();
            RunView b = RunView.newBuilder().setRunId("b").setComputerId("laptop").setStatus("DONE").setClaimedAt(ChainFixture.at(1)).setContinueFromJobId("a").build();
            RunView c = RunView.newBuilder().setRunId("c").setComputerId("laptop").setStatus("DONE").setClaimedAt(ChainFixture.at(3)).setContinueFromJobId("a").build();
            RunView d = RunView.newBuilder().setRunId("d").setComputerId("laptop").setStatus("DONE").setClaimedAt(ChainFixture.at(2)).setContinueFromJobId("c").build();
            assertThat(SessionChainRules.chainOrder(List.of(d, c, b, a))).as("b's clock is behind a's: the chain still puts it after a")
                    .extracting(RunView::getRunId).containsExactly("a", "b", "c", "d");
        }

        static String describe(List<Event> events) {
            List<String> out = new ArrayList<>();
            for (Event e : events) {
                out.add(e.getPayload().getClass().getSimpleName() + "@" + e.getOccurredAt());
            }
            return out.toString();
        }
    }

    @Nested
    class BadInput {
        @Test
        void anInvalidEventGoesToTheDeadLetterTopicWithItsReasonAndChangesNothing() {
            try (ChainFixture f = new ChainFixture()) {
                Event bad = claimed("job-1", null, "t", 0);
                bad.setAccount("acct/evil");
                f.events.pipeInput("acct/evil", bad);
                f.given(claimed("job-2", null, "t", 1));
                var dead = f.deadLetters.readRecordsToList();
                assertThat(dead).hasSize(1);
                String message = new String(dead.get(0).headers().lastHeader("__streams.errors.message").value());
                assertThat(message).contains("account").contains("must not contain '/'");
                assertThat(f.latest).containsOnlyKeys("acct-ana/job-2");
            }
        }

        @Test
        void aRunThatContinuesItselfGoesToTheDeadLetterTopicNamingTheFieldInsteadOfWaitingForEver() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", "job-1", "t", 0), claimed("job-2", null, "t", 1));
                var dead = f.deadLetters.readRecordsToList();
                assertThat(dead).hasSize(1);
                String message = new String(dead.get(0).headers().lastHeader("__streams.errors.message").value());
                assertThat(message).contains("payload.continueFromJobId").contains("a run cannot continue itself");
                assertThat(f.latest).containsOnlyKeys("acct-ana/job-2");
            }
        }

        @Test
        void anEventRefusedForAnOverLongIdIsNotRecordedAsAppliedSoItsCorrectedCopyIsTaken() {
            try (ChainFixture f = new ChainFixture()) {
                f.given(claimed("job-1", null, "t", 0));
                Event report = done("job-1", "ok", List.of("a"), 1);
                Event bad = Event.newBuilder(report).setSpace("s".repeat(ViewBounds.ID_CHARS + 1)).build();
                f.given(bad);
                assertThat(f.deadLetters.readRecordsToList()).hasSize(1);
                assertThat(f.session("job-1").getRuns().get(0).getStatus()).isNotEqualTo("DONE");
                f.given(report); // the same eventId, its space corrected
                assertThat(f.deadLetters.readRecordsToList()).isEmpty();
                assertThat(f.session("job-1").getRuns().get(0).getStatus()).as("not dropped as a duplicate").isEqualTo("DONE");
            }
        }
    }
}

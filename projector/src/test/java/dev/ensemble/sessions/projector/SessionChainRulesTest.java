package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionView;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.List;

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
                assertThat(f.store().get("acct-ana/job-1").getRuns()).hasSize(1);
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
    }
}

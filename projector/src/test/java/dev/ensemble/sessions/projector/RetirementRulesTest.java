package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.projector.RetirementRules.Computer;
import dev.ensemble.sessions.projector.RetirementRules.Config;
import dev.ensemble.sessions.projector.RetirementRules.Facts;
import dev.ensemble.sessions.projector.RetirementRules.Pending;
import dev.ensemble.sessions.projector.RetirementRules.Run;
import dev.ensemble.sessions.projector.RetirementRules.State;
import dev.ensemble.sessions.projector.RetirementRules.Task;
import dev.ensemble.sessions.projector.RetirementRules.Verdict;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The retirement rules of the guide's §6 (and §5's idle kinds), one case per rule, at their exact boundaries. */
class RetirementRulesTest {
    static final Config C = Config.defaults();
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final Computer LAPTOP = new Computer("laptop", true, true, 1, T);

    static Instant plus(Duration d) {
        return T.plus(d);
    }

    static Run ended(String id) {
        return new Run(id, "DONE", T.minus(Duration.ofHours(2)), T.minus(Duration.ofHours(2)), T.minus(Duration.ofHours(1)));
    }

    static Facts coding(List<Task> tasks, List<Computer> computers, Run... runs) {
        return new Facts("job-1", "TASK_RUN", null, false, false, List.of(runs), tasks, computers, null, null, T, null);
    }

    static Facts coding(Task... tasks) {
        return coding(List.of(tasks), List.of(LAPTOP), ended("job-1"));
    }

    static Task deletedAt(Instant at) {
        return new Task("task-1", "DELETED", false, true, null, at, at);
    }

    static Task done(Instant at, boolean pinned) {
        return new Task("task-1", "DONE", pinned, true, at, null, at);
    }

    static Verdict at(Facts f, Instant when) {
        return RetirementRules.evaluate(f, when, C);
    }

    @Nested
    class EveryTaskRetired {
        @Test
        void aDeletedTaskRetiresTenMinutesAfterItsDeletionSoUndoStillFindsIt() {
            Facts f = coding(deletedAt(T));
            assertThat(at(f, plus(Duration.ofMinutes(9))).state()).isEqualTo(State.IN_USE);
            assertThat(at(f, plus(Duration.ofMinutes(10)).minusMillis(1)).state()).isEqualTo(State.IN_USE);
            assertThat(at(f, plus(Duration.ofMinutes(10))).state()).as("at least 10 minutes ago").isEqualTo(State.READY);
            Verdict v = at(f, plus(Duration.ofMinutes(11)));
            assertThat(v.state()).isEqualTo(State.READY);
            assertThat(v.readiness().reason()).isEqualTo(RetirementRules.RETIRED);
            assertThat(v.readiness().readyAt()).isEqualTo(plus(Duration.ofMinutes(10)));
            assertThat(v.nextDueAt()).as("ready: due at once").isEqualTo(plus(Duration.ofMinutes(11)));
        }

        /**
         * Guide §6, "deleted at least 10 minutes ago": the boundary to the millisecond, and the view as the projector
         * makes it (evaluated as of its newest fact, here the deletion itself) due at the instant the task retires, so
         * a sweep 11 or 40 minutes after the deletion finds it ready.
         */
        @Test
        void aSessionWhoseOnlyTaskWasDeletedIsDueTenMinutesAfterTheDeletion() {
            Facts f = coding(deletedAt(T));
            record Case(Duration sinceDeletion, State state) {
            }
            for (Case c : List.of(new Case(Duration.ofMinutes(9).plusSeconds(59), State.IN_USE),
                    new Case(Duration.ofMinutes(10).minusMillis(1), State.IN_USE),
                    new Case(Duration.ofMinutes(10), State.READY),
                    new Case(Duration.ofMinutes(11), State.READY),
                    new Case(Duration.ofMinutes(40), State.READY))) {
                Verdict v = at(f, plus(c.sinceDeletion()));
                assertThat(v.state()).as("deleted " + c.sinceDeletion() + " ago").isEqualTo(c.state());
                assertThat(v.readiness().readyAt()).isEqualTo(plus(Duration.ofMinutes(10)));
            }
            for (Duration newestFact : List.of(Duration.ZERO, Duration.ofMinutes(9).plusSeconds(59))) {
                Verdict asOfFact = at(f, plus(newestFact));
                assertThat(asOfFact.nextDueAt()).as("evaluated " + newestFact + " after the deletion: due when the task retires")
                        .isEqualTo(plus(Duration.ofMinutes(10)));
                assertThat(asOfFact.recheck()).isZero();
                assertThat(asOfFact.blockers()).containsExactly("task task-1 is deleted and retires at " + plus(Duration.ofMinutes(10)));
            }
        }

        @Test
        void aDoneOrDroppedTaskRetiresOnceLongerThanTheCompletedWindow() {
            for (String status : List.of("DONE", "DROPPED")) {
                Facts f = coding(new Task("task-1", status, false, true, T, null, T));
                assertThat(at(f, plus(Duration.ofDays(7))).state()).as(status + " exactly the window").isEqualTo(State.IN_USE);
                assertThat(at(f, plus(Duration.ofDays(7)).plusMillis(1)).state()).as(status + " longer").isEqualTo(State.READY);
            }
        }

        @Test
        void theCompletedWindowIsAConfigValue() {
            Config fortnight = C.withCompletedWindow(Duration.ofDays(14));
            Facts f = coding(done(T, false));
            assertThat(RetirementRules.evaluate(f, plus(Duration.ofDays(8)), fortnight).state()).isEqualTo(State.IN_USE);
            assertThat(RetirementRules.evaluate(f, plus(Duration.ofDays(14)).plusMillis(1), fortnight).state()).isEqualTo(State.READY);
            assertThat(Config.defaults().completedWindow()).isEqualTo(Duration.ofDays(7));
        }

        @Test
        void aPinnedDoneTaskNeverRetiresButAPinnedDeletedOneDoes() {
            assertThat(at(coding(done(T, true)), plus(Duration.ofDays(400))).state()).isEqualTo(State.IN_USE);
            assertThat(at(coding(done(T, true)), plus(Duration.ofDays(400))).blockers()).contains("task task-1 is pinned");
            Task pinnedDeleted = new Task("task-1", "DELETED", true, true, null, T, T);
            assertThat(at(coding(pinnedDeleted), plus(Duration.ofMinutes(10))).state()).isEqualTo(State.READY);
        }

        @Test
        void anOpenTaskAnUnknownStatusOrARunWithoutATaskKeepItInUseAndItIsLookedAtAgainAfterSixHours() {
            for (Task t : List.of(new Task("task-1", "OPEN", false, true, null, null, T),
                    new Task("task-1", null, false, true, null, null, null),
                    new Task(null, null, false, true, null, null, null))) {
                Verdict v = at(coding(t), plus(Duration.ofDays(365)));
                assertThat(v.state()).isEqualTo(State.IN_USE);
                assertThat(v.readiness().readyAt()).isNull();
                assertThat(v.nextDueAt()).isEqualTo(plus(Duration.ofDays(365)).plus(Duration.ofHours(6)));
                assertThat(v.recheck()).isEqualTo(Duration.ofHours(6));
            }
        }

        @Test
        void everyTaskMustBeRetiredAndTheLastToRetireDecides() {
            Facts f = coding(deletedAt(T), new Task("task-2", "DONE", false, true, T.plus(Duration.ofDays(1)), null, T));
            assertThat(at(f, plus(Duration.ofDays(8))).state()).isEqualTo(State.IN_USE);
            assertThat(at(f, plus(Duration.ofDays(8)).plusMillis(1)).state()).isEqualTo(State.READY);
            assertThat(at(f, plus(Duration.ofHours(1))).nextDueAt()).as("due when the last task retires")
                    .isEqualTo(plus(Duration.ofDays(8)).plusMillis(1));
            Facts open = coding(deletedAt(T), new Task("task-2", "OPEN", false, true, null, null, T));
            assertThat(at(open, plus(Duration.ofHours(1))).nextDueAt()).as("a task in use: six hours").isEqualTo(plus(Duration.ofHours(7)));
        }

        @Test
        void aMissingCompletedOrDeletedTimeFallsBackToWhenTheTaskChanged() {
            Facts f = coding(new Task("task-1", "DELETED", false, true, null, null, T));
            assertThat(at(f, plus(Duration.ofMinutes(10))).state()).isEqualTo(State.READY);
        }
    }

    @Nested
    class WhatHoldsItUp {
        @Test
        void aRunQueuedOrGoingWaitsForTheNextSweep() {
            for (String status : List.of("QUEUED", "WORKING", "WAITING")) {
                Facts f = coding(List.of(deletedAt(T)), List.of(LAPTOP), ended("job-1"), new Run("job-2", status, T, null, null));
                Verdict v = at(f, plus(Duration.ofDays(1)));
                assertThat(v.state()).as(status).isEqualTo(State.RUN_GOING);
                assertThat(v.nextDueAt()).isEqualTo(plus(Duration.ofDays(1)));
                assertThat(v.recheck()).isZero();
                assertThat(v.blockers()).contains("run job-2 is " + status.toLowerCase());
            }
        }

        @Test
        void anOfflineComputerIsLookedAtAgainAfterAnHourAndNamed() {
            Facts f = coding(List.of(deletedAt(T)), List.of(new Computer("laptop", true, false, 1, T)), ended("job-1"));
            Verdict v = at(f, plus(Duration.ofMinutes(11)));
            assertThat(v.state()).isEqualTo(State.COMPUTER_UNAVAILABLE);
            assertThat(v.nextDueAt()).isEqualTo(plus(Duration.ofMinutes(71)));
            assertThat(v.blockers()).containsExactly("computer laptop is offline: connect it");
            assertThat(v.readiness().readyAt(plus(Duration.ofDays(3)))).isFalse();
        }

        @Test
        void aComputerTooOldToDeleteIsLookedAtAgainAfterAnHour() {
            Facts f = coding(List.of(deletedAt(T)), List.of(LAPTOP, new Computer("desktop", true, true, 0, T)), ended("job-1"));
            Verdict v = at(f, plus(Duration.ofMinutes(11)));
            assertThat(v.state()).isEqualTo(State.COMPUTER_UNAVAILABLE);
            assertThat(v.nextDueAt()).isEqualTo(plus(Duration.ofMinutes(71)));
            assertThat(v.blockers()).containsExactly("computer desktop is too old to delete sessions (sessionDelete 0): update it");
        }

        @Test
        void aComputerThatNeverReportedCountsAsUnavailable() {
            Facts f = coding(List.of(deletedAt(T)), List.of(new Computer("laptop", false, false, 0, null)), ended("job-1"));
            assertThat(at(f, plus(Duration.ofMinutes(11))).state()).isEqualTo(State.COMPUTER_UNAVAILABLE);
        }

        @Test
        void keepDaysZeroMeansNever() {
            Facts f = new Facts("job-1", "TASK_RUN", null, false, false, List.of(ended("job-1")), List.of(deletedAt(T)),
                    List.of(LAPTOP), 0, null, T, null);
            Verdict v = at(f, plus(Duration.ofDays(1000)));
            assertThat(v.state()).isEqualTo(State.KEPT);
            assertThat(v.nextDueAt()).isNull();
        }
    }

    @Nested
    class AFailedDeletion {
        static Facts deleting(Instant attempt, Instant failed, List<Computer> computers) {
            return new Facts("job-1", "TASK_RUN", null, false, true, List.of(new Run("job-1", "DONE", T, T, T)),
                    List.of(deletedAt(T)), computers, null, null, T, new Pending(Set.of("laptop"), attempt, failed));
        }

        @Test
        void isTriedAgainADayAfterTheFailure() {
            Facts f = deleting(T, plus(Duration.ofHours(2)), List.of(LAPTOP));
            Verdict before = at(f, plus(Duration.ofHours(25)).minusMillis(1));
            assertThat(before.state()).isEqualTo(State.DELETING);
            assertThat(before.nextDueAt()).isEqualTo(plus(Duration.ofHours(26)));
            Verdict due = at(f, plus(Duration.ofHours(26)));
            assertThat(due.state()).isEqualTo(State.READY);
            assertThat(due.readiness().reason()).isEqualTo(RetirementRules.RETRY);
        }

        @Test
        void anAttemptNoComputerAnsweredIsTriedAgainADayLater() {
            Facts f = deleting(T, null, List.of(LAPTOP));
            assertThat(at(f, plus(Duration.ofDays(1)).minusMillis(1)).state()).isEqualTo(State.DELETING);
            assertThat(at(f, plus(Duration.ofDays(1))).state()).isEqualTo(State.READY);
        }

        @Test
        void onlyTheComputersStillOwingAnAnswerMustBeOnline() {
            Facts f = deleting(T, T, List.of(LAPTOP, new Computer("desktop", true, false, 1, T)));
            assertThat(at(f, plus(Duration.ofDays(2))).state()).as("desktop confirmed already").isEqualTo(State.READY);
            Facts g = deleting(T, T, List.of(new Computer("laptop", true, false, 1, T)));
            assertThat(at(g, plus(Duration.ofDays(2))).state()).isEqualTo(State.COMPUTER_UNAVAILABLE);
        }
    }

    @Nested
    class NodeSessions {
        static Facts node(List<Task> tasks, Integer keepDays, Run... runs) {
            return new Facts("job-1", "TASK_RUN", "node:n1", false, false, List.of(runs), tasks, List.of(LAPTOP), keepDays, null, T, null);
        }

        static final Task NODE_TASK = new Task("task-n", "OPEN", false, false, null, null, T);

        @Test
        void goesOnceNoneOfItsRunsStartedOrFinishedInSevenDays() {
            Run r = new Run("job-1", "DONE", T.minus(Duration.ofDays(1)), T.minus(Duration.ofDays(1)), T);
            Facts f = node(List.of(NODE_TASK), null, r);
            assertThat(at(f, plus(Duration.ofDays(7)).minusMillis(1)).state()).isEqualTo(State.IN_USE);
            assertThat(at(f, plus(Duration.ofDays(7)).minusMillis(1)).nextDueAt()).as("looked at when it goes idle")
                    .isEqualTo(plus(Duration.ofDays(7)));
            Verdict v = at(f, plus(Duration.ofDays(7)));
            assertThat(v.state()).isEqualTo(State.READY);
            assertThat(v.readiness().reason()).isEqualTo(RetirementRules.NODE_IDLE);
        }

        @Test
        void aPersonsOwnOpenTaskStillKeepsIt() {
            Task persons = new Task("task-p", "OPEN", false, true, null, null, T);
            Facts f = node(List.of(NODE_TASK, persons), null, new Run("job-1", "DONE", T, T, T));
            assertThat(at(f, plus(Duration.ofDays(30))).state()).isEqualTo(State.IN_USE);
            Task personsDone = new Task("task-p", "DONE", false, true, T, null, T);
            assertThat(at(node(List.of(NODE_TASK, personsDone), null, new Run("job-1", "DONE", T, T, T)), plus(Duration.ofDays(7))).state())
                    .isEqualTo(State.READY);
        }

        @Test
        void keepDaysOverridesSevenDays() {
            Facts f = node(List.of(NODE_TASK), 2, new Run("job-1", "DONE", T, T, T));
            assertThat(at(f, plus(Duration.ofDays(2))).state()).isEqualTo(State.READY);
            assertThat(at(node(List.of(NODE_TASK), 0, new Run("job-1", "DONE", T, T, T)), plus(Duration.ofDays(99))).state())
                    .isEqualTo(State.KEPT);
        }
    }

    @Nested
    class IdleKinds {
        static Facts idle(String kind, Integer keepDays, Instant nextRunAt, Instant lastUse) {
            return new Facts("chat-1", kind, null, false, false, List.of(new Run("chat-1", "DONE", lastUse, lastUse, lastUse)),
                    List.of(new Task(null, null, false, true, null, null, null)), List.of(LAPTOP), keepDays, nextRunAt, lastUse, null);
        }

        @Test
        void anAskGoesThirtyMinutesAfterItsLastAnswerWhateverItsKeepDaysOfOne() {
            for (Integer keep : new Integer[]{null, 1}) {
                Facts f = idle("ASK", keep, null, T);
                assertThat(at(f, plus(Duration.ofMinutes(30)).minusMillis(1)).state()).isEqualTo(State.IN_USE);
                assertThat(at(f, plus(Duration.ofMinutes(30)).minusMillis(1)).nextDueAt()).isEqualTo(plus(Duration.ofMinutes(30)));
                Verdict v = at(f, plus(Duration.ofMinutes(30)));
                assertThat(v.state()).isEqualTo(State.READY);
                assertThat(v.readiness().reason()).isEqualTo(RetirementRules.IDLE);
            }
            assertThat(at(idle("ASK", 0, null, T), plus(Duration.ofDays(9))).state()).isEqualTo(State.KEPT);
        }

        @Test
        void anAssistantChatGoesAfterThirtyDaysUnusedOrItsKeepDays() {
            assertThat(at(idle("ASSISTANT_CHAT", null, null, T), plus(Duration.ofDays(30)).minusMillis(1)).state()).isEqualTo(State.IN_USE);
            assertThat(at(idle("ASSISTANT_CHAT", null, null, T), plus(Duration.ofDays(30))).state()).isEqualTo(State.READY);
            assertThat(at(idle("ASSISTANT_CHAT", 3, null, T), plus(Duration.ofDays(3))).state()).isEqualTo(State.READY);
            assertThat(at(idle("ASSISTANT_CHAT", 0, null, T), plus(Duration.ofDays(3000))).state()).isEqualTo(State.KEPT);
        }

        @Test
        void aNodeConversationGoesAfterSevenDaysUnused() {
            assertThat(at(idle("NODE_RUN", null, null, T), plus(Duration.ofDays(7)).minusMillis(1)).state()).isEqualTo(State.IN_USE);
            assertThat(at(idle("NODE_RUN", null, null, T), plus(Duration.ofDays(7))).state()).isEqualTo(State.READY);
        }

        @Test
        void aRoutineIsKeptTwiceTheGapToItsNextRunWithinThirtyToNinetyDays() {
            assertThat(RetirementRules.routineTtl(T, plus(Duration.ofDays(1)), C)).as("daily").isEqualTo(Duration.ofDays(30));
            assertThat(RetirementRules.routineTtl(T, plus(Duration.ofDays(15)), C)).isEqualTo(Duration.ofDays(30));
            assertThat(RetirementRules.routineTtl(T, plus(Duration.ofDays(20)), C)).isEqualTo(Duration.ofDays(40));
            assertThat(RetirementRules.routineTtl(T, plus(Duration.ofDays(30)), C)).as("monthly").isEqualTo(Duration.ofDays(60));
            assertThat(RetirementRules.routineTtl(T, plus(Duration.ofDays(45)), C)).isEqualTo(Duration.ofDays(90));
            assertThat(RetirementRules.routineTtl(T, plus(Duration.ofDays(91)), C)).as("quarterly").isEqualTo(Duration.ofDays(90));
            assertThat(RetirementRules.routineTtl(T, null, C)).as("next run unknown").isEqualTo(Duration.ofDays(90));
            Facts monthly = idle("ROUTINE", null, plus(Duration.ofDays(30)), T);
            assertThat(at(monthly, plus(Duration.ofDays(60)).minusMillis(1)).state()).isEqualTo(State.IN_USE);
            assertThat(at(monthly, plus(Duration.ofDays(60))).state()).isEqualTo(State.READY);
            assertThat(at(idle("ROUTINE", 5, plus(Duration.ofDays(30)), T), plus(Duration.ofDays(5))).state())
                    .as("keepDays overrides").isEqualTo(State.READY);
        }

        @Test
        void aOneOffGoesOnceItsTurnEnded() {
            assertThat(at(idle("ONE_OFF", null, null, T), T).state()).isEqualTo(State.READY);
        }

        @Test
        void aDeletedSessionIsNeverLookedAtAgain() {
            Facts f = new Facts("job-1", "TASK_RUN", null, true, false, List.of(ended("job-1")), List.of(deletedAt(T)),
                    List.of(LAPTOP), null, null, T, null);
            Verdict v = at(f, plus(Duration.ofDays(1)));
            assertThat(v.state()).isEqualTo(State.DELETED);
            assertThat(v.nextDueAt()).isNull();
        }
    }
}

package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.projector.DeletionGuard.Decision;
import dev.ensemble.sessions.projector.DeletionGuard.Request;
import dev.ensemble.sessions.projector.RetirementRules.Computer;
import dev.ensemble.sessions.projector.RetirementRules.Config;
import dev.ensemble.sessions.projector.RetirementRules.Facts;
import dev.ensemble.sessions.projector.RetirementRules.Pending;
import dev.ensemble.sessions.projector.RetirementRules.Run;
import dev.ensemble.sessions.projector.RetirementRules.Task;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The guard of guide §6, one case per rule: given a session and a request, expect accepted or the skip reason. */
class DeletionGuardTest {
    static final Config C = Config.defaults();
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final Instant LATER = T.plus(Duration.ofDays(30));
    static final Computer LAPTOP = new Computer("laptop", true, true, 1, T);
    static final Task RETIRED = new Task("task-1", "DONE", false, true, T, null, T);
    static final Task OPEN = new Task("task-1", "OPEN", false, true, null, null, T);

    static Facts session(List<Run> runs, List<Task> tasks, List<Computer> computers) {
        return new Facts("job-1", "TASK_RUN", null, false, false, runs, tasks, computers, null, null, T, null);
    }

    static Facts idleSession() {
        return session(List.of(done("job-1"), done("job-2")), List.of(RETIRED), List.of(LAPTOP));
    }

    static Run done(String id) {
        return new Run(id, "DONE", T, T, T);
    }

    static Request system(String reason, String... runs) {
        return new Request("req-1", "system", "cleanup", null, reason, List.of(runs));
    }

    static Request person(String... runs) {
        return new Request("req-1", "person", "ana", null, "person", List.of(runs));
    }

    static Decision decide(Facts f, Request r) {
        return DeletionGuard.decide(f, r, LATER, C);
    }

    @Test
    void aRetiredSessionWithTheRunsTheRequesterSawAndNoneGoingIsAccepted() {
        Decision d = decide(idleSession(), system("retired", "job-2", "job-1"));
        assertThat(d.accepted()).isTrue();
        assertThat(d.computersToAsk()).containsExactly("laptop");
        assertThat(d.retry()).isFalse();
    }

    @Test
    void anUnknownOrDeletedSessionIsLeftAlone() {
        assertThat(decide(null, person("job-1")).code()).isEqualTo("unknown-session");
        Facts deleted = new Facts("job-1", "TASK_RUN", null, true, false, List.of(done("job-1")), List.of(RETIRED), List.of(LAPTOP),
                null, null, T, null);
        assertThat(decide(deleted, person("job-1")).code()).isEqualTo("already-deleted");
    }

    @Test
    void theSessionMustHaveExactlyTheRunsTheRequesterSaw() {
        assertThat(decide(idleSession(), system("retired", "job-1")).code()).as("a run more").isEqualTo("runs-changed");
        assertThat(decide(idleSession(), system("retired", "job-1", "job-2", "job-3")).code()).as("a run fewer").isEqualTo("runs-changed");
        assertThat(decide(idleSession(), system("retired", "job-1", "job-1", "job-2")).code()).as("not a set").isEqualTo("runs-changed");
        assertThat(decide(idleSession(), person()).code()).isEqualTo("runs-changed");
    }

    @Test
    void noRunMayBeGoingAndTheSystemAlsoWaitsForQueuedOnes() {
        for (String going : List.of("WORKING", "WAITING")) {
            Facts f = session(List.of(done("job-1"), new Run("job-2", going, T, T, null)), List.of(RETIRED), List.of(LAPTOP));
            assertThat(decide(f, person("job-1", "job-2")).code()).isEqualTo("run-going");
            assertThat(decide(f, system("retired", "job-1", "job-2")).code()).isEqualTo("run-going");
        }
        Facts queued = session(List.of(done("job-1"), new Run("job-2", "QUEUED", T, null, null)), List.of(RETIRED), List.of(LAPTOP));
        assertThat(decide(queued, system("retired", "job-1", "job-2")).code()).isEqualTo("run-queued");
        Decision d = decide(queued, person("job-1", "job-2"));
        assertThat(d.accepted()).isTrue();
        assertThat(d.cancelRunIds()).as("a person's deletion cancels the queued runs").containsExactly("job-2");
    }

    @Test
    void forARetirementEveryTaskMustStillBeRetiredAtTheRequestsTime() {
        Facts open = session(List.of(done("job-1")), List.of(RETIRED, new Task("task-2", "OPEN", false, true, null, null, T)), List.of(LAPTOP));
        Decision d = decide(open, system("retired", "job-1"));
        assertThat(d.code()).isEqualTo("task-in-use");
        assertThat(d.detail()).contains("task task-2 is open");
        Facts deleted = session(List.of(done("job-1")), List.of(new Task("task-1", "DELETED", false, true, null, T, T)), List.of(LAPTOP));
        assertThat(DeletionGuard.decide(deleted, system("retired", "job-1"), T.plusSeconds(9 * 60), C).code()).isEqualTo("task-in-use");
        assertThat(DeletionGuard.decide(deleted, system("retired", "job-1"), T.plusSeconds(11 * 60), C).accepted()).isTrue();
    }

    @Test
    void aPersonDeletesWhateverItsTasks() {
        Facts open = session(List.of(done("job-1")), List.of(OPEN), List.of(LAPTOP));
        assertThat(decide(open, person("job-1")).accepted()).isTrue();
    }

    @Test
    void theSystemGivesAKnownReasonAndTheSessionMustBeReadyForIt() {
        assertThat(decide(idleSession(), system("tidy", "job-1", "job-2")).code()).isEqualTo("unknown-reason");
        assertThat(decide(idleSession(), system("idle", "job-1", "job-2")).code()).as("a coding session is not idle-reaped").isEqualTo("not-idle");
        assertThat(decide(idleSession(), system("retry", "job-1", "job-2")).code()).isEqualTo("nothing-to-retry");
        Facts kept = new Facts("job-1", "TASK_RUN", null, false, false, List.of(done("job-1")), List.of(RETIRED), List.of(LAPTOP),
                0, null, T, null);
        assertThat(decide(kept, system("retired", "job-1")).code()).isEqualTo("kept");
        assertThat(decide(kept, person("job-1")).accepted()).as("keepDays binds only the system").isTrue();
    }

    @Test
    void everyComputerMustBeOnlineAndAbleToDelete() {
        assertThat(decide(session(List.of(done("job-1")), List.of(RETIRED), List.of(LAPTOP, new Computer("desk", true, false, 1, T))),
                person("job-1")).code()).isEqualTo("computer-offline");
        Decision old = decide(session(List.of(done("job-1")), List.of(RETIRED), List.of(new Computer("desk", true, true, 0, T))), person("job-1"));
        assertThat(old.code()).isEqualTo("computer-cannot-delete");
        assertThat(old.detail()).contains("desk").contains("update it");
        assertThat(decide(session(List.of(done("job-1")), List.of(RETIRED), List.of(new Computer("desk", false, false, 0, null))),
                person("job-1")).code()).isEqualTo("computer-unknown");
    }

    @Test
    void aNodeDeletesOnlyItsOwnSessionsAndOnlyWithItsOwnersConfirmation() {
        Facts own = new Facts("job-1", "TASK_RUN", "node:n1", false, false, List.of(done("job-1")), List.of(OPEN), List.of(LAPTOP),
                null, null, T, null);
        assertThat(decide(own, new Request("r", "node", "n1", "ana", "node", List.of("job-1"))).accepted()).isTrue();
        assertThat(decide(own, new Request("r", "node", "n1", null, "node", List.of("job-1"))).code()).isEqualTo("unconfirmed");
        assertThat(decide(own, new Request("r", "node", "n2", "ana", "node", List.of("job-1"))).code()).isEqualTo("not-own-session");
        assertThat(decide(idleSession(), new Request("r", "node", "n1", "ana", "node", List.of("job-1", "job-2"))).code())
                .isEqualTo("not-own-session");
    }

    @Test
    void aSessionBeingDeletedIsRetriedAskingOnlyTheComputersThatHaveNotConfirmed() {
        Facts deleting = new Facts("job-1", "TASK_RUN", null, false, true, List.of(done("job-1")), List.of(OPEN),
                List.of(LAPTOP, new Computer("desk", true, false, 1, T)), null, null, T, new Pending(Set.of("laptop"), T, T));
        Decision d = decide(deleting, system("retry", "job-1"));
        assertThat(d.accepted()).isTrue();
        assertThat(d.retry()).isTrue();
        assertThat(d.computersToAsk()).as("desk confirmed already; the task reopened does not matter once accepted").containsExactly("laptop");
        Facts laptopOffline = new Facts("job-1", "TASK_RUN", null, false, true, List.of(done("job-1")), List.of(OPEN),
                List.of(new Computer("laptop", true, false, 1, T)), null, null, T, new Pending(Set.of("laptop"), T, T));
        assertThat(decide(laptopOffline, system("retry", "job-1")).code()).isEqualTo("computer-offline");
    }
}

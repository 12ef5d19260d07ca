package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.SessionDeletionSkipped;
import dev.ensemble.sessions.events.TaskStatus;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionView;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static dev.ensemble.sessions.projector.DeletionFixture.answer;
import static dev.ensemble.sessions.projector.DeletionFixture.claimed;
import static dev.ensemble.sessions.projector.DeletionFixture.computer;
import static dev.ensemble.sessions.projector.DeletionFixture.engine;
import static dev.ensemble.sessions.projector.DeletionFixture.event;
import static dev.ensemble.sessions.projector.DeletionFixture.min;
import static dev.ensemble.sessions.projector.DeletionFixture.request;
import static dev.ensemble.sessions.projector.DeletionFixture.status;
import static dev.ensemble.sessions.projector.DeletionFixture.task;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deletion workflow of guide §6 through the projector's real topology: request → guard → accepted or
 * skipped → queued runs cancelled → each computer asked → answers → deleted; and the retirement view.
 */
class DeletionWorkflowTest {

    /** A session of two runs on the laptop (job-1 done, job-2 done), task-1, agent sessions a and b. */
    static DeletionFixture twoRuns() {
        DeletionFixture f = new DeletionFixture();
        f.given(computer("laptop", true, 1, min(0)),
                claimed("job-1", null, "task-1", "laptop", min(1)), engine("job-1", "agent-a", min(2)), status("job-1", RunStatus.DONE, min(3)),
                claimed("job-2", "job-1", "task-1", "laptop", min(4)), engine("job-2", "agent-b", min(5)), status("job-2", RunStatus.DONE, min(6)));
        return f;
    }

    @Test
    void aRetirementViewIsPublishedAgainOnlyWhenItChanged() {
        try (DeletionFixture f = twoRuns()) {
            RetirementView before = f.retirement("job-1");
            long sessionSequence = f.session("job-1").getSequence();
            f.given(engine("job-2", "agent-b", min(5))); // the session changes, its retirement facts do not
            assertThat(f.session("job-1").getSequence()).as("the session changed: its retirement was evaluated again")
                    .isGreaterThan(sessionSequence);
            assertThat(f.retirement("job-1").getSequence()).as("the same view is not published again")
                    .isEqualTo(before.getSequence());

            f.given(engine("job-2", "agent-c", min(5)));
            RetirementView after = f.retirement("job-1");
            assertThat(after.getAgentSessionIds()).containsExactly("agent-a", "agent-b", "agent-c");
            assertThat(after.getSequence()).as("a changed view is published with a higher sequence").isGreaterThan(before.getSequence());
        }
    }

    @Test
    void aRetiredSessionIsDeletedStepByStepAndTheAuditKeepsEveryStep() {
        try (DeletionFixture f = twoRuns()) {
            f.given(task("task-1", TaskStatus.DELETED, false, min(10)));
            RetirementView before = f.retirement("job-1");
            assertThat(before.getState()).as("deleted 0 minutes ago: Undo still finds it").isEqualTo("IN_USE");
            assertThat(before.getReadyAt()).isEqualTo(min(20));
            assertThat(before.getRunIds()).containsExactly("job-1", "job-2");

            Event req = request("job-1", Requester.system, "cleanup", "retired", List.of("job-1", "job-2"), min(21));
            f.given(req);
            SessionDeletionAccepted a = f.appended(SessionDeletionAccepted.class).get(0);
            assertThat(a.getRequestId()).isEqualTo(req.getEventId());
            assertThat(a.getComputerIds()).containsExactly("laptop");
            assertThat(a.getAgent()).isEqualTo("claude-code");
            assertThat(a.getAgentSessionIds()).containsExactly("agent-a", "agent-b");
            assertThat(f.appended.get(0).getEventId()).isEqualTo(DeletionWorkflow.decisionId(req.getEventId()));
            assertThat(f.appended.get(0).getSource()).isEqualTo("service:projector");
            assertThat(f.session("job-1").getDeleting()).isTrue();
            assertThat(f.session("job-1").getResumable()).isFalse();
            assertThat(f.retirement("job-1").getState()).isEqualTo("DELETING");
            assertThat(f.retirement("job-1").getDeletion().getOwedComputerIds()).containsExactly("laptop");

            f.given(answer("job-1", req.getEventId(), "laptop", true, null, min(22)));
            SessionDeleted d = f.appended(SessionDeleted.class).get(0);
            assertThat(d.getRequestId()).isEqualTo(req.getEventId());
            assertThat(f.session("job-1").getDeleted()).isTrue();
            assertThat(f.retirement("job-1").getState()).isEqualTo("DELETED");
            assertThat(f.retirement("job-1").getNextDueAt()).isNull();

            DeletionAudit audit = f.audit(req.getEventId());
            assertThat(audit.getRequestedBy()).isEqualTo("system");
            assertThat(audit.getReason()).isEqualTo("retired");
            assertThat(audit.getDecision()).isEqualTo("ACCEPTED");
            assertThat(audit.getDecidedAt()).isEqualTo(min(21));
            assertThat(audit.getGuard().getSessionRunIds()).containsExactly("job-1", "job-2");
            assertThat(audit.getGuard().getTasks().get(0).getRetiredAt()).isEqualTo(min(20));
            assertThat(audit.getGuard().getComputers().get(0).getOnline()).isTrue();
            assertThat(audit.getComputersAsked()).containsExactly("laptop");
            assertThat(audit.getAnswers()).hasSize(1);
            assertThat(audit.getAnswers().get(0).getOk()).isTrue();
            assertThat(audit.getStatus()).isEqualTo("DELETED");
            assertThat(audit.getDeletedAt()).isEqualTo(min(22));
            assertThat(f.dead).isEmpty();
            // counted for GET /metrics: one accepted, one deleted
            assertThat(f.counted("accepted", "none")).isEqualTo(1.0);
            assertThat(f.counted("deleted", "none")).isEqualTo(1.0);
            assertThat(f.counted("skipped", "task-in-use")).isZero();
        }
    }

    @Test
    void aRequestForATaskDeletedNineMinutesAgoIsSkippedAndElevenMinutesAgoAccepted() {
        try (DeletionFixture f = twoRuns()) {
            f.given(task("task-1", TaskStatus.DELETED, false, min(10)));
            Event early = request("job-1", Requester.system, "cleanup", "retired", List.of("job-1", "job-2"), min(19));
            f.given(early);
            SessionDeletionSkipped s = f.appended(SessionDeletionSkipped.class).get(0);
            assertThat(s.getReason()).startsWith("task-in-use");
            assertThat(f.audit(early.getEventId()).getStatus()).isEqualTo("SKIPPED");
            assertThat(f.session("job-1").getDeleting()).isFalse();
            assertThat(f.retirement("job-1").getLastSkip().getReason()).isEqualTo("task-in-use");
            f.given(request("job-1", Requester.system, "cleanup", "retired", List.of("job-1", "job-2"), min(21)));
            assertThat(f.appended(SessionDeletionAccepted.class)).hasSize(1);
            assertThat(f.dead).isEmpty();
            assertThat(f.counted("skipped", "task-in-use")).as("counted by the guard's reason code").isEqualTo(1.0);
            assertThat(f.counted("accepted", "none")).isEqualTo(1.0);
        }
    }

    @Test
    void theGuardComparesTheRunsTheRequesterSawAndRefusesWhileARunIsGoing() {
        try (DeletionFixture f = twoRuns()) {
            f.given(task("task-1", TaskStatus.DONE, false, min(10)));
            // the cleanup saw two runs; meanwhile a third started
            f.given(claimed("job-3", "job-2", "task-1", "laptop", at(8, 0)));
            f.given(request("job-1", Requester.system, "cleanup", "retired", List.of("job-1", "job-2"), at(8, 1)));
            assertThat(f.appended(SessionDeletionSkipped.class).get(0).getReason()).startsWith("runs-changed");
            f.given(request("job-1", Requester.person, "ana", "person", List.of("job-1", "job-2", "job-3"), at(8, 2)));
            SessionDeletionSkipped going = f.appended(SessionDeletionSkipped.class).get(1);
            assertThat(going.getReason()).startsWith("run-going");
            assertThat(going.getGoingRunIds()).containsExactly("job-3");
            assertThat(f.session("job-1").getDeleting()).isFalse();
        }
    }

    static java.time.Instant at(int days, int minutes) {
        return min(days * 24L * 60 + minutes);
    }

    @Test
    void aPersonsDeletionCancelsQueuedRunsAndEveryComputerMustConfirm() {
        try (DeletionFixture f = new DeletionFixture()) {
            f.given(computer("laptop", true, 1, min(0)), computer("desk", true, 2, min(0)),
                    claimed("job-1", null, "task-1", "laptop", min(1)), status("job-1", RunStatus.DONE, min(2)),
                    claimed("job-2", "job-1", "task-1", "desk", min(3)), status("job-2", RunStatus.DONE, min(4)),
                    claimed("job-3", "job-2", "task-1", "desk", min(5)), status("job-3", RunStatus.QUEUED, min(5)));
            Event req = request("job-1", Requester.person, "ana", "person", List.of("job-1", "job-2", "job-3"), min(6));
            f.given(req);
            SessionDeletionAccepted a = f.appended(SessionDeletionAccepted.class).get(0);
            assertThat(a.getCancelledRunIds()).containsExactly("job-3");
            assertThat(a.getComputerIds()).containsExactly("laptop", "desk");
            assertThat(f.session("job-1").getRuns()).filteredOn(r -> r.getRunId().equals("job-3")).extracting(RunView::getStatus)
                    .containsExactly("CANCELLED");
            f.given(answer("job-1", req.getEventId(), "desk", true, null, min(7)));
            assertThat(f.appended(SessionDeleted.class)).as("the laptop has not confirmed").isEmpty();
            assertThat(f.retirement("job-1").getDeletion().getOwedComputerIds()).containsExactly("laptop");
            f.given(answer("job-1", req.getEventId(), "laptop", true, null, min(8)));
            assertThat(f.appended(SessionDeleted.class)).hasSize(1);
            assertThat(f.audit(req.getEventId()).getAnswers()).extracting(x -> x.getComputerId()).containsExactly("desk", "laptop");
        }
    }

    @Test
    void aFailedDeletionIsRetriedADayLaterAskingOnlyTheComputersThatOweAnAnswer() {
        try (DeletionFixture f = new DeletionFixture()) {
            f.given(computer("laptop", true, 1, min(0)), computer("desk", true, 1, min(0)),
                    claimed("job-1", null, "task-1", "laptop", min(1)), status("job-1", RunStatus.DONE, min(2)),
                    claimed("job-2", "job-1", "task-1", "desk", min(3)), status("job-2", RunStatus.DONE, min(4)));
            Event req = request("job-1", Requester.person, "ana", "person", List.of("job-1", "job-2"), min(10));
            f.given(req, answer("job-1", req.getEventId(), "desk", true, null, min(11)),
                    answer("job-1", req.getEventId(), "laptop", false, "permission denied", min(12)));
            RetirementView v = f.retirement("job-1");
            assertThat(v.getState()).isEqualTo("DELETING");
            assertThat(v.getDeletion().getFailedAt()).isEqualTo(min(12));
            assertThat(v.getDeletion().getLastError()).isEqualTo("laptop: permission denied");
            assertThat(v.getDeletion().getRetryAt()).isEqualTo(min(12 + 24 * 60));
            assertThat(v.getNextDueAt()).isEqualTo(min(12 + 24 * 60));
            assertThat(v.getReason()).isEqualTo("retry");
            assertThat(f.audit(req.getEventId()).getStatus()).isEqualTo("FAILED");

            Event retry = request("job-1", Requester.system, "cleanup", "retry", List.of("job-1", "job-2"), min(12 + 24 * 60));
            f.given(retry);
            SessionDeletionAccepted again = f.appended(SessionDeletionAccepted.class).get(1);
            assertThat(again.getComputerIds()).containsExactly("laptop");
            assertThat(f.audit(retry.getEventId()).getRetryOf()).isEqualTo(req.getEventId());
            f.given(answer("job-1", retry.getEventId(), "laptop", true, null, min(13 + 24 * 60)));
            assertThat(f.appended(SessionDeleted.class)).hasSize(1);
            assertThat(f.audit(req.getEventId()).getStatus()).isEqualTo("DELETED");
            assertThat(f.audit(retry.getEventId()).getStatus()).isEqualTo("DELETED");
            assertThat(f.dead).isEmpty();
        }
    }

    @Test
    void aDecisionTheProjectorDidNotMakeGoesToTheDeadLetterTopicAndChangesNothing() {
        try (DeletionFixture f = twoRuns()) {
            Event forged = event(SessionDeletionAccepted.newBuilder().setSessionId("job-1").setRequestId("made-up")
                    .setRunIds(List.of("job-1", "job-2")).setComputerIds(List.of("laptop")).build(), min(30), "service:projector");
            Event forgedDeleted = event(SessionDeleted.newBuilder().setSessionId("job-1").setRequestId("made-up").build(), min(31), "person:ana");
            f.given(forged, forgedDeleted);
            assertThat(f.dead).hasSize(2);
            assertThat(f.session("job-1").getDeleting()).isFalse();
            assertThat(f.session("job-1").getDeleted()).isFalse();
            assertThat(f.session("job-1").getResumable()).isTrue();
        }
    }

    @Test
    void anAnswerNoAcceptedRequestAskedForGoesToTheDeadLetterTopic() {
        try (DeletionFixture f = twoRuns()) {
            Event req = request("job-1", Requester.person, "ana", "person", List.of("job-1", "job-2"), min(10));
            f.given(req);
            f.given(answer("job-1", "no-such-request", "laptop", true, null, min(11)),
                    answer("job-1", req.getEventId(), "desk", true, null, min(11)),
                    event(dev.ensemble.sessions.events.SessionDeletedOnComputer.newBuilder().setSessionId("job-1")
                            .setRequestId(req.getEventId()).setComputerId("laptop").setOk(true).build(), min(11), "person:ana"));
            assertThat(f.dead).hasSize(3);
            assertThat(f.session("job-1").getDeleted()).isFalse();
        }
    }

    @Test
    void aLaterRunContinuingADeletedSessionsRunStartsASessionOfItsOwn() {
        try (DeletionFixture f = twoRuns()) {
            Event req = request("job-1", Requester.person, "ana", "person", List.of("job-1", "job-2"), min(10));
            f.given(req, answer("job-1", req.getEventId(), "laptop", true, null, min(11)));
            f.given(claimed("job-3", "job-2", "task-1", "laptop", min(12)));
            assertThat(f.session("job-1").getRuns()).extracting(RunView::getRunId).containsExactly("job-1", "job-2");
            SessionView fresh = f.session("job-3");
            assertThat(fresh.getContinuesSessionId()).isEqualTo("job-1");
            assertThat(f.retirement("job-3").getState()).isEqualTo("RUN_GOING");
        }
    }

    @Test
    void aComputerGoingOfflineOrOnlineChangesTheRetirementView() {
        try (DeletionFixture f = twoRuns()) {
            f.given(task("task-1", TaskStatus.DELETED, false, min(10)), computer("laptop", false, 1, min(30)));
            assertThat(f.retirement("job-1").getState()).isEqualTo("COMPUTER_UNAVAILABLE");
            assertThat(f.retirement("job-1").getNextDueAt()).isEqualTo(min(90));
            assertThat(f.retirement("job-1").getBlockers()).containsExactly("computer laptop is offline: connect it");
            f.given(computer("laptop", true, 1, min(40)));
            assertThat(f.retirement("job-1").getState()).isEqualTo("READY");
            assertThat(f.retirement("job-1").getComputersReady()).isTrue();
        }
    }

    @Test
    void aTaskChangeReportedBeforeItsFirstRunCountsOnceTheRunArrives() {
        try (DeletionFixture f = new DeletionFixture()) {
            f.given(computer("laptop", true, 1, min(0)), task("task-9", TaskStatus.DELETED, false, min(1)),
                    claimed("job-9", null, "task-9", "laptop", min(2)), status("job-9", RunStatus.DONE, min(3)));
            RetirementView v = f.retirement("job-9");
            assertThat(v.getTasks().get(0).getStatus()).isEqualTo("DELETED");
            assertThat(v.getReadyAt()).isEqualTo(min(11));
        }
    }

    @Test
    void replayingTheSameLogDecidesTheSameAndAppendsOnlyDuplicates() {
        List<Event> log;
        Map<String, String> firstDecisions;
        try (DeletionFixture f = twoRuns()) {
            f.given(task("task-1", TaskStatus.DELETED, false, min(10)));
            Event early = request("job-1", Requester.system, "cleanup", "retired", List.of("job-1", "job-2"), min(15));
            Event req = request("job-1", Requester.system, "cleanup", "retired", List.of("job-1", "job-2"), min(21));
            f.given(early, req, answer("job-1", req.getEventId(), "laptop", true, null, min(22)));
            log = new java.util.ArrayList<>(f.piped);
            log.addAll(f.appended); // the log as a broker holds it: what was written, then the projector's own decisions
            firstDecisions = f.appended.stream().collect(Collectors.toMap(Event::getEventId, e -> e.getPayload().getClass().getSimpleName()));
        }
        try (DeletionFixture replay = new DeletionFixture()) {
            replay.given(log.toArray(Event[]::new));
            Map<String, String> again = replay.appended.stream().collect(Collectors.toMap(Event::getEventId,
                    e -> e.getPayload().getClass().getSimpleName(), (a, b) -> a));
            assertThat(again).isEqualTo(firstDecisions);
            assertThat(replay.dead).as("the earlier decisions in the log are duplicates, not foreign").isEmpty();
            assertThat(replay.session("job-1").getDeleted()).isTrue();
        }
    }
}

package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.views.RetirementView;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static dev.ensemble.sessions.cleanup.Views.T0;
import static dev.ensemble.sessions.cleanup.Views.base;
import static dev.ensemble.sessions.cleanup.Views.inUse;
import static dev.ensemble.sessions.cleanup.Views.offline;
import static dev.ensemble.sessions.cleanup.Views.retired;
import static org.assertj.core.api.Assertions.assertThat;

/** One sweep of one account (guide §6), one case per rule. */
class SweepPlannerTest {
    static final CleanupConfig C = CleanupConfig.defaults();
    static final Instant NOW = T0.plus(Duration.ofDays(1));

    @Test
    void aSweepLooksAtNoMoreThanSixtySessions() {
        List<RetirementView> due = new ArrayList<>();
        for (int i = 0; i < 61; i++) {
            due.add(inUse("s" + i, T0));
        }
        SweepPlanner.Plan p = SweepPlanner.plan(due, NOW, C);
        assertThat(p.lookedAt()).isEqualTo(60);
        assertThat(p.lookAt()).hasSize(60).doesNotContainKey("s60");
        assertThat(p.requests()).isEmpty();
    }

    @Test
    void aSweepAsksForAtMostTwentyDeletionsAndTheRestComeFirstNextTime() {
        List<RetirementView> due = new ArrayList<>();
        for (int i = 0; i < 21; i++) {
            due.add(retired("s" + i, T0));
        }
        SweepPlanner.Plan p = SweepPlanner.plan(due, NOW, C);
        assertThat(p.requests()).hasSize(20);
        assertThat(p.requests()).extracting(SweepPlanner.Request::sessionId).doesNotContain("s20");
        assertThat(p.lookAt()).as("the 21st keeps its due time").doesNotContainKey("s20");
        assertThat(p.lookAt().get("s0")).as("asked for: looked at again in an hour unless its view changes first")
                .isEqualTo(NOW.plus(Duration.ofHours(1)));
        SweepPlanner.Request r = p.requests().get(0);
        assertThat(r.reason()).isEqualTo("retired");
        assertThat(r.runIds()).containsExactly("s0");
    }

    @Test
    void aSessionThatIsNotReadyIsSkippedAndLookedAtAgainAtItsNextDueTime() {
        SweepPlanner.Plan p = SweepPlanner.plan(List.of(inUse("busy", T0), retired("ready", T0)), NOW, C);
        assertThat(p.requests()).extracting(SweepPlanner.Request::sessionId).containsExactly("ready");
        assertThat(p.lookAt().get("busy")).as("six hours after this look").isEqualTo(NOW.plus(Duration.ofHours(6)));
    }

    @Test
    void aComputerOfflineOrTooOldIsLookedAtAgainAfterAnHour() {
        SweepPlanner.Plan p = SweepPlanner.plan(List.of(offline("off", T0)), NOW, C);
        assertThat(p.requests()).isEmpty();
        assertThat(p.lookAt().get("off")).isEqualTo(NOW.plus(Duration.ofHours(1)));
    }

    @Test
    void aSessionBecomesReadyWhenItsReadyTimePassesWithoutANewView() {
        RetirementView doneTask = base("s", T0).setState("IN_USE").setReason("retired").setReadyAt(T0.plus(Duration.ofDays(7)))
                .setNextDueAt(T0.plus(Duration.ofHours(6))).setRecheckMs(Duration.ofHours(6).toMillis()).build();
        assertThat(SweepPlanner.deletable(doneTask, T0.plus(Duration.ofDays(7)).minusMillis(1))).isFalse();
        assertThat(SweepPlanner.deletable(doneTask, T0.plus(Duration.ofDays(7)))).isTrue();
    }

    @Test
    void aRunGoingIsLookedAtAgainAtTheNextSweep() {
        RetirementView going = base("s", T0).setState("RUN_GOING").setReason("retired").setReadyAt(T0).setRunsIdle(false)
                .setNextDueAt(T0).setRecheckMs(0).build();
        SweepPlanner.Plan p = SweepPlanner.plan(List.of(going), NOW, C);
        assertThat(p.requests()).isEmpty();
        assertThat(p.lookAt().get("s")).isEqualTo(NOW.plus(Duration.ofMinutes(15)));
    }

    @Test
    void aFailedDeletionIsAskedAgainADayLater() {
        RetirementView failed = base("s", T0).setState("DELETING").setReason("retry").setReadyAt(T0.plus(Duration.ofDays(1)))
                .setNextDueAt(T0.plus(Duration.ofDays(1))).build();
        assertThat(SweepPlanner.plan(List.of(failed), T0.plus(Duration.ofHours(23)), C).requests()).isEmpty();
        SweepPlanner.Plan p = SweepPlanner.plan(List.of(failed), T0.plus(Duration.ofDays(1)), C);
        assertThat(p.requests()).extracting(SweepPlanner.Request::reason).containsExactly("retry");
    }

    @Test
    void keptAndDeletedSessionsAreNotLookedAtAgain() {
        RetirementView kept = base("k", T0).setState("KEPT").setKept(true).setReason("retired").setReadyAt(T0).setNextDueAt(null).build();
        RetirementView gone = base("d", T0).setState("DELETED").setDeleted(true).setNextDueAt(null).build();
        SweepPlanner.Plan p = SweepPlanner.plan(List.of(kept, gone), NOW, C);
        assertThat(p.requests()).isEmpty();
        assertThat(p.lookAt()).containsEntry("k", null).containsEntry("d", null);
    }
}

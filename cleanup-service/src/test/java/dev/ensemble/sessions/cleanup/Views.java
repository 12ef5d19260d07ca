package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.views.RetirementView;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Retirement views as the projector publishes them, for the sweep's tests. */
final class Views {
    static final String ACCOUNT = "acct-ana";
    static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");

    private Views() {
    }

    static RetirementView.Builder base(String sessionId, Instant evaluatedAt) {
        return RetirementView.newBuilder().setSessionId(sessionId).setAccount(ACCOUNT).setSpace("web:space-1").setSequence(1)
                .setEvaluatedAt(evaluatedAt).setKind("TASK_RUN").setAgent("claude-code").setRunsIdle(true).setComputersReady(true)
                .setKept(false).setRunIds(new ArrayList<>(List.of(sessionId))).setLastActivityAt(evaluatedAt).setDeleted(false);
    }

    /** Every task retired from {@code readyAt}; due then. */
    static RetirementView retired(String sessionId, Instant readyAt) {
        return base(sessionId, readyAt).setState("READY").setReason("retired").setReadyAt(readyAt).setNextDueAt(readyAt).build();
    }

    /** A task in use: looked at again six hours after {@code at}. */
    static RetirementView inUse(String sessionId, Instant at) {
        return base(sessionId, at).setState("IN_USE").setReason("retired").setReadyAt(null)
                .setNextDueAt(at.plus(Duration.ofHours(6))).setRecheckMs(Duration.ofHours(6).toMillis()).build();
    }

    /** Retired, but its computer is offline: looked at again an hour after {@code at}. */
    static RetirementView offline(String sessionId, Instant at) {
        return base(sessionId, at).setState("COMPUTER_UNAVAILABLE").setReason("retired").setReadyAt(at.minusSeconds(60))
                .setComputersReady(false).setNextDueAt(at.plus(Duration.ofHours(1))).setRecheckMs(Duration.ofHours(1).toMillis())
                .setBlockers(new ArrayList<>(List.of("computer laptop is offline: connect it"))).build();
    }
}

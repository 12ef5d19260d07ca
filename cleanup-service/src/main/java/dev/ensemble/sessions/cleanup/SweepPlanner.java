package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.views.RetirementView;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One sweep of one account (guide §6 "Cleaning up sessions"), as a pure function of the due sessions'
 * retirement views and the time: each due session is looked at once, at most {@code maxLookedAt} of them
 * (the caller passes them earliest due first), and at most {@code maxRequests} deletions are asked for.
 *
 * <p>A session may be deleted now when its view says so whatever the time since it was computed: not deleted,
 * not kept, no run queued or going, every computer ready, and {@code readyAt <= now} (the view's rules are
 * the projector's {@code RetirementRules}, the same the guard checks, so a request the sweep makes is one the
 * guard accepts unless something changed in between). One that is not is looked at again at the later of the
 * view's {@code nextDueAt} and {@code now} plus the longer of its {@code recheckMs} and the sweep interval, so
 * it never holds up the sessions behind it; a view with no {@code nextDueAt} is not looked at again until it
 * changes. A session left over because the sweep asked for its 20 deletions stays due and comes first next time.
 */
public final class SweepPlanner {
    private SweepPlanner() {
    }

    /** A deletion to ask for: the session, the reason and the runs the sweep saw. */
    public record Request(String sessionId, String space, String reason, List<String> runIds) {
    }

    /**
     * What one sweep decided.
     *
     * @param requests the deletions to ask for, in the order looked at
     * @param lookAt   for each session looked at, when to look at it next (null: not until its view changes)
     * @param lookedAt how many sessions it looked at
     */
    public record Plan(List<Request> requests, Map<String, Instant> lookAt, int lookedAt) {
    }

    /** Whether the view lets the session be deleted at {@code now}. */
    public static boolean deletable(RetirementView v, Instant now) {
        return !v.getDeleted() && !v.getKept() && v.getRunsIdle() && v.getComputersReady() && v.getReadyAt() != null
                && !now.isBefore(v.getReadyAt()) && v.getReason() != null;
    }

    /** Plans one sweep over {@code due} (earliest due first; only the first {@code maxLookedAt} are looked at). */
    public static Plan plan(List<RetirementView> due, Instant now, CleanupConfig config) {
        List<Request> requests = new ArrayList<>();
        Map<String, Instant> lookAt = new LinkedHashMap<>();
        int looked = 0;
        for (RetirementView v : due) {
            if (looked == config.maxLookedAt()) {
                break;
            }
            looked++;
            if (v.getDeleted()) {
                lookAt.put(v.getSessionId(), null);
            } else if (deletable(v, now)) {
                if (requests.size() < config.maxRequests()) {
                    requests.add(new Request(v.getSessionId(), v.getSpace(), v.getReason(), List.copyOf(v.getRunIds())));
                    lookAt.put(v.getSessionId(), now.plus(config.lookAgainAfterRequest()));
                }
                // else: stays due, first in line at the next sweep
            } else if (v.getNextDueAt() == null) {
                lookAt.put(v.getSessionId(), null);
            } else {
                Duration wait = Duration.ofMillis(Math.max(v.getRecheckMs(), config.sweepInterval().toMillis()));
                Instant next = now.plus(wait);
                lookAt.put(v.getSessionId(), v.getNextDueAt().isAfter(next) ? v.getNextDueAt() : next);
            }
        }
        return new Plan(requests, lookAt, looked);
    }
}

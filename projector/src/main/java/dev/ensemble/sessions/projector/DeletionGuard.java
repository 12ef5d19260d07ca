package dev.ensemble.sessions.projector;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The guard of a deletion (guide §6, "Just before anything changes, under the session's lock, the deletion
 * checks again…"; DESIGN.md §4 Deletion and the guard), a pure function of the session's facts, the request
 * and the instant it is evaluated at. The projector runs it as the single writer of the account, so nothing
 * can change the session between this check and the SessionDeletionAccepted it leads to.
 *
 * <p>A request is accepted only when all of these hold, checked in this order (the first that fails is the
 * skip reason):
 * <ol>
 *   <li>the session exists ({@code unknown-session}) and is not deleted ({@code already-deleted});</li>
 *   <li>a node asks only for a session it started for itself (sourceRef {@code node:<requesterId>},
 *       {@code not-own-session}) and only with its owner's confirmation ({@code unconfirmed}); the system
 *       gives one of the reasons {@code retired}, {@code idle}, {@code node-idle}, {@code retry}
 *       ({@code unknown-reason});</li>
 *   <li>the session has exactly the runs the requester saw ({@code runs-changed});</li>
 *   <li>none of them is going, working or waiting ({@code run-going}); for the system none is queued either
 *       ({@code run-queued}: the sweep waits); a person's or node's deletion cancels queued runs;</li>
 *   <li>a session already being deleted is retried: only the computers that have not confirmed are asked
 *       again; the system's {@code retry} of a session not being deleted is {@code nothing-to-retry};</li>
 *   <li>for the system: keepDays is not 0 ({@code kept}) and the session is ready for the reason given at the
 *       instant of evaluation, by {@link RetirementRules} (retired: every task retired, {@code task-in-use};
 *       idle and node-idle: {@code not-idle});</li>
 *   <li>every computer to ask is online and reports sessionDelete 1 or more ({@code computer-unknown},
 *       {@code computer-offline}, {@code computer-cannot-delete}), so nothing is hidden that cannot be
 *       deleted.</li>
 * </ol>
 */
public final class DeletionGuard {
    private DeletionGuard() {
    }

    /**
     * A deletion request as the guard reads it.
     *
     * @param requestedBy person, node or system
     * @param runIds      the runs the requester saw
     */
    public record Request(String requestId, String requestedBy, String requesterId, String confirmedBy, String reason,
                         List<String> runIds) {
    }

    /**
     * The guard's answer.
     *
     * @param accepted      true: delete; false: leave the session alone
     * @param code          the skip reason's code (null when accepted)
     * @param detail        what the guard found, for people
     * @param computersToAsk the computers that must delete (accepted only)
     * @param cancelRunIds  the queued runs to cancel (accepted only)
     * @param retry         accepted as a retry of a deletion in progress
     */
    public record Decision(boolean accepted, String code, String detail, List<String> computersToAsk,
                           List<String> cancelRunIds, boolean retry) {
        static Decision skip(String code, String detail) {
            return new Decision(false, code, detail, List.of(), List.of(), false);
        }
    }

    /** Decides {@code request} on the session {@code f} (null when unknown) at {@code at}. */
    public static Decision decide(RetirementRules.Facts f, Request request, Instant at, RetirementRules.Config c) {
        if (f == null) {
            return Decision.skip("unknown-session", "no such session in this account");
        }
        if (f.deleted()) {
            return Decision.skip("already-deleted", "the session was deleted already");
        }
        boolean system = "system".equals(request.requestedBy());
        if ("node".equals(request.requestedBy())) {
            String own = "node:" + request.requesterId();
            if (request.requesterId() == null || !own.equals(f.sourceRef())) {
                return Decision.skip("not-own-session", "a node deletes only sessions it started for itself (sourceRef "
                        + own + "); this one's sourceRef is " + f.sourceRef());
            }
            if (request.confirmedBy() == null || request.confirmedBy().isBlank()) {
                return Decision.skip("unconfirmed", "a node deletes a session only with its owner's confirmation (confirmedBy)");
            }
        } else if (system && !List.of(RetirementRules.RETIRED, RetirementRules.IDLE, RetirementRules.NODE_IDLE,
                RetirementRules.RETRY).contains(request.reason())) {
            return Decision.skip("unknown-reason", "the system deletes only for retired, idle, node-idle or retry, not '"
                    + request.reason() + "'");
        }
        Set<String> saw = new HashSet<>(request.runIds());
        Set<String> has = new HashSet<>(f.runIds());
        if (!saw.equals(has) || request.runIds().size() != saw.size()) {
            return Decision.skip("runs-changed", "the session has runs " + f.runIds() + ", the request saw " + request.runIds());
        }
        List<String> going = f.goingRunIds();
        if (!going.isEmpty()) {
            return Decision.skip("run-going", "runs still going: " + going);
        }
        List<String> queued = f.queuedRunIds();
        if (system && !queued.isEmpty()) {
            return Decision.skip("run-queued", "runs queued: " + queued + "; the sweep waits for them");
        }
        RetirementRules.Readiness r = RetirementRules.readiness(f, c);
        List<String> ask = new ArrayList<>();
        boolean retry = f.deleting();
        for (RetirementRules.Computer computer : f.computers()) {
            if (!retry || f.pending() == null || f.pending().owedComputerIds().contains(computer.computerId())) {
                ask.add(computer.computerId());
            }
        }
        if (!retry) {
            if (system && RetirementRules.RETRY.equals(request.reason())) {
                return Decision.skip("nothing-to-retry", "no deletion of this session is in progress");
            }
            if (system) {
                if (r.kept()) {
                    return Decision.skip("kept", "keepDays is 0: the system never deletes this session");
                }
                Instant readyAt = r.readyAtFor(request.reason());
                if (readyAt == null || at.isBefore(readyAt)) {
                    String code = RetirementRules.RETIRED.equals(request.reason()) ? "task-in-use" : "not-idle";
                    RetirementRules.Verdict v = RetirementRules.evaluate(f, at, c);
                    return Decision.skip(code, (readyAt == null ? "not " + request.reason() + " without a change"
                            : "not " + request.reason() + " before " + readyAt) + (v.blockers().isEmpty() ? "" : ": " + String.join("; ", v.blockers())));
                }
            }
        }
        for (RetirementRules.Computer computer : f.computers()) {
            if (ask.contains(computer.computerId()) && !computer.ready()) {
                return Decision.skip(computer.code(), computer.problem());
            }
        }
        String detail = retry ? "retry: asking " + ask + " again" : "runs " + f.runIds() + " none going; asking " + ask;
        return new Decision(true, null, detail, List.copyOf(ask), retry ? List.of() : queued, retry);
    }
}

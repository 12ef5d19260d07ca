package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.events.SessionDeletionSkipped;
import dev.ensemble.sessions.schema.EventTypes;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionAuditAnswer;
import dev.ensemble.sessions.views.DeletionAuditComputer;
import dev.ensemble.sessions.views.DeletionAuditTask;
import dev.ensemble.sessions.views.DeletionGuardView;
import dev.ensemble.sessions.views.DeletionState;
import dev.ensemble.sessions.views.SessionView;
import dev.ensemble.sessions.views.RunFacts;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The deletion workflow of the guide's §6, run by {@link EventIntakeProcessor} (the single writer of each account)
 * after an event has gone on to the chains:
 * <ul>
 *   <li>A SessionDeletionRequested is decided by {@link DeletionGuard} at the earlier of its occurredAt and
 *       recordedAt, against the chains as they are at that point of the account's log. Accepted: the
 *       SessionDeletionAccepted (naming the computers, the agent and its session ids, the queued runs it
 *       cancels) is applied to the chains at once, so no later event can slip between the check and the
 *       change, and appended to {@code sessions.events} in the same exactly-once transaction. Skipped: a
 *       SessionDeletionSkipped with the reason.</li>
 *   <li>A SessionDeletedOnComputer (only from the computer it names, for an accepted request that asked
 *       it) is recorded; once every computer asked has confirmed, SessionDeleted follows. A failure is
 *       retried a day later (the retirement view says when; the cleanup asks again).</li>
 * </ul>
 * Decision events have name-based eventIds ({@link #decisionId}, {@link #deletedId}) and take their times
 * from the event that led to them, so replaying the same log decides the same and appends nothing that is
 * not a duplicate. Every request's audit record is forwarded to {@code sessions.view.deletion-audit}.
 *
 * <p>Counted (docs/operations.md "Metrics"), while this generation appends its decisions: {@value #DELETIONS} by
 * {@code outcome} ({@code accepted}, {@code skipped} with the guard's {@code reason} code, {@code failed} for a
 * computer's failed answer, {@code deleted} once every computer confirmed); {@code reason} is {@code none} but for a skip.
 */
final class DeletionWorkflow {
    /** The source of every decision the projector writes. */
    static final String SOURCE = "service:projector";

    private final ProcessorContext<String, Object> context;
    private final DeletionStores stores;
    private final AppliedEvents applied;
    private final RetirementRules.Config config;
    private final KeyValueStore<String, DeletionAudit> audits;
    private final io.micrometer.core.instrument.MeterRegistry meters;
    /** The counter of deletion outcomes. */
    static final String DELETIONS = "ensemble.deletions";

    DeletionWorkflow(ProcessorContext<String, Object> context, DeletionStores stores, AppliedEvents applied, RetirementRules.Config config) {
        this(context, stores, applied, config, () -> true);
    }

    /**
     * @param appends whether this projector generation appends its decisions to the log now (another generation appends
     *                the same decisions, with the same eventIds, otherwise)
     */
    DeletionWorkflow(ProcessorContext<String, Object> context, DeletionStores stores, AppliedEvents applied, RetirementRules.Config config,
                     java.util.function.BooleanSupplier appends) {
        this.appends = appends;
        this.context = context;
        this.stores = stores;
        this.applied = applied;
        this.config = config;
        this.audits = context.getStateStore(StoreNames.DELETION_AUDIT);
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.of(context.appConfigs());
    }

    /** Counts one outcome of a deletion (nothing while another generation appends the decisions). */
    private void count(String outcome, String reason) {
        if (appends.getAsBoolean()) {
            io.micrometer.core.instrument.Counter.builder(DELETIONS).description("deletion requests decided and deletions done, by outcome")
                    .tag("outcome", outcome).tag("reason", reason == null ? "none" : reason).register(meters).increment();
        }
    }

    /**
     * Whether {@code e} is a deletion decision (accepted, skipped, deleted): made only here; one from the log is this
     * workflow's own, a duplicate, or refused by the intake, so the chains get decisions from this workflow alone.
     */
    static boolean isDecision(Event e) {
        Object p = e.getPayload();
        return p instanceof SessionDeletionAccepted || p instanceof SessionDeletionSkipped || p instanceof SessionDeleted;
    }

    /** The eventId of the guard's decision (accepted or skipped) on a request. */
    static String decisionId(String requestId) {
        return UUID.nameUUIDFromBytes(("ensemble-projector:deletion-decision:" + requestId).getBytes(StandardCharsets.UTF_8)).toString();
    }

    /** The eventId of the SessionDeleted that completes the deletion first accepted on {@code firstRequestId}. */
    static String deletedId(String firstRequestId) {
        return UUID.nameUUIDFromBytes(("ensemble-projector:session-deleted:" + firstRequestId).getBytes(StandardCharsets.UTF_8)).toString();
    }

    // ---- requests --------------------------------------------------------------------------------------

    /** The instant a request or answer counts at: the earlier of when it says it occurred and when it was recorded. */
    static Instant effectiveTime(Event e) {
        return e.getRecordedAt().isBefore(e.getOccurredAt()) ? e.getRecordedAt() : e.getOccurredAt();
    }

    void decide(Record<String, Event> record, Event e, SessionDeletionRequested r) {
        String account = e.getAccount();
        String requestId = e.getEventId();
        Instant at = effectiveTime(e);
        SessionView s = stores.session(account, r.getSessionId());
        Map<String, RunFacts> runFacts = s == null ? Map.of() : stores.runFacts(s);
        RetirementRules.Facts f = s == null ? null : stores.facts(s, runFacts, stores.deletion(account, s.getSessionId()));
        DeletionGuard.Request request = new DeletionGuard.Request(requestId, r.getRequestedBy().name(), r.getRequesterId(),
                r.getConfirmedBy(), r.getReason(), List.copyOf(r.getRunIds()));
        DeletionGuard.Decision d = DeletionGuard.decide(f, request, at, config);
        String decisionId = decisionId(requestId);
        DeletionAudit audit = DeletionAudit.newBuilder()
                .setRequestId(requestId).setAccount(account).setSessionId(r.getSessionId()).setSequence(1)
                .setRequestedAt(e.getOccurredAt()).setRecordedAt(e.getRecordedAt()).setSource(e.getSource())
                .setRequestedBy(r.getRequestedBy().name()).setRequesterId(r.getRequesterId()).setConfirmedBy(r.getConfirmedBy())
                .setReason(r.getReason()).setSawRunIds(new ArrayList<>(r.getRunIds()))
                .setSessionSourceRef(s == null ? null : s.getSourceRef())
                .setDecision(d.accepted() ? "ACCEPTED" : "SKIPPED").setDecidedAt(at)
                .setSkipReason(d.code()).setDetail(d.detail())
                .setGuard(guardView(f, at))
                .setStatus(d.accepted() ? "DELETING" : "SKIPPED")
                .setDecisionEventId(decisionId)
                .build();
        String space = s == null ? e.getSpace() : s.getSpace();
        if (!d.accepted()) {
            if (s != null) {
                DeletionState ds = stateOf(account, s.getSessionId());
                ds.setLastSkipRequestId(requestId);
                ds.setLastSkipReason(d.code());
                ds.setLastSkipAt(at);
                stores.deletions.put(Keys.of(account, s.getSessionId()), ds);
            }
            putAudit(audit, record.timestamp());
            Event skipped = decision(decisionId, account, space, e, SessionDeletionSkipped.newBuilder()
                    .setSessionId(r.getSessionId()).setRequestId(requestId).setReason(d.code() + ": " + d.detail())
                    .setSawRunIds(new ArrayList<>(r.getRunIds()))
                    .setGoingRunIds(f == null ? new ArrayList<>() : new ArrayList<>(f.goingRunIds())).build());
            append(skipped, record.timestamp());
            count("skipped", d.code());
            if (s != null) {
                context.forward(new Record<>(Keys.of(account, s.getSessionId()), stores.session(account, s.getSessionId()),
                        record.timestamp()), Projector.RETIREMENT);
            }
            return;
        }
        List<String> agentSessionIds = DeletionStores.agentSessionIds(s, runFacts);
        Event accepted = decision(decisionId, account, space, e, SessionDeletionAccepted.newBuilder()
                .setSessionId(s.getSessionId()).setRequestId(requestId).setRunIds(new ArrayList<>(f.runIds()))
                .setComputerIds(new ArrayList<>(d.computersToAsk())).setCancelledRunIds(new ArrayList<>(d.cancelRunIds()))
                .setAgentSessionIds(new ArrayList<>(agentSessionIds)).setAgent(s.getAgent()).build());
        applyToChains(accepted, record.timestamp());
        DeletionState ds = stateOf(account, s.getSessionId());
        if (d.retry()) {
            audit.setRetryOf(ds.getFirstRequestId());
            List<String> ids = new ArrayList<>(ds.getRequestIds());
            ids.add(requestId);
            ds.setRequestIds(ids);
            ds.setLastAttemptAt(at);
        } else {
            ds.setFirstRequestId(requestId);
            ds.setRequestIds(new ArrayList<>(List.of(requestId)));
            ds.setReason(r.getReason());
            ds.setAcceptedAt(at);
            ds.setLastAttemptAt(at);
            ds.setOwedComputerIds(new ArrayList<>(d.computersToAsk()));
            ds.setConfirmedComputerIds(new ArrayList<>());
            ds.setFailedAt(null);
            ds.setLastError(null);
        }
        stores.deletions.put(Keys.of(account, s.getSessionId()), ds);
        audit.setComputersAsked(new ArrayList<>(d.computersToAsk()));
        audit.setAgent(s.getAgent());
        audit.setAgentSessionIds(new ArrayList<>(agentSessionIds));
        audit.setCancelledRunIds(new ArrayList<>(d.cancelRunIds()));
        putAudit(audit, record.timestamp());
        context.forward(new Record<>(Keys.of(account, s.getSessionId()), stores.session(account, s.getSessionId()),
                record.timestamp()), Projector.RETIREMENT);
        appendToLog(accepted, record.timestamp());
        count("accepted", null);
        if (ds.getOwedComputerIds().isEmpty()) {
            complete(account, s.getSessionId(), e, requestId, record.timestamp());
        }
    }

    private DeletionGuardView guardView(RetirementRules.Facts f, Instant at) {
        if (f == null) {
            return DeletionGuardView.newBuilder().build();
        }
        RetirementRules.Readiness r = RetirementRules.readiness(f, config);
        List<DeletionAuditTask> tasks = new ArrayList<>();
        for (int i = 0; i < f.tasks().size(); i++) {
            RetirementRules.Task t = f.tasks().get(i);
            tasks.add(new DeletionAuditTask(t.taskId(), t.status(), t.pinned(), t.completedAt(), t.deletedAt(), r.taskRetiredAt().get(i)));
        }
        List<DeletionAuditComputer> computers = new ArrayList<>();
        for (RetirementRules.Computer c : f.computers()) {
            computers.add(new DeletionAuditComputer(c.computerId(), c.known(), c.online(), c.sessionDelete()));
        }
        return DeletionGuardView.newBuilder().setSessionRunIds(new ArrayList<>(f.runIds()))
                .setGoingRunIds(new ArrayList<>(f.goingRunIds())).setQueuedRunIds(new ArrayList<>(f.queuedRunIds()))
                .setTasks(tasks).setComputers(computers).setReadyAt(r.readyAt()).setReadyReason(r.reason())
                .setKeepDays(f.keepDays()).setDeleting(f.deleting()).setDeleted(f.deleted()).build();
    }

    // ---- answers ---------------------------------------------------------------------------------------

    /** Refuses, before anything changes, an answer that no accepted request of this projector asked for. */
    void checkAnswer(Event e, SessionDeletedOnComputer a) {
        DeletionAudit audit = audits.get(Keys.of(e.getAccount(), a.getRequestId()));
        String type = EventTypes.typeOf(e);
        if (audit == null || !"ACCEPTED".equals(audit.getDecision()) || audit.getConversationKey() != null) {
            throw new InvalidEventException(e.getEventId(), type, "payload.requestId",
                    "no accepted deletion request '" + a.getRequestId() + "' in this account");
        }
        if (!audit.getSessionId().equals(a.getSessionId())) {
            throw new InvalidEventException(e.getEventId(), type, "payload.sessionId",
                    "request '" + a.getRequestId() + "' deletes session '" + audit.getSessionId() + "', not '" + a.getSessionId() + "'");
        }
        if (!audit.getComputersAsked().contains(a.getComputerId())) {
            throw new InvalidEventException(e.getEventId(), type, "payload.computerId",
                    "request '" + a.getRequestId() + "' did not ask computer '" + a.getComputerId() + "'");
        }
        if (!("computer:" + a.getComputerId()).equals(e.getSource())) {
            throw new InvalidEventException(e.getEventId(), type, "source",
                    "an answer comes only from the computer it names (computer:" + a.getComputerId() + "), not " + e.getSource());
        }
    }

    void answer(Record<String, Event> record, Event e, SessionDeletedOnComputer a) {
        String account = e.getAccount();
        Instant at = effectiveTime(e);
        DeletionAudit audit = audits.get(Keys.of(account, a.getRequestId()));
        List<DeletionAuditAnswer> answers = new ArrayList<>(audit.getAnswers());
        answers.add(new DeletionAuditAnswer(e.getEventId(), a.getComputerId(), a.getOk(), a.getError(),
                new ArrayList<>(a.getRemovedPaths()), at));
        audit.setAnswers(answers);
        String sessionId = audit.getSessionId();
        SessionView s = stores.session(account, sessionId);
        DeletionState ds = stores.deletion(account, sessionId);
        boolean current = s != null && !s.getDeleted() && ds != null && ds.getRequestIds().contains(a.getRequestId());
        if (!current) {
            bump(audit);
            putAudit(audit, record.timestamp()); // a late answer: recorded, changes nothing
            return;
        }
        List<String> owed = new ArrayList<>(ds.getOwedComputerIds());
        if (a.getOk()) {
            if (owed.remove(a.getComputerId())) {
                List<String> confirmed = new ArrayList<>(ds.getConfirmedComputerIds());
                confirmed.add(a.getComputerId());
                ds.setConfirmedComputerIds(confirmed);
            }
            ds.setOwedComputerIds(owed);
        } else if (owed.contains(a.getComputerId())) {
            ds.setFailedAt(RetirementRules.latest(ds.getFailedAt(), at));
            ds.setLastError(a.getComputerId() + ": " + (a.getError() == null ? "failed without a message" : a.getError()));
            audit.setStatus("FAILED");
            count("failed", null);
        }
        stores.deletions.put(Keys.of(account, sessionId), ds);
        bump(audit);
        putAudit(audit, record.timestamp());
        if (owed.isEmpty()) {
            complete(account, sessionId, e, a.getRequestId(), record.timestamp());
        } else {
            context.forward(new Record<>(Keys.of(account, sessionId), stores.session(account, sessionId), record.timestamp()), Projector.RETIREMENT);
        }
    }

    /** Every computer confirmed: SessionDeleted, and every attempt's audit says so. */
    private void complete(String account, String sessionId, Event trigger, String requestId, long timestamp) {
        DeletionState ds = stores.deletion(account, sessionId);
        String id = deletedId(ds.getFirstRequestId());
        Event deleted = decision(id, account, stores.session(account, sessionId).getSpace(), trigger,
                SessionDeleted.newBuilder().setSessionId(sessionId).setRequestId(requestId).build());
        applyToChains(deleted, timestamp);
        count("deleted", null);
        Instant at = effectiveTime(trigger);
        ds.setDeletedAt(at);
        stores.deletions.put(Keys.of(account, sessionId), ds);
        for (String attempt : ds.getRequestIds()) {
            DeletionAudit audit = audits.get(Keys.of(account, attempt));
            if (audit != null) {
                audit.setStatus("DELETED");
                audit.setDeletedAt(at);
                audit.setDeletedEventId(id);
                bump(audit);
                putAudit(audit, timestamp);
            }
        }
        context.forward(new Record<>(Keys.of(account, sessionId), stores.session(account, sessionId), timestamp), Projector.RETIREMENT);
        appendToLog(deleted, timestamp);
    }

    // ---- output ----------------------------------------------------------------------------------------

    private DeletionState stateOf(String account, String sessionId) {
        DeletionState ds = stores.deletion(account, sessionId);
        return ds != null ? ds : DeletionState.newBuilder().setSessionId(sessionId).build();
    }

    private static void bump(DeletionAudit audit) {
        audit.setSequence(audit.getSequence() + 1);
    }

    private void putAudit(DeletionAudit audit, long timestamp) {
        putAudit(context, audits, audit, timestamp);
    }

    /** Stores a deletion's audit record (key {@code <account>/<requestId>}) and forwards it, bounded, to its view. */
    static void putAudit(ProcessorContext<String, Object> context, KeyValueStore<String, DeletionAudit> audits, DeletionAudit audit,
                         long timestamp) {
        String key = Keys.of(audit.getAccount(), audit.getRequestId());
        audits.put(key, audit);
        context.forward(new Record<>(key, ViewBounds.audit(audit), timestamp), Projector.DELETION_AUDIT_SINK);
    }

    /** A decision of the projector ({@link #SOURCE}): eventId {@code id}, the times of the event that led to it. */
    static Event decision(String id, String account, String space, Event trigger, Object payload) {
        return Event.newBuilder().setEventId(id).setAccount(account).setSpace(space).setOccurredAt(trigger.getOccurredAt())
                .setRecordedAt(trigger.getRecordedAt()).setSource(SOURCE).setPayload(payload).build();
    }

    /**
     * Applies a decision to the chains now (they record its eventId, so its copy from the log is a duplicate)
     * and appends it to the log.
     */
    private void append(Event decision, long timestamp) {
        applyToChains(decision, timestamp);
        appendToLog(decision, timestamp);
    }

    /**
     * Applies a decision to the session chains at once and checks they took it (an accepted deletion marks
     * the session deleting, a SessionDeleted marks it deleted). Streams handles a processing error at the node
     * that raised it, so a failure in the chains would not stop this processor: the check does, before
     * anything of the decision is stored or appended, so the computers are never asked to delete a session
     * the chains do not hold as being deleted.
     *
     * @throws IllegalStateException when the chains did not take it
     */
    private void applyToChains(Event decision, long timestamp) {
        Object p = decision.getPayload();
        String sessionId = p instanceof SessionDeletionAccepted a ? a.getSessionId() : p instanceof SessionDeleted d ? d.getSessionId() : null;
        // the store hands out the session object itself, which the chains change before they store it: the check
        // asks for the flags and for the chains' save (it raises the sequence), read as numbers before the forward
        SessionView held = sessionId == null ? null : stores.session(decision.getAccount(), sessionId);
        long sequenceBefore = held == null ? -1 : held.getSequence();
        boolean deletedBefore = held != null && held.getDeleted();
        context.forward(new Record<>(decision.getAccount(), decision, timestamp), Projector.SESSION_CHAINS);
        SessionView s = sessionId == null ? null : stores.session(decision.getAccount(), sessionId);
        boolean saved = s != null && (s.getSequence() > sequenceBefore || deletedBefore);
        boolean taken = applied.contains(decision)
                && (sessionId == null || (saved && (p instanceof SessionDeleted ? s.getDeleted() : s.getDeleting() || s.getDeleted())));
        if (!taken) {
            throw new IllegalStateException("the session chains did not take " + EventTypes.typeOf(decision) + " " + decision.getEventId()
                    + (sessionId == null ? "" : " of session " + sessionId) + "; nothing of it is stored or appended");
        }
    }

    private final java.util.function.BooleanSupplier appends;

    private void appendToLog(Event decision, long timestamp) {
        if (!appends.getAsBoolean()) {
            return; // another generation appends it (the same decision, the same eventId)
        }
        context.forward(new Record<>(decision.getAccount(), decision, timestamp), Projector.DECISIONS_SINK);
    }
}

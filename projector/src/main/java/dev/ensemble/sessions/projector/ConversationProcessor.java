package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.assistant.IdleRules;
import dev.ensemble.sessions.events.AskRequested;
import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationDeletionSkipped;
import dev.ensemble.sessions.events.ConversationDroppedOnComputer;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.TurnDecided;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.schema.EventTypes;
import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.streams.DeadLetterProcessingExceptionHandler;
import dev.ensemble.sessions.views.ConversationView;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionAuditAnswer;
import dev.ensemble.sessions.views.DeletionGuardView;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The assistant conversations (guide §5, §6; node {@link Projector#ASSISTANT_CONVERSATIONS}): folds TurnDecided, TurnEnded,
 * AskRequested, the conversation deletions and the computers' drops into {@link ConversationView}s (store
 * {@link StoreNames#ASSISTANT_CONVERSATIONS}, key {@code <account>/<conversationKey>}; the pure fold and guard are
 * {@link ConversationFold}), and publishes each changed one to {@code sessions.view.assistant} at the publication tick
 * ({@link Projector#VIEW_EMIT_INTERVAL}, paced by {@link CatchUp}; marks in {@link StoreNames#PENDING_ASSISTANT}).
 *
 * <p>It is the single writer of conversation deletions, as {@link DeletionWorkflow} is of sessions': a
 * ConversationDeletionRequested is decided by {@link ConversationFold#guard} at the earlier of its occurredAt and
 * recordedAt; the ConversationDeletionAccepted (naming every computer holding an entry and every session id, retired ones
 * too) or ConversationDeletionSkipped is folded at once and appended to {@code sessions.events} only while this
 * generation serves (the handover marker rule, store {@link StoreNames#SERVING_GENERATION}); ids name-based on the
 * request id ({@link #decisionId}), times the request's. A ComputerStatus online of a computer with a pending drop (index
 * {@link StoreNames#ASSISTANT_DROPS}) appends the accepted request again naming only that computer ({@link #askedAgainId}).
 * Every decision's eventId is recorded as applied, so its copy from the log is a duplicate. Each conversation deletion
 * (request, decision, every computer's answer) is an entry of the deletion audit view (its {@code conversationKey} set).
 *
 * <p>The event intake refuses forged events before anything changes ({@link #refuseForged}).
 */
final class ConversationProcessor implements Processor<String, Event, String, Object> {
    /** The only source of TurnDecided (guide §5: the gateway decides, the computer runs). */
    static final String GATEWAY = "service:gateway";
    /** The cleanup's source: its TurnEnded clears an ask that never reported back. */
    static final String CLEANUP = "service:cleanup";

    private final IdleRules.Config idle;
    private final Generation generation;
    private final CatchUp catchUp = new CatchUp();
    private ProcessorContext<String, Object> context;
    private KeyValueStore<String, ConversationView> conversations;
    private KeyValueStore<String, Long> pending;
    private KeyValueStore<String, String> drops;
    private KeyValueStore<String, DeletionAudit> audits;
    private KeyValueStore<String, String> serving;
    private AppliedEvents applied;

    ConversationProcessor(RetirementRules.Config rules, Generation generation) {
        this.idle = new IdleRules.Config(rules.askIdle(), rules.chatIdle(), rules.nodeConversationIdle(), rules.routineMin(), rules.routineMax());
        this.generation = generation;
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        this.conversations = context.getStateStore(StoreNames.ASSISTANT_CONVERSATIONS);
        this.pending = context.getStateStore(StoreNames.PENDING_ASSISTANT);
        this.drops = context.getStateStore(StoreNames.ASSISTANT_DROPS);
        this.audits = context.getStateStore(StoreNames.DELETION_AUDIT);
        this.serving = context.getStateStore(StoreNames.SERVING_GENERATION);
        this.applied = new AppliedEvents(context);
        context.schedule(Projector.VIEW_EMIT_INTERVAL, PunctuationType.WALL_CLOCK_TIME, now -> catchUp.publish(now, pending, (key, time) -> {
            ConversationView v = conversations.get(key);
            if (v != null) {
                context.forward(new Record<>(key, v, time), Projector.ASSISTANT_VIEW_SINK);
            }
        }));
    }

    // ---- the intake's checks -------------------------------------------------------------------------

    /** Whether {@code e} is a conversation deletion decision (made only here). */
    static boolean isDecision(Event e) {
        return e.getPayload() instanceof ConversationDeletionAccepted || e.getPayload() instanceof ConversationDeletionSkipped;
    }

    /**
     * Refuses (before anything changes; the intake calls it for every new event) a conversation deletion decision this
     * projector did not make (its own come back as duplicates), a TurnDecided not from {@value #GATEWAY}, and a
     * ConversationDroppedOnComputer not from the computer it names or that no accepted request of this conversation asked
     * of it ({@code audit}: the deletion audit of its requestId, or null).
     *
     * @throws InvalidEventException naming the field
     */
    static void refuseForged(Event e, java.util.function.Function<String, DeletionAudit> audit) {
        Object p = e.getPayload();
        if (!(isDecision(e) || p instanceof TurnDecided || p instanceof ConversationDroppedOnComputer)) {
            return; // every event of the log passes here: the others are let through at once
        }
        String type = EventTypes.typeOf(e);
        if (isDecision(e)) {
            throw new InvalidEventException(e.getEventId(), type, null,
                    "conversation deletion decisions are made only by the projector's guard (" + DeletionWorkflow.SOURCE + "); this one is not its own");
        }
        if (p instanceof TurnDecided && !GATEWAY.equals(e.getSource())) {
            throw new InvalidEventException(e.getEventId(), type, "source",
                    "a turn is decided only by the gateway (" + GATEWAY + "), not " + e.getSource());
        }
        if (p instanceof ConversationDroppedOnComputer d) {
            if (!("computer:" + d.getComputerId()).equals(e.getSource())) {
                throw new InvalidEventException(e.getEventId(), type, "source",
                        "a drop is answered only by the computer it names (computer:" + d.getComputerId() + "), not " + e.getSource());
            }
            DeletionAudit a = audit.apply(Keys.of(e.getAccount(), d.getRequestId()));
            if (a == null || a.getConversationKey() == null || !"ACCEPTED".equals(a.getDecision())) {
                throw new InvalidEventException(e.getEventId(), type, "payload.requestId",
                        "no accepted conversation deletion request '" + d.getRequestId() + "' in this account: no pending drop");
            }
            if (!a.getConversationKey().equals(d.getConversationKey())) {
                throw new InvalidEventException(e.getEventId(), type, "payload.conversationKey",
                        "request '" + d.getRequestId() + "' deletes conversation '" + a.getConversationKey() + "', not '" + d.getConversationKey() + "'");
            }
            if (!a.getComputersAsked().contains(d.getComputerId())) {
                throw new InvalidEventException(e.getEventId(), type, "payload.computerId",
                        "request '" + d.getRequestId() + "' did not ask computer '" + d.getComputerId() + "': no pending drop");
            }
        }
    }

    // ---- folding -----------------------------------------------------------------------------------------

    /**
     * Whether a payload is one this processor folds (the turns, asks, conversation deletions and drops, and a computer's
     * status for the drops asked again): the intake forwards only these here, so the log's other events cost nothing.
     */
    static boolean folds(Object p) {
        return p instanceof TurnDecided || p instanceof TurnEnded || p instanceof AskRequested || p instanceof ConversationDeletionRequested
                || p instanceof ConversationDroppedOnComputer || p instanceof ComputerStatus;
    }

    @Override
    public void process(Record<String, Event> record) {
        Event e = record.value();
        if (e == null) {
            return;
        }
        Object p = e.getPayload();
        if (!folds(p)) {
            return;
        }
        DeadLetterProcessingExceptionHandler.refuseIfFailedBefore(context, Projector.ASSISTANT_CONVERSATIONS);
        catchUp.processed(record.timestamp());
        String account = e.getAccount();
        Instant at = e.getOccurredAt();
        if (p instanceof TurnDecided t) {
            String key = Keys.of(account, t.getConversationKey());
            ConversationView held = conversations.get(key);
            ConversationView after = ConversationFold.turnDecided(held, account, t, at);
            if (held != null && held.getDeleted() && held.getDeletion() != null && t.getAction() != dev.ensemble.sessions.events.TurnAction.NONE) {
                after = lateTurn(record, e, after, t.getComputerId());
            }
            put(key, after, record.timestamp());
        } else if (p instanceof TurnEnded t) {
            String key = Keys.of(account, t.getConversationKey());
            put(key, ConversationFold.turnEnded(conversations.get(key), t, at, CLEANUP.equals(e.getSource())), record.timestamp());
        } else if (p instanceof AskRequested a) {
            String key = Keys.of(account, a.getConversationKey());
            ConversationView held = conversations.get(key);
            if (held != null && held.getDeleted()) {
                unindex(account, held); // a new line on the same page: the old one's drops are not asked again
            }
            put(key, ConversationFold.askRequested(held, account, a.getAskId(), a, at), record.timestamp());
        } else if (p instanceof ConversationDeletionRequested r) {
            decide(record, e, r);
        } else if (p instanceof ConversationDroppedOnComputer d) {
            answer(record, e, d);
        } else if (p instanceof ComputerStatus cs && cs.getOnline()) {
            askAgain(record, e, cs.getComputerId());
        }
    }

    private void put(String key, ConversationView v, long timestamp) {
        if (v == null) {
            return;
        }
        conversations.put(key, v);
        pending.put(key, timestamp);
    }

    // ---- deletions ---------------------------------------------------------------------------------------

    /** The eventId of the guard's decision on a conversation deletion request. */
    static String decisionId(String requestId) {
        return nameBased("ensemble-projector:conversation-deletion-decision:" + requestId);
    }

    /** The eventId of an accepted request appended again for one computer that came online ({@code statusEventId}). */
    static String askedAgainId(String statusEventId, String conversationKey, String requestId) {
        return nameBased("ensemble-projector:conversation-asked-again:" + statusEventId + "\n" + conversationKey + "\n" + requestId);
    }

    private static String nameBased(String name) {
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
    }

    private void decide(Record<String, Event> record, Event e, ConversationDeletionRequested r) {
        String account = e.getAccount();
        String requestId = e.getEventId();
        Instant at = DeletionWorkflow.effectiveTime(e);
        String key = Keys.of(account, r.getConversationKey());
        ConversationView v = conversations.get(key);
        ConversationFold.Decision d = ConversationFold.guard(v, r, at, idle);
        String decisionId = decisionId(requestId);
        boolean retry = "retry".equals(r.getReason());
        DeletionAudit audit = DeletionAudit.newBuilder()
                .setRequestId(requestId).setAccount(account).setSessionId(r.getConversationKey()).setConversationKey(r.getConversationKey())
                .setSequence(1).setRequestedAt(e.getOccurredAt()).setRecordedAt(e.getRecordedAt()).setSource(e.getSource())
                .setRequestedBy(r.getRequestedBy().name()).setRequesterId(r.getRequesterId()).setReason(r.getReason())
                .setDecision(d.accepted() ? "ACCEPTED" : "SKIPPED").setDecidedAt(at).setSkipReason(d.code()).setDetail(d.detail())
                .setGuard(DeletionGuardView.newBuilder().setDeleting(v != null && v.getDeleted()).setDeleted(v != null && v.getDeleted())
                        .setKeepDays(v == null ? null : v.getKeepDays()).build())
                .setStatus(d.accepted() ? "DELETING" : "SKIPPED").setDecisionEventId(decisionId)
                .build();
        if (!d.accepted()) {
            putAudit(audit, record.timestamp());
            append(decision(decisionId, e, ConversationDeletionSkipped.newBuilder().setConversationKey(r.getConversationKey())
                    .setRequestId(requestId).setReason(d.code() + ": " + d.detail()).build()), record.timestamp());
            return;
        }
        audit.setComputersAsked(new ArrayList<>(d.computers()));
        audit.setAgentSessionIds(new ArrayList<>(d.agentSessionIds()));
        ConversationView after;
        if (retry) {
            audit.setRetryOf(v.getDeletion().getRequestId());
            after = ConversationFold.askedAgain(v, d.computers(), at);
        } else {
            after = ConversationFold.accepted(v, requestId, r.getRequestedBy(), r.getReason(), d.computers(), at);
            for (String c : d.computers()) {
                drops.put(dropKey(account, c, r.getConversationKey()), requestId);
            }
            if (d.computers().isEmpty()) {
                audit.setStatus("DELETED");
                audit.setDeletedAt(at);
            }
        }
        put(key, after, record.timestamp());
        putAudit(audit, record.timestamp());
        append(decision(decisionId, e, ConversationDeletionAccepted.newBuilder().setConversationKey(r.getConversationKey())
                .setRequestId(requestId).setComputerIds(new ArrayList<>(d.computers()))
                .setAgentSessionIds(new ArrayList<>(d.agentSessionIds())).build()), record.timestamp());
    }

    private void answer(Record<String, Event> record, Event e, ConversationDroppedOnComputer d) {
        String account = e.getAccount();
        Instant at = DeletionWorkflow.effectiveTime(e);
        DeletionAudit audit = audits.get(Keys.of(account, d.getRequestId())); // the intake checked it is an accepted one
        List<DeletionAuditAnswer> answers = new ArrayList<>(audit.getAnswers());
        answers.add(new DeletionAuditAnswer(e.getEventId(), d.getComputerId(), d.getOk(), ViewBounds.text(d.getError(), ViewBounds.SUMMARY_CHARS),
                new ArrayList<>(d.getRemovedPaths()), at));
        audit.setAnswers(answers);
        String key = Keys.of(account, d.getConversationKey());
        ConversationView v = conversations.get(key);
        String first = audit.getRetryOf() != null ? audit.getRetryOf() : d.getRequestId();
        boolean current = v != null && v.getDeletion() != null && v.getDeletion().getRequestId().equals(first);
        ConversationView after = current ? ConversationFold.dropped(v, d, at) : null;
        if (after != null) {
            put(key, after, record.timestamp());
            if (d.getOk()) {
                drops.delete(dropKey(account, d.getComputerId(), d.getConversationKey()));
            }
            if (!d.getOk()) {
                audit.setStatus("FAILED");
            }
            if (ConversationFold.pendingComputers(after).isEmpty()) { // every computer asked confirmed: the audit says it is gone
                audit.setStatus("DELETED");
                audit.setDeletedAt(at);
                DeletionAudit firstAudit = first.equals(audit.getRequestId()) ? null : audits.get(Keys.of(account, first));
                if (firstAudit != null) {
                    firstAudit.setStatus("DELETED");
                    firstAudit.setDeletedAt(at);
                    firstAudit.setSequence(firstAudit.getSequence() + 1);
                    putAudit(firstAudit, record.timestamp());
                }
            }
        }
        audit.setSequence(audit.getSequence() + 1);
        putAudit(audit, record.timestamp());
    }

    /** A computer came online: each conversation with a drop pending on it is asked again, naming only it. */
    private void askAgain(Record<String, Event> record, Event e, String computerId) {
        String account = e.getAccount();
        String prefix = Keys.of(account, computerId) + "\n";
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, String> it = drops.prefixScan(prefix, new StringSerializer())) {
            while (it.hasNext()) {
                keys.add(it.next().key.substring(prefix.length()));
            }
        }
        Instant at = e.getOccurredAt();
        for (String conversationKey : keys) {
            String key = Keys.of(account, conversationKey);
            ConversationView v = conversations.get(key);
            if (v == null || !ConversationFold.pendingComputers(v).contains(computerId)) {
                drops.delete(dropKey(account, computerId, conversationKey));
                continue;
            }
            String requestId = v.getDeletion().getRequestId();
            put(key, ConversationFold.askedAgain(v, List.of(computerId), at), record.timestamp());
            append(decision(askedAgainId(e.getEventId(), conversationKey, requestId), e, ConversationDeletionAccepted.newBuilder()
                    .setConversationKey(conversationKey).setRequestId(requestId).setComputerIds(new ArrayList<>(List.of(computerId)))
                    .setAgentSessionIds(new ArrayList<>(ConversationFold.agentSessionIds(v))).build()), record.timestamp());
        }
    }

    /**
     * A turn decided on a conversation already deleted (it began on a computer as the deletion was accepted): the session
     * it makes would be left on that computer, so its computer is asked to drop the chat too, under the deletion's request
     * (after the turn: the drop waits for the chat's lock), and the request's audit names it (DELETING again until it
     * confirms). Returns the view with that computer's drop pending.
     */
    private ConversationView lateTurn(Record<String, Event> record, Event e, ConversationView v, String computerId) {
        String account = e.getAccount();
        String requestId = v.getDeletion().getRequestId();
        ConversationView after = ConversationFold.askedAfterLateTurn(v, computerId, e.getOccurredAt());
        drops.put(dropKey(account, computerId, v.getConversationKey()), requestId);
        DeletionAudit audit = audits.get(Keys.of(account, requestId));
        if (audit != null) {
            if (!audit.getComputersAsked().contains(computerId)) {
                List<String> asked = new ArrayList<>(audit.getComputersAsked());
                asked.add(computerId);
                audit.setComputersAsked(asked);
            }
            if ("DELETED".equals(audit.getStatus())) {
                audit.setStatus("DELETING");
                audit.setDeletedAt(null);
            }
            audit.setSequence(audit.getSequence() + 1);
            putAudit(audit, record.timestamp());
        }
        append(decision(askedAgainId(e.getEventId(), v.getConversationKey(), requestId), e, ConversationDeletionAccepted.newBuilder()
                .setConversationKey(v.getConversationKey()).setRequestId(requestId).setComputerIds(new ArrayList<>(List.of(computerId)))
                .setAgentSessionIds(new ArrayList<>(ConversationFold.agentSessionIds(after))).build()), record.timestamp());
        return after;
    }

    private void unindex(String account, ConversationView v) {
        if (v.getDeletion() != null) {
            for (var d : v.getDeletion().getComputers()) {
                drops.delete(dropKey(account, d.getComputerId(), v.getConversationKey()));
            }
        }
    }

    /** {@code <account>/<computerId>\n<conversationKey>}: a drop pending on a computer, for prefix scans. */
    static String dropKey(String account, String computerId, String conversationKey) {
        return Keys.of(account, computerId) + "\n" + conversationKey;
    }

    // ---- output ------------------------------------------------------------------------------------------

    private void putAudit(DeletionAudit audit, long timestamp) {
        DeletionWorkflow.putAudit(context, audits, audit, timestamp);
    }

    private static Event decision(String id, Event trigger, Object payload) {
        return DeletionWorkflow.decision(id, trigger.getAccount(), trigger.getSpace(), trigger, payload);
    }

    /** Records the decision as applied (its copy from the log is a duplicate) and appends it while this generation serves. */
    private void append(Event decision, long timestamp) {
        applied.add(decision);
        if (Generations.parse(serving.get(EventIntakeProcessor.SERVING_KEY)).equals(generation)) {
            context.forward(new Record<>(decision.getAccount(), decision, timestamp), Projector.DECISIONS_SINK);
        }
    }
}

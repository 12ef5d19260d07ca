package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.events.TaskChanged;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.EventTypes;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.streams.DeadLetterProcessingExceptionHandler;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionAuditAnswer;
import dev.ensemble.sessions.views.DeletionAuditComputer;
import dev.ensemble.sessions.views.DeletionAuditTask;
import dev.ensemble.sessions.views.DeletionGuardView;
import dev.ensemble.sessions.views.DeletionState;
import dev.ensemble.sessions.views.RunFacts;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The processor every event of the log meets first (node {@link Projector#EVENT_INTAKE}), and the single writer of each
 * account's deletion decisions (DESIGN.md §3 and §4):
 *
 * <ol>
 *   <li>An invalid event is refused before anything changes (to the dead-letter topic); a duplicate (its
 *       eventId applied already) is dropped; any other is recorded as applied ({@link AppliedEvents}) once nothing
 *       refuses it.</li>
 *   <li>A SessionDeletionAccepted, SessionDeletionSkipped or SessionDeleted that this projector did not
 *       decide itself is refused (dead-letter topic): decisions are made only here. The projector's own
 *       decisions come back from the log with an eventId it applied already, and are dropped as duplicates.
 *       So is a SessionDeletedOnComputer that no accepted request asked for ({@link DeletionWorkflow#checkAnswer}), and
 *       the assistant conversations' forged events ({@link ConversationProcessor#refuseForged}: a conversation deletion
 *       decision not its own, a TurnDecided not from the gateway, a drop answer no accepted request asked for).</li>
 *   <li>Facts the retirement rules need beyond the session chains are folded: each run's agent session ids, keepDays,
 *       nextRunAt and sourceRef; each task's newest TaskChanged; each computer's newest ComputerStatus.</li>
 *   <li>The event goes on to the session chains and the corpus statistics, and to the assistant conversations when it
 *       is one they fold ({@link ConversationProcessor#folds}), so an invalid event is refused once and
 *       a duplicate reaches none of them.</li>
 *   <li>Then the deletion workflow of the guide's §6 ({@link DeletionWorkflow}) decides a SessionDeletionRequested
 *       (by the pure rule {@link DeletionGuard}) and records a computer's answer; a ComputerStatus sends every
 *       session that ran on the computer to the retirement rules again.</li>
 * </ol>
 */
final class EventIntakeProcessor implements Processor<String, Event, String, Object> {
    private final RetirementRules.Config config;
    private ProcessorContext<String, Object> context;
    private DeletionStores stores;
    private AppliedEvents applied;
    private DeletionWorkflow deletions;

    /**
     * @param config     the retirement rules' numbers
     * @param generation the projector's generation: the deletion workflow appends its decisions only while the newest
     *                   handover marker of the partition ({@link dev.ensemble.sessions.schema.Generations}; generation 1
     *                   before any) names it, kept in {@link StoreNames#SERVING_GENERATION}
     */
    EventIntakeProcessor(RetirementRules.Config config, dev.ensemble.sessions.schema.Generation generation) {
        this.config = config;
        this.generation = generation;
    }

    /** The key of the serving generation in {@link StoreNames#SERVING_GENERATION}. */
    static final String SERVING_KEY = "serving";
    private final dev.ensemble.sessions.schema.Generation generation;
    private KeyValueStore<String, String> servingStore;
    private KeyValueStore<String, DeletionAudit> audits;
    private boolean serving;

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        this.stores = new DeletionStores(context);
        this.applied = new AppliedEvents(context);
        this.servingStore = context.getStateStore(StoreNames.SERVING_GENERATION);
        this.audits = context.getStateStore(StoreNames.DELETION_AUDIT);
        this.serving = dev.ensemble.sessions.schema.Generations.parse(servingStore.get(SERVING_KEY)).equals(generation);
        this.deletions = new DeletionWorkflow(context, stores, applied, config, () -> serving);
    }

    @Override
    public void process(Record<String, Event> record) {
        Event e = record.value();
        if (e == null) {
            dev.ensemble.sessions.schema.Generation marker = dev.ensemble.sessions.schema.Generations.markerOf(record.headers());
            if (marker != null) { // a handover: from here on, only the named generation appends decisions
                servingStore.put(SERVING_KEY, Integer.toString(marker.number()));
                serving = marker.equals(generation);
            }
            return;
        }
        DeadLetterProcessingExceptionHandler.refuseIfFailedBefore(context, Projector.EVENT_INTAKE); // failed here on a bug before: dead-lettered
        EventJson.Validation.check(e);
        AppliedEvents.NewId newId = applied.ifNew(e); // reads the account, the eventId and the runId alone
        if (newId == null) {
            return; // a duplicate: not walked
        }
        ViewBounds.event(e); // texts shortened, content lists capped, before anything keeps them; an over-long id refused
        Object p = e.getPayload();
        if (DeletionWorkflow.isDecision(e)) {
            throw new InvalidEventException(e.getEventId(), EventTypes.typeOf(e), null,
                    "deletion decisions are made only by the projector's guard (" + DeletionWorkflow.SOURCE + "); this one is not its own");
        }
        if (p instanceof SessionDeletedOnComputer a) {
            deletions.checkAnswer(e, a);
        }
        ConversationProcessor.refuseForged(e, audits::get); // the assistant conversations' forged decisions and answers
        // taken: nothing above refused it; a run's facts change in the same write of its record
        if (p instanceof RunClaimed rc) {
            newId.take(run -> foldClaim(e, rc, run));
        } else if (p instanceof EngineEvent ee) {
            newId.take(run -> foldEngine(e, ee, run));
        } else {
            newId.take(null);
        }
        if (p instanceof TaskChanged tc) {
            foldNewest(stores.taskStates, Keys.of(e.getAccount(), tc.getTaskId()), e);
        } else if (p instanceof ComputerStatus cs) {
            foldNewest(stores.computerStates, Keys.of(e.getAccount(), cs.getComputerId()), e);
        }
        // the chains change the run's record the intake holds, and it is written once, after them (when they fail, the
        // task's transaction is aborted and its stores restored, or the event is dead-lettered and never applied again)
        context.forward(record.withValue(new TakenEvent(e, newId.runKey(), newId.run())), Projector.SESSION_CHAINS);
        newId.store();
        context.forward(record, Projector.CORPUS_STATS);
        if (ConversationProcessor.folds(p)) { // the assistant conversations get only the events they fold
            context.forward(record, Projector.ASSISTANT_CONVERSATIONS);
        }
        if (p instanceof SessionDeletionRequested r) {
            deletions.decide(record, e, r);
        } else if (p instanceof SessionDeletedOnComputer a) {
            deletions.answer(record, e, a);
        } else if (p instanceof ComputerStatus cs) {
            // every session that ran on the computer, deleted ones too: a retirement view is the rules applied to
            // the newest facts, and it must not depend on whether a session's last change was published before or
            // after this report (views are forwarded once per interval), or a replay would differ from the live run
            for (String id : stores.sessionsOn(e.getAccount(), cs.getComputerId())) {
                SessionView s = stores.session(e.getAccount(), id);
                if (s != null) {
                    context.forward(new Record<>(Keys.of(s.getAccount(), id), s, record.timestamp()), Projector.RETIREMENT);
                }
            }
        }
    }

    // ---- facts -----------------------------------------------------------------------------------------

    private static void foldClaim(Event e, RunClaimed rc, RunRecord run) {
        if (run.sessionId() != null) {
            return; // a run is claimed once; the chains ignore a second claim, and so do its facts
        }
        RunFacts f = run.facts();
        List<String> ids = f == null ? new ArrayList<>() : new ArrayList<>(f.getAgentSessionIds());
        if (rc.getAgentSessionId() != null && !ids.contains(rc.getAgentSessionId())) {
            ids.add(0, rc.getAgentSessionId());
        }
        run.setFacts(RunFacts.newBuilder().setRunId(rc.getRunId()).setTaskId(rc.getTaskId()).setSourceRef(rc.getSourceRef())
                .setKind(rc.getKind().name()).setKeepDays(rc.getKeepDays()).setNextRunAt(rc.getNextRunAt())
                .setAgentSessionIds(ids).setClaimedAt(e.getOccurredAt()).build());
    }

    private static void foldEngine(Event e, EngineEvent ee, RunRecord run) {
        RunFacts f = run.facts();
        if (f == null) {
            // the run is not claimed yet (its engine event waits in the chains); keep the id for when it is
            f = RunFacts.newBuilder().setRunId(ee.getRunId()).setKind("UNKNOWN").setClaimedAt(e.getOccurredAt())
                    .setAgentSessionIds(new ArrayList<>()).build();
            run.setFacts(f);
        }
        if (!f.getAgentSessionIds().contains(ee.getAgentSessionId())) {
            List<String> ids = new ArrayList<>(f.getAgentSessionIds());
            ids.add(ee.getAgentSessionId());
            f.setAgentSessionIds(ids);
        }
    }

    /** Keeps the event when it is not older than the one held (out-of-order reports change nothing). */
    private static void foldNewest(KeyValueStore<String, Event> store, String key, Event e) {
        Event held = store.get(key);
        if (held == null || !e.getOccurredAt().isBefore(held.getOccurredAt())) {
            store.put(key, e);
        }
    }
}

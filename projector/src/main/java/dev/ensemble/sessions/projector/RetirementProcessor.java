package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.DeletionState;
import dev.ensemble.sessions.views.RetirementComputer;
import dev.ensemble.sessions.views.RetirementDeletion;
import dev.ensemble.sessions.views.RetirementSkip;
import dev.ensemble.sessions.views.RetirementTask;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The retirement view (guide §5 and §6, DESIGN.md §4 Retirement): for every session the session chains or the
 * deletion workflow changed (or a computer's status touched), the facts ({@link DeletionStores#facts}) go through {@link RetirementRules} as of the
 * newest fact, and the view is forwarded under {@code <account>/<sessionId>} when it differs from the one
 * published last (its sequence then grows: {@link #nextSequence}); what was published is kept as its
 * {@link RetirementDigest}. Input: SessionView records keyed
 * {@code <account>/<sessionId>}.
 */
final class RetirementProcessor implements Processor<String, SessionView, String, RetirementView> {
    private final RetirementRules.Config config;
    private ProcessorContext<String, RetirementView> context;
    private DeletionStores stores;
    private KeyValueStore<String, RetirementDigest> published;

    RetirementProcessor(RetirementRules.Config config) {
        this.config = config;
    }

    @Override
    public void init(ProcessorContext<String, RetirementView> context) {
        this.context = context;
        this.stores = new DeletionStores(context);
        this.published = context.getStateStore(StoreNames.RETIREMENT_DIGESTS);
    }

    @Override
    public void process(Record<String, SessionView> record) {
        SessionView s = record.value();
        if (s == null) {
            return;
        }
        dev.ensemble.sessions.streams.DeadLetterProcessingExceptionHandler.refuseIfFailedBefore(context, Projector.RETIREMENT);
        stores.indexComputers(s);
        String key = Keys.of(s.getAccount(), s.getSessionId());
        RetirementDigest held = published.get(key);
        RetirementView next = view(s);
        byte[] digest = RetirementDigest.of(next);
        if (held != null && held.sameAs(digest)) {
            return;
        }
        next.setSequence(nextSequence(held == null ? 0L : held.sequence(), next));
        published.put(key, new RetirementDigest(next.getSequence(), digest));
        context.forward(new Record<>(key, ViewBounds.retirement(next), record.timestamp()));
    }

    /**
     * A changed view's sequence: its evaluation time (ms since the epoch), or one more than the last when that is not
     * higher. Consumers keep a view only when its sequence is higher than the one they hold; a rebuild publishes fewer
     * intermediate changes than the projector did live, so a count of changes would restart below what they hold and
     * be ignored, while the evaluation time of the newest fact is where the live views were.
     */
    static long nextSequence(long last, RetirementView next) {
        return Math.max(last + 1, next.getEvaluatedAt().toEpochMilli());
    }

    /**
     * The view of {@code s} from the stores, as of its newest fact; its sequence is 0 until it is published
     * ({@link #nextSequence}).
     */
    RetirementView view(SessionView s) {
        java.util.Map<String, dev.ensemble.sessions.views.RunFacts> runFacts = stores.runFacts(s);
        DeletionState d = stores.deletion(s.getAccount(), s.getSessionId());
        RetirementRules.Facts f = stores.facts(s, runFacts, d);
        Instant asOf = DeletionStores.asOf(s, f, d);
        RetirementRules.Verdict v = RetirementRules.evaluate(f, asOf, config);
        RetirementRules.Readiness r = v.readiness();
        List<RetirementTask> tasks = new ArrayList<>();
        for (int i = 0; i < f.tasks().size(); i++) {
            RetirementRules.Task t = f.tasks().get(i);
            tasks.add(new RetirementTask(t.taskId(), t.status(), t.pinned(), t.personOwned(), t.completedAt(), t.deletedAt(),
                    t.changedAt(), r.taskRetiredAt().get(i)));
        }
        List<RetirementComputer> computers = new ArrayList<>();
        for (RetirementRules.Computer c : f.computers()) {
            computers.add(new RetirementComputer(c.computerId(), c.known(), c.online(), c.sessionDelete(), c.reportedAt()));
        }
        RetirementDeletion deletion = null;
        RetirementSkip skip = null;
        if (d != null) {
            if (d.getFirstRequestId() != null) {
                deletion = new RetirementDeletion(d.getFirstRequestId(), new ArrayList<>(d.getRequestIds()),
                        Objects.requireNonNullElse(d.getReason(), ""), d.getAcceptedAt(), d.getLastAttemptAt(),
                        new ArrayList<>(d.getOwedComputerIds()), new ArrayList<>(d.getConfirmedComputerIds()), d.getFailedAt(),
                        d.getLastError(), s.getDeleted() ? null : r.readyAt());
            }
            if (d.getLastSkipRequestId() != null) {
                skip = new RetirementSkip(d.getLastSkipRequestId(), d.getLastSkipReason(), d.getLastSkipAt());
            }
        }
        return RetirementView.newBuilder()
                .setSessionId(s.getSessionId())
                .setAccount(s.getAccount())
                .setSpace(s.getSpace())
                .setSequence(0L)
                .setEvaluatedAt(asOf)
                .setKind(s.getKind())
                .setSourceRef(s.getSourceRef())
                .setAgent(s.getAgent())
                .setState(v.state().name())
                .setReason(r.reason())
                .setReadyAt(r.readyAt())
                .setNextDueAt(v.nextDueAt())
                .setRecheckMs(v.recheck().toMillis())
                .setRunsIdle(r.runsIdle())
                .setComputersReady(r.computersReady())
                .setKept(r.kept())
                .setBlockers(new ArrayList<>(v.blockers()))
                .setRunIds(new ArrayList<>(f.runIds()))
                .setGoingRunIds(new ArrayList<>(f.goingRunIds()))
                .setQueuedRunIds(new ArrayList<>(f.queuedRunIds()))
                .setTasks(tasks)
                .setComputers(computers)
                .setLastActivityAt(s.getLastActiveAt())
                .setLastAnswerAt(f.lastAnswerAt())
                .setKeepDays(f.keepDays())
                .setNextRunAt(f.nextRunAt())
                .setIdleAt(r.idleAt())
                .setAgentSessionIds(DeletionStores.agentSessionIds(s, runFacts))
                .setDeletion(deletion)
                .setLastSkip(skip)
                .setDeleted(s.getDeleted())
                .setDeletedAt(s.getDeletedAt())
                .build();
    }
}

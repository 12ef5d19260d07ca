package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.ParkedEvents;
import dev.ensemble.sessions.views.RunRef;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Folds the event log, as the event intake passes it on (valid and new events only), into session chains ({@link SessionChainRules}) and forwards every changed session
 * under key {@code <account>/<sessionId>}, once per {@link Projector#VIEW_EMIT_INTERVAL} at most (less often while it
 * works through a backlog, {@link CatchUp}): a change marks the session
 * in the {@link StoreNames#PENDING_VIEWS} store, and a wall-clock punctuation forwards the newest view of each
 * marked session and clears the marks. The marks are a changelogged store, so a view changed before a commit
 * is forwarded after a crash too (exactly-once: the mark and the change commit together). Most events are
 * engine events and status reports that change only a session's fill and a run's record; coalescing them is what keeps the views' topic and the
 * retirement rules off the per-event path. Input key: account. An invalid event (blank ids, an account with a
 * '/') never reaches it: the intake raises {@link dev.ensemble.sessions.schema.InvalidEventException} before any
 * state changes, and the processing exception handler sends it to the dead-letter topic.
 */
final class SessionChainProcessor implements Processor<String, Object, String, SessionView>, ChainState {
    private static final AvroSerde<Event> EVENTS = AvroSerde.of(Event.class);

    private ProcessorContext<String, SessionView> context;
    private AppliedEvents applied;
    private SessionStore sessions;
    private KeyValueStore<String, RunRecord> runs;
    private KeyValueStore<String, ParkedEvents> parked;
    private KeyValueStore<String, String> taskSessions;
    private KeyValueStore<String, Long> pending;
    /**
     * The sessions marked in {@link #pending}, each with the time of its newest change (ms): a session changed again
     * before its view is published keeps its one mark in the store, written by its first change, and only its time here
     * moves on (a view published after a crash carries the time of the first change since the last publication).
     * Loaded from the store when the task starts (or starts again after an aborted transaction, its store restored).
     */
    private final java.util.Map<String, Long> marked = new java.util.HashMap<>();
    private long timestamp;
    /** The run record read last in this event ({@link #runRecord}), and its key; none between events. */
    private String heldRunKey;
    private RunRecord heldRun;
    /**
     * The record of the event's run as the intake passed it on ({@link TakenEvent}), and its key: changed here, written by
     * the intake once the chains are done with the event; none for an event not about a run.
     */
    private String takenRunKey;
    private RunRecord takenRun;
    private final CatchUp catchUp = new CatchUp();


    @Override
    public void init(ProcessorContext<String, SessionView> context) {
        this.context = context;
        this.applied = new AppliedEvents(context);
        this.sessions = new SessionStore(context);
        this.runs = context.getStateStore(StoreNames.RUNS);
        this.parked = context.getStateStore(StoreNames.PARKED_RUNS);
        this.taskSessions = context.getStateStore(StoreNames.TASK_SESSIONS);
        this.pending = context.getStateStore(StoreNames.PENDING_VIEWS);
        marked.clear();
        try (org.apache.kafka.streams.state.KeyValueIterator<String, Long> it = pending.all()) {
            while (it.hasNext()) {
                org.apache.kafka.streams.KeyValue<String, Long> kv = it.next();
                marked.put(kv.key, kv.value);
            }
        }
        context.schedule(Projector.VIEW_EMIT_INTERVAL, org.apache.kafka.streams.processor.PunctuationType.WALL_CLOCK_TIME, now -> emitPending());
    }

    /** Forwards the newest view of every session changed since the last call (its record time: the last change's). */
    private void emitPending() {
        catchUp.publish(context.currentSystemTimeMs(), pending, (key, stored) -> {
            Long newest = marked.remove(key);
            long time = newest != null ? newest : stored;
            SessionView s = sessions.get(key);
            if (s != null) {
                // the retirement rules get the whole chain; the topic gets it bounded
                context.forward(new Record<>(key, s, time), Projector.RETIREMENT);
                context.forward(new Record<>(key, ViewBounds.session(s), time), Projector.SESSIONS_VIEW_SINK);
            }
        });
    }

    /**
     * Applies a {@link TakenEvent} from the intake, or one of the deletion workflow's own decisions (an {@link Event}), to
     * the chains.
     */
    @Override
    public void process(Record<String, Object> record) {
        String outerKey = takenRunKey; // none, unless an event is applied while another one is (not done today)
        RunRecord outerRun = takenRun;
        try {
            if (record.value() instanceof TakenEvent taken) {
                takenRunKey = taken.runKey();
                takenRun = taken.run();
                apply(taken.event(), record.timestamp());
            } else {
                takenRunKey = null;
                takenRun = null;
                apply((Event) record.value(), record.timestamp());
            }
        } finally {
            takenRunKey = outerKey;
            takenRun = outerRun;
        }
    }

    private void apply(Event e, long recordTimestamp) {
        if (e == null) {
            return; // a tombstone on the event log means nothing
        }
        dev.ensemble.sessions.streams.DeadLetterProcessingExceptionHandler.refuseIfFailedBefore(context, Projector.SESSION_CHAINS);
        // the event intake, the only processor upstream, has refused an invalid event and dropped a duplicate
        // already, and recorded as applied every event it forwards; its deletion workflow's own decisions come here
        // directly, and are recorded here (the workflow checks that they were: DeletionWorkflow#applyToChains)
        if (DeletionWorkflow.isDecision(e)) {
            applied.add(e);
        }
        timestamp = recordTimestamp;
        heldRunKey = null; // held for this event only
        heldRun = null;
        catchUp.processed(timestamp);
        SessionChainRules.apply(e, this, this::forward);
    }

    private void forward(SessionView s) {
        mark(Keys.of(s.getAccount(), s.getSessionId()));
    }

    /** Marks the session under {@code key} as changed at this event's time ({@link #marked}). */
    private void mark(String key) {
        if (marked.put(key, timestamp) == null) {
            pending.put(key, timestamp); // in the same transaction as the change: published after a crash too
        }
    }

    @Override
    public SessionView session(String account, String sessionId) {
        return sessions.stored(account, sessionId);
    }

    @Override
    public void putSession(SessionView session) {
        sessions.put(ViewBounds.stored(session));
    }

    @Override
    public SessionFill fill(String account, String sessionId) {
        return sessions.fill(account, sessionId, runId -> runRecord(Keys.of(account, runId)));
    }

    @Override
    public void putFill(String account, String sessionId, SessionFill fill) {
        sessions.putFill(account, sessionId, fill);
        mark(Keys.of(account, sessionId));
    }

    /**
     * The run's record under {@code key}, or null: the event's own run's as the intake passed it on ({@link TakenEvent});
     * another run's read (decoded) once per event however many times the rules ask for its session and progress, and
     * every write goes through {@link #putRunRecord}, so what is held is what the store holds.
     */
    private RunRecord runRecord(String key) {
        if (key.equals(takenRunKey)) {
            return takenRun;
        }
        if (!key.equals(heldRunKey)) {
            heldRun = runs.get(key);
            heldRunKey = key;
        }
        return heldRun;
    }

    /** Writes a run's record; the event's own run's record is written by the intake, after the chains ({@link TakenEvent}). */
    private void putRunRecord(String key, RunRecord r) {
        if (key.equals(takenRunKey)) {
            if (r != takenRun) {
                throw new IllegalStateException("the record of run " + key + " the intake passed on was replaced, not changed");
            }
            return;
        }
        runs.put(key, r);
        heldRunKey = key;
        heldRun = r;
    }

    @Override
    public RunRef run(String account, String runId) {
        RunRecord r = runRecord(Keys.of(account, runId));
        return r == null || r.sessionId() == null ? null : new RunRef(runId, r.sessionId());
    }

    @Override
    public RunProgress progress(String account, String runId) {
        RunRecord r = runRecord(Keys.of(account, runId));
        RunProgress p = r.progress();
        if (p != null) {
            return p;
        }
        // a run claimed before runs had a progress of their own: its session's view holds it
        for (dev.ensemble.sessions.views.RunView v : sessions.stored(account, r.sessionId()).getRuns()) {
            if (v.getRunId().equals(runId)) {
                return RunProgress.of(v);
            }
        }
        throw new IllegalStateException("run " + runId + " is indexed to session " + r.sessionId() + " but not in it");
    }

    @Override
    public void putRun(String account, RunRef ref, RunProgress progress) {
        String key = Keys.of(account, ref.getRunId());
        RunRecord r = runRecord(key); // the intake's, with the claim's eventId
        if (r == null) {
            r = new RunRecord();
        }
        r.setSessionId(ref.getSessionId());
        r.setProgress(progress);
        putRunRecord(key, r);
    }

    @Override
    public void putProgress(String account, String runId, RunProgress progress) {
        String key = Keys.of(account, runId);
        RunRecord r = runRecord(key);
        r.setProgress(progress);
        putRunRecord(key, r);
    }

    @Override
    public java.util.Set<String> sessionsOfTask(String account, String taskId) {
        String v = taskSessions.get(Keys.of(account, taskId));
        return v == null ? java.util.Set.of() : new java.util.LinkedHashSet<>(java.util.Arrays.asList(v.split("\n")));
    }

    @Override
    public void addSessionOfTask(String account, String taskId, String sessionId) {
        java.util.Set<String> ids = new java.util.LinkedHashSet<>(sessionsOfTask(account, taskId));
        if (ids.add(sessionId)) {
            taskSessions.put(Keys.of(account, taskId), String.join("\n", ids));
        }
    }

    @Override
    public void park(String account, String awaitedRunId, Event event) {
        String key = Keys.of(account, awaitedRunId);
        ParkedEvents p = parked.get(key);
        List<ByteBuffer> list = p == null ? new ArrayList<>() : new ArrayList<>(p.getEvents());
        list.add(ByteBuffer.wrap(EVENTS.encode(event)));
        parked.put(key, new ParkedEvents(list));
    }

    @Override
    public List<Event> unpark(String account, String awaitedRunId) {
        String key = Keys.of(account, awaitedRunId);
        ParkedEvents p = parked.get(key);
        if (p == null) {
            return List.of();
        }
        parked.delete(key);
        List<Event> out = new ArrayList<>(p.getEvents().size());
        for (ByteBuffer b : p.getEvents()) {
            byte[] bytes = new byte[b.remaining()];
            b.duplicate().get(bytes);
            out.add(EVENTS.decode(bytes));
        }
        return out;
    }
}

package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.streams.processor.api.ProcessingContext;
import org.apache.kafka.streams.state.KeyValueStore;

import java.util.ArrayList;
import java.util.List;

/**
 * A session as records shaped by how often each changes: the {@link SessionView} as the session chains last wrote it
 * ({@link StoreNames#SESSION_CHAINS}, key {@code <account>/<sessionId>}: its runs and tasks as claimed, computers,
 * folders; written by claims, task changes and deletions), its {@link SessionFill} ({@link StoreNames#SESSION_FILLS},
 * the same key: the newest engine event's agent session id and fill, the last active time, the counts of going runs;
 * written by engine events and status reports) and each run's {@link RunProgress} in the run's record
 * ({@link StoreNames#RUNS}, key {@code <account>/<runId>}: written by its status reports). {@link #get} assembles the
 * whole view ({@link SessionAssembly}); the published view is that.
 */
final class SessionStore {
    private final KeyValueStore<String, SessionView> views;
    private final KeyValueStore<String, SessionFill> fills;
    private final KeyValueStore<String, RunRecord> runs;

    SessionStore(ProcessingContext context) {
        this(context.getStateStore(StoreNames.SESSION_CHAINS), context.getStateStore(StoreNames.SESSION_FILLS),
                context.getStateStore(StoreNames.RUNS));
    }

    SessionStore(KeyValueStore<String, SessionView> views, KeyValueStore<String, SessionFill> fills, KeyValueStore<String, RunRecord> runs) {
        this.views = views;
        this.fills = fills;
        this.runs = runs;
    }

    /** The whole view of the session, or null when there is none. */
    SessionView get(String account, String sessionId) {
        return get(Keys.of(account, sessionId));
    }

    /** The whole view of the session under {@code <account>/<sessionId>}, or null when there is none. */
    SessionView get(String key) {
        SessionView v = views.get(key);
        if (v == null) {
            return null;
        }
        SessionFill f = fills.get(key);
        String account = v.getAccount();
        return SessionAssembly.assemble(v, f != null ? f : SessionFill.of(v, List.of()), runId -> {
            RunRecord r = runs.get(Keys.of(account, runId));
            return r == null ? null : r.progress();
        });
    }

    /** The session as the chains last wrote it (without its fill and its runs' progress), or null when there is none. */
    SessionView stored(String account, String sessionId) {
        return views.get(Keys.of(account, sessionId));
    }

    /**
     * The session's fill, or null when there is no such session. A session written before fills counted its runs (or
     * before its first engine event) gets them counted here from its runs' records as {@code runOf} (by run id) gives
     * them (the session chains pass the event's own run's as the intake handed it to them, {@link TakenEvent}), and its
     * last active time from its view.
     */
    SessionFill fill(String account, String sessionId, java.util.function.Function<String, RunRecord> runOf) {
        String key = Keys.of(account, sessionId);
        SessionFill f = fills.get(key);
        if (f != null && f.isCounted()) {
            return f;
        }
        SessionView v = views.get(key);
        if (v == null) {
            return null;
        }
        List<RunProgress> progress = new ArrayList<>(v.getRuns().size());
        for (RunView r : v.getRuns()) {
            RunRecord record = runOf.apply(r.getRunId());
            RunProgress p = record == null ? null : record.progress();
            progress.add(p != null ? p : RunProgress.of(r)); // a run from before runs had a progress: the view's own
        }
        if (f == null) {
            return SessionFill.of(v, progress);
        }
        return f.counted(progress).touched(v.getLastActiveAt(), 0);
    }

    /** Stores the session's fill (the view's record is not touched). */
    void putFill(String account, String sessionId, SessionFill fill) {
        fills.put(Keys.of(account, sessionId), fill);
    }

    /** Stores the session as the chains keep it ({@link #stored}): the fill and the runs' progress are not touched. */
    void put(SessionView s) {
        views.put(Keys.of(s.getAccount(), s.getSessionId()), s);
    }
}

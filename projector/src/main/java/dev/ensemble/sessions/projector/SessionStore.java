package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.streams.processor.api.ProcessingContext;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A session as two records of its own key {@code <account>/<sessionId>}, shaped by how often each changes: the
 * {@link SessionView} as the session chains last wrote it ({@link StoreNames#SESSION_CHAINS}: its runs, tasks,
 * computers, status; written by claims, status reports, task changes and deletions) and its {@link SessionFill}
 * ({@link StoreNames#SESSION_FILLS}: the newest engine event's agent session id and fill, written by every engine
 * event). {@link #get} assembles the whole view; the published view is that.
 */
final class SessionStore {
    private final KeyValueStore<String, SessionView> views;
    private final KeyValueStore<String, SessionFill> fills;

    SessionStore(ProcessingContext context) {
        this(context.getStateStore(StoreNames.SESSION_CHAINS), context.getStateStore(StoreNames.SESSION_FILLS));
    }

    SessionStore(KeyValueStore<String, SessionView> views, KeyValueStore<String, SessionFill> fills) {
        this.views = views;
        this.fills = fills;
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
        return f == null ? v : f.applyTo(v);
    }

    /** The session's fill, or null when there is no such session; before its first engine event, the view's own. */
    SessionFill fill(String account, String sessionId) {
        String key = Keys.of(account, sessionId);
        SessionFill f = fills.get(key);
        if (f != null) {
            return f;
        }
        SessionView v = views.get(key);
        return v == null ? null : SessionFill.of(v);
    }

    /** Stores the session's fill (the view's record is not touched). */
    void putFill(String account, String sessionId, SessionFill fill) {
        fills.put(Keys.of(account, sessionId), fill);
    }

    /**
     * Stores the whole view {@code s} (as {@link #get} gave it, changed): its record holds every field, with a sequence
     * that leaves out the fill's changes (they are added back when it is read); a model set since the fill's replaces it.
     */
    void put(SessionView s) {
        String key = Keys.of(s.getAccount(), s.getSessionId());
        SessionFill f = fills.get(key);
        if (f == null) {
            views.put(key, s);
            return;
        }
        if (f.model() != null && !f.model().equals(s.getModel())) {
            fills.put(key, new SessionFill(f.agentSessionId(), f.agentSessionAt(), f.contextUsed(), f.contextSize(), null,
                    f.lastActiveAt(), f.changes()));
        }
        long sequence = s.getSequence();
        s.setSequence(sequence - f.changes());
        try {
            views.put(key, s); // encoded here
        } finally {
            s.setSequence(sequence);
        }
    }
}

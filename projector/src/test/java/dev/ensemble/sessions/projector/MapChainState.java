package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.RunRef;
import dev.ensemble.sessions.views.SessionView;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The session-chain state ({@link ChainState}) in maps, for the pure rules' tables: what the projector keeps in its
 * stores, kept as objects (copied in and out, as a store's encoding would), with the whole view assembled as
 * {@link SessionStore#get} assembles it ({@link SessionAssembly}). One account.
 */
final class MapChainState implements ChainState {
    final Map<String, SessionView> sessions = new HashMap<>();
    final Map<String, SessionFill> fills = new HashMap<>();
    final Map<String, RunRef> runs = new HashMap<>();
    final Map<String, RunProgress> progress = new HashMap<>();
    final Map<String, Set<String>> tasks = new HashMap<>();
    final Map<String, List<Event>> parked = new HashMap<>();

    private static final dev.ensemble.sessions.schema.AvroSerde<SessionView> VIEWS = dev.ensemble.sessions.schema.AvroSerde.of(SessionView.class);

    /** A deep copy of {@code v} through its store encoding. */
    static SessionView copy(SessionView v) {
        return VIEWS.decode(VIEWS.encode(v));
    }

    /** The session's whole view, as published, or null. */
    SessionView view(String sessionId) {
        SessionView stored = sessions.get(sessionId);
        if (stored == null) {
            return null;
        }
        SessionView copy = MapChainState.copy(stored);
        return SessionAssembly.assemble(copy, fills.getOrDefault(sessionId, SessionFill.of(copy, List.of())), progress::get);
    }

    @Override
    public SessionView session(String account, String sessionId) {
        SessionView s = sessions.get(sessionId);
        return s == null ? null : MapChainState.copy(s);
    }

    @Override
    public void putSession(SessionView session) {
        sessions.put(session.getSessionId(), MapChainState.copy(ViewBounds.stored(session)));
    }

    @Override
    public SessionFill fill(String account, String sessionId) {
        return fills.get(sessionId);
    }

    @Override
    public void putFill(String account, String sessionId, SessionFill fill) {
        fills.put(sessionId, fill);
    }

    @Override
    public RunRef run(String account, String runId) {
        return runs.get(runId);
    }

    @Override
    public RunProgress progress(String account, String runId) {
        return progress.get(runId);
    }

    @Override
    public void putRun(String account, RunRef ref, RunProgress p) {
        runs.put(ref.getRunId(), ref);
        progress.put(ref.getRunId(), p);
    }

    @Override
    public void putProgress(String account, String runId, RunProgress p) {
        progress.put(runId, p);
    }

    @Override
    public Set<String> sessionsOfTask(String account, String taskId) {
        return tasks.getOrDefault(taskId, Set.of());
    }

    @Override
    public void addSessionOfTask(String account, String taskId, String sessionId) {
        tasks.computeIfAbsent(taskId, k -> new LinkedHashSet<>()).add(sessionId);
    }

    @Override
    public void park(String account, String awaitedRunId, Event event) {
        parked.computeIfAbsent(awaitedRunId, k -> new ArrayList<>()).add(event);
    }

    @Override
    public List<Event> unpark(String account, String awaitedRunId) {
        List<Event> l = parked.remove(awaitedRunId);
        return l == null ? List.of() : l;
    }
}

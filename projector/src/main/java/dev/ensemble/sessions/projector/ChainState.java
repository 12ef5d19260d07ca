package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.RunRef;
import dev.ensemble.sessions.views.SessionView;

import java.util.List;

/**
 * The state the session-chain rules read and write, for one account at a time: sessions by id (and apart, each
 * session's fill, which engine events change), the session of each run, and events parked until a run they need is
 * claimed. The projector backs it with named
 * RocksDB stores; tests may back it with maps.
 */
public interface ChainState {
    /** The session, or null when there is none. */
    SessionView session(String account, String sessionId);

    /** Stores the session under its account and id. */
    void putSession(SessionView session);

    /** The session's fill (what its newest engine event says), or null when there is no such session. */
    SessionFill fill(String account, String sessionId);

    /** Stores the session's fill; the session counts as changed (its view is published). */
    void putFill(String account, String sessionId, SessionFill fill);

    /** The run's entry, or null when the run has not been claimed (or is parked). */
    RunRef run(String account, String runId);

    /** Stores which session a run belongs to. */
    void putRun(String account, RunRef ref);

    /** The sessions that hold a run for the task (empty when none). */
    java.util.Set<String> sessionsOfTask(String account, String taskId);

    /** Records that the session holds a run for the task. */
    void addSessionOfTask(String account, String taskId, String sessionId);

    /** Keeps {@code event} aside until {@code awaitedRunId} is claimed. */
    void park(String account, String awaitedRunId, Event event);

    /** Removes and returns the events parked for {@code awaitedRunId}, in arrival order (empty when none). */
    List<Event> unpark(String account, String awaitedRunId);
}

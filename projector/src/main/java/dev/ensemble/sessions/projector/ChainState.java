package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.RunRef;
import dev.ensemble.sessions.views.SessionView;

import java.util.List;

/**
 * The state the session-chain rules read and write, for one account at a time: sessions by id as the chains keep them
 * (and apart, each session's fill, which engine events and status reports change), each run's session and progress
 * (which its status reports change), and events parked until a run they need is claimed. The projector backs it with named
 * RocksDB stores; tests may back it with maps.
 */
public interface ChainState {
    /**
     * The session as the chains keep it, or null when there is none: its runs as claimed (their progress is
     * {@link #progress}'s), its sequence and last active time without its fill's ({@link SessionFill}).
     */
    SessionView session(String account, String sessionId);

    /** Stores the session under its account and id. */
    void putSession(SessionView session);

    /**
     * The session's fill (what its newest engine event says, its last active time, its going runs counted), or null
     * when there is no such session.
     */
    SessionFill fill(String account, String sessionId);

    /** Stores the session's fill; the session counts as changed (its view is published). */
    void putFill(String account, String sessionId, SessionFill fill);

    /** The run's entry, or null when the run has not been claimed (or is parked). */
    RunRef run(String account, String runId);

    /** The progress (status, times, end report) of a run whose claim was applied. */
    RunProgress progress(String account, String runId);

    /** Stores which session a run belongs to, and its progress as claimed. */
    void putRun(String account, RunRef ref, RunProgress progress);

    /** Stores the progress of a run whose claim was applied; its session counts as changed when its fill is put. */
    void putProgress(String account, String runId, RunProgress progress);

    /** The sessions that hold a run for the task (empty when none). */
    java.util.Set<String> sessionsOfTask(String account, String taskId);

    /** Records that the session holds a run for the task. */
    void addSessionOfTask(String account, String taskId, String sessionId);

    /** Keeps {@code event} aside until {@code awaitedRunId} is claimed. */
    void park(String account, String awaitedRunId, Event event);

    /** Removes and returns the events parked for {@code awaitedRunId}, in arrival order (empty when none). */
    List<Event> unpark(String account, String awaitedRunId);
}

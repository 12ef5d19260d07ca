package dev.ensemble.sessions.choice;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A coding session on the computer as the session view has it (guide §1), offered to {@link Candidates#filter}.
 *
 * @param lastActiveAt when a run in it last started or finished
 * @param kind         the kind of its first run; only {@link NewRun.RunKind#TASK_RUN} sessions are candidates (not chats)
 * @param deleting     a deletion is under way
 * @param fill         how much of its context window it uses, 0–1, from its agent's last report; null when unknown
 * @param taskCount    tasks in it (the chain length)
 * @param lastReport   the latest run's report, handed to a new session when this one is too full
 * @param tasks        its tasks, oldest first
 */
public record CandidateSession(String sessionId, Instant lastActiveAt, Status status, boolean resumable,
                               NewRun.RunKind kind, boolean deleting, String computerId, String agent, Double fill,
                               int taskCount, String lastReport, List<SessionTask> tasks) {
    public CandidateSession {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(lastActiveAt, "lastActiveAt");
        tasks = tasks == null ? List.of() : List.copyOf(tasks);
    }

    /** The session's status (guide §1: working, waiting, queued, idle). */
    public enum Status { WORKING, WAITING, QUEUED, IDLE }
}

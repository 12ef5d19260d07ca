package dev.ensemble.sessions.choice;

import java.util.Objects;

/**
 * A new run about to start (guide §4): the task and where it runs, plus the facts that decide whether it may choose
 * a session at all ({@link Eligibility}).
 *
 * @param space             the web space the claim came from, or this computer's own local space
 * @param account           whom it runs for there
 * @param projectId         the task's project, or null
 * @param kind              {@link RunKind#TASK_RUN} for a task run; chats, asks, routines and node runs never choose
 * @param sessionId         Assign.session / the assistant's session: the run already names a session
 * @param continueFromJobId the run continues an earlier run
 * @param folder            a folder the run was given (a shared folder, …)
 * @param repository        a repository it works in
 * @param pullRequest       a pull request it works on
 * @param chatId            a chat it belongs to
 * @param nodePlan          it is a step of an Ensemble Node plan
 * @param retry             it retries an earlier run
 * @param newSession        Assign → More options → Always start a new agent session
 */
public record NewRun(String runId, String taskId, TaskFacts facts, String space, String account, String projectId,
                     String computerId, String agent, RunKind kind, String sessionId, String continueFromJobId,
                     String folder, String repository, String pullRequest, String chatId, boolean nodePlan,
                     boolean retry, boolean newSession) {
    public NewRun {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(facts, "facts");
        Objects.requireNonNull(computerId, "computerId");
        Objects.requireNonNull(agent, "agent");
        kind = kind == null ? RunKind.TASK_RUN : kind;
    }

    /** A plain task run that may choose: no session, earlier run, folder, repository, pull request or chat. */
    public static NewRun taskRun(String runId, String taskId, TaskFacts facts, String space, String account,
                                 String projectId, String computerId, String agent) {
        return new NewRun(runId, taskId, facts, space, account, projectId, computerId, agent, RunKind.TASK_RUN,
                null, null, null, null, null, null, false, false, false);
    }

    /** What kind of run this is (mirrors the event schema's RunKind). */
    public enum RunKind { TASK_RUN, TERMINAL_CHAT, ASSISTANT_CHAT, ROUTINE, ASK, NODE_RUN, ONE_OFF, UNKNOWN }
}

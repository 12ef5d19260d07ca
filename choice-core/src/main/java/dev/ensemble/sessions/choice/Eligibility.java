package dev.ensemble.sessions.choice;

import java.util.Optional;

/**
 * Who may choose at all (guide §4, first paragraph): a new task run by the person's own agent that would start a new
 * session in a new folder — no session, continueFromJobId, folder, repository, pull request or chat; not an Ensemble
 * Node plan or a retry. Pure.
 */
public final class Eligibility {
    private Eligibility() {
    }

    /** Why {@code run} may not choose (a short phrase naming the rule), or empty when it may. */
    public static Optional<String> whyNot(NewRun run) {
        if (run.kind() != NewRun.RunKind.TASK_RUN) return Optional.of("it is not a task run (" + run.kind().name().toLowerCase() + ")");
        if (present(run.sessionId())) return Optional.of("it names a session to continue");
        if (present(run.continueFromJobId())) return Optional.of("it continues an earlier run (continueFromJobId)");
        if (present(run.folder())) return Optional.of("it has a folder");
        if (present(run.repository())) return Optional.of("it works in a repository");
        if (present(run.pullRequest())) return Optional.of("it works on a pull request");
        if (present(run.chatId())) return Optional.of("it belongs to a chat");
        if (run.nodePlan()) return Optional.of("it is an Ensemble Node plan step");
        if (run.retry()) return Optional.of("it is a retry");
        return Optional.empty();
    }

    private static boolean present(String s) {
        return s != null && !s.isBlank();
    }
}

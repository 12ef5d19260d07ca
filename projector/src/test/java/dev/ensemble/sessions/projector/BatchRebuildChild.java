package dev.ensemble.sessions.projector;

import java.nio.file.Path;

/**
 * A batch rebuild in a JVM of its own, for {@link BatchRebuildTest} to kill (SIGKILL) once everything is sent and the
 * transaction is not committed yet: prints {@link #SENT} then, and waits. Args: bootstrap servers, state dir.
 */
public final class BatchRebuildChild {
    static final String SENT = "batch rebuild: everything sent, not committed";

    private BatchRebuildChild() {
    }

    public static void main(String[] args) throws Exception {
        BatchRebuild.beforeCommit = () -> {
            System.out.println(SENT);
            System.out.flush();
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        BatchRebuild.run(args[0], Path.of(args[1]), 1, RetirementRules.Config.defaults(), n -> { });
    }
}

package dev.ensemble.sessions.projector;

import java.nio.file.Path;
import java.util.Map;

/**
 * A projector in a JVM of its own, for {@link ProjectorRebuildTest} to kill (SIGKILL) in the middle of a replay.
 * Fetches a few records at a time so that the replay takes seconds. Args: bootstrap servers, state dir.
 */
public final class RebuildChild {
    private RebuildChild() {
    }

    public static void main(String[] args) throws Exception {
        Projector p = new Projector(args[0], Path.of(args[1]), 1, Map.of("commit.interval.ms", 100, "session.timeout.ms", 6000,
                "max.partition.fetch.bytes", 600, "fetch.max.bytes", 600));
        p.start();
        Thread.sleep(Long.MAX_VALUE);
    }
}

package dev.ensemble.sessions.agent.assistant;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * How a turn or a drop reaches {@code <state>/assistant-sessions.json}: a store this process keeps open
 * ({@link #of}), or one opened for each use and closed after ({@link #opening}), so that the computer agent and an
 * agent launcher's {@code assistant-turn} command, two processes, take turns with the file ({@link AssistantSessions}
 * holds an OS lock on it while open). A use is short (read an entry, store one, drop a chat); nobody keeps the store
 * open while an agent runs.
 */
public interface AssistantStore {
    /** Runs {@code use} with the store open, and returns what it returns. */
    <T> T with(Function<AssistantSessions, T> use);

    /** A store kept open by the caller. */
    static AssistantStore of(AssistantSessions open) {
        Objects.requireNonNull(open, "open");
        return new AssistantStore() {
            @Override
            public <T> T with(Function<AssistantSessions, T> use) {
                return use.apply(open);
            }
        };
    }

    /**
     * The store of {@code stateDir}, opened for each use and closed after. While another process (or use) has it open,
     * opening is tried again every 20 ms for at most {@code wait}.
     *
     * @throws IllegalStateException (from {@link #with}) when it is still open elsewhere after {@code wait}
     */
    static AssistantStore opening(Path stateDir, Clock clock, Duration wait) {
        Objects.requireNonNull(stateDir, "stateDir");
        Objects.requireNonNull(clock, "clock");
        return new AssistantStore() {
            @Override
            public <T> T with(Function<AssistantSessions, T> use) {
                long until = System.nanoTime() + wait.toNanos();
                while (true) {
                    AssistantSessions s;
                    try {
                        s = AssistantSessions.open(stateDir, clock);
                    } catch (IllegalStateException locked) {
                        if (System.nanoTime() - until >= 0) {
                            throw new IllegalStateException(locked.getMessage() + " (waited " + wait + ")", locked);
                        }
                        try {
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException("interrupted while waiting for " + stateDir.resolve(AssistantSessions.FILE), e);
                        }
                        continue;
                    }
                    try (s) {
                        return use.apply(s);
                    }
                }
            }
        };
    }
}

package dev.ensemble.sessions.assistant;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Asking computers to drop a deleted chat's or routine's session (guide §6 "Deleting a chat deletes its session"),
 * as pure functions: which computers are asked, and when a pending request is asked again, kept or dropped.
 * <ul>
 *   <li>{@link #computersToAsk}: "each of the person's computers that runs assistant turns" (and is paired);</li>
 *   <li>{@link #next}: "A computer that is away, or does not confirm, is asked again when its event stream next
 *       opens, and while it is online every 5 minutes" ({@link #RETRY_EVERY}); "pending requests are kept per
 *       computer ... for 30 days" ({@link #KEEP_PENDING}), "and those of a computer no longer paired are
 *       dropped".</li>
 * </ul>
 * Boundaries: asked again at exactly 5 minutes after the last ask (the minute tick that reaches it); a request is
 * kept for 30 days and expires at exactly 30 days after it was made (after that the computer has dropped an
 * unused session itself). The computer carries out a drop only after any running turn of that chat there has
 * ended; that is its own rule, not this one's.
 */
public final class DropRules {
    private DropRules() {
    }

    /** "while it is online every 5 minutes". */
    public static final Duration RETRY_EVERY = Duration.ofMinutes(5);
    /** "pending requests are kept per computer ... for 30 days". */
    public static final Duration KEEP_PENDING = Duration.ofDays(30);

    /**
     * A computer of the person, as its newest status says.
     *
     * @param assistantTurns it runs assistant turns
     * @param streamOpenedAt when its event stream last opened, or null
     */
    public record Computer(String computerId, boolean paired, boolean online, boolean assistantTurns, Instant streamOpenedAt) {
    }

    /**
     * A drop not yet confirmed by one computer.
     *
     * @param requestedAt when the chat or routine was deleted
     * @param lastAskedAt when the computer was last asked, or null when never (it was away)
     */
    public record PendingDrop(String key, String computerId, Instant requestedAt, Instant lastAskedAt) {
        public PendingDrop {
            Objects.requireNonNull(requestedAt, "requestedAt");
        }
    }

    public enum Action {
        /** Ask the computer now. */
        ASK,
        /** Keep the request; look again at {@link Next#at()} (null: when the computer's stream next opens). */
        WAIT,
        /** Kept 30 days: forget it (the computer drops an unused session itself). */
        EXPIRE,
        /** The computer is no longer paired: forget it. */
        DROP_UNPAIRED
    }

    public record Next(Action action, Instant at) {
    }

    /** The computers to ask: paired and running assistant turns, online or not (an away one is asked later). */
    public static List<String> computersToAsk(List<Computer> computers) {
        return computers.stream().filter(c -> c.paired() && c.assistantTurns()).map(Computer::computerId).toList();
    }

    /** What to do with {@code p} at {@code now} given its computer (null: not paired any more). */
    public static Next next(PendingDrop p, Computer computer, Instant now) {
        if (computer == null || !computer.paired()) {
            return new Next(Action.DROP_UNPAIRED, null);
        }
        Instant expiresAt = p.requestedAt().plus(KEEP_PENDING);
        if (!now.isBefore(expiresAt)) {
            return new Next(Action.EXPIRE, null);
        }
        if (!computer.online()) {
            return new Next(Action.WAIT, null);
        }
        if (p.lastAskedAt() == null) {
            return new Next(Action.ASK, now);
        }
        if (computer.streamOpenedAt() != null && computer.streamOpenedAt().isAfter(p.lastAskedAt())) {
            return new Next(Action.ASK, now); // its event stream opened since it was last asked
        }
        Instant again = p.lastAskedAt().plus(RETRY_EVERY);
        if (!now.isBefore(again)) {
            return new Next(Action.ASK, now);
        }
        return new Next(Action.WAIT, again.isBefore(expiresAt) ? again : expiresAt);
    }
}

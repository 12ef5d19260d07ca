package dev.ensemble.sessions.assistant;

import dev.ensemble.sessions.assistant.TurnRules.Kind;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * When an assistant conversation's session is dropped for being unused (guide §5 "Sessions unused for 30 days (or
 * the chat's keepDays) are dropped", §6 "Deleting a chat deletes its session" for routines, the table "At a glance"),
 * as pure functions. The numbers are a {@link Config}; {@link Config#defaults()} holds the guide's, the same as the
 * projector's {@code RetirementRules.Config.defaults()} (a projector test keeps the two equal), and a caller with a
 * retirement config of its own builds this one from its fields, so the cleanup's retirement view and these rules
 * cannot disagree:
 * <ul>
 *   <li>a chat: 30 days unused, or its keepDays; keepDays 0 is never (the persistent sessions guide's "Idle TTL of 0
 *       — disables auto-close");</li>
 *   <li>a routine: keepDays = {@link #routineKeepDays}, twice the gap to its next run within 30..90 days;</li>
 *   <li>a node conversation: 7 days ({@link TurnRules#NODE_KEEP_DAYS}), or its keepDays;</li>
 *   <li>an ask: 30 minutes after the last answer, whatever its keepDays (the 1 sent with it is the computer's own
 *       fallback; {@link AskRules#sweep} has the rest of the ask's rules);</li>
 *   <li>a one-off: never kept, so nothing to reap.</li>
 * </ul>
 * "Unused for 30 days" is read as: dropped at last use + 30 days exactly (inclusive), as the projector's
 * RetirementRules does.
 */
public final class IdleRules {
    private IdleRules() {
    }

    /**
     * The numbers of the idle rules.
     *
     * @param askIdle              an ask goes this long after its last answer (30 minutes)
     * @param chatIdle             an assistant chat goes after this long unused (30 days)
     * @param nodeConversationIdle a node's conversation goes after this long unused (7 days)
     * @param routineMin           a routine is kept at least this long unused (30 days)
     * @param routineMax           and at most this long (90 days)
     */
    public record Config(Duration askIdle, Duration chatIdle, Duration nodeConversationIdle, Duration routineMin,
                         Duration routineMax) {
        public Config {
            Objects.requireNonNull(askIdle, "askIdle");
            Objects.requireNonNull(chatIdle, "chatIdle");
            Objects.requireNonNull(nodeConversationIdle, "nodeConversationIdle");
            Objects.requireNonNull(routineMin, "routineMin");
            Objects.requireNonNull(routineMax, "routineMax");
        }

        /** The guide's numbers: 30 minutes, 30 days, 7 days, 30..90 days. */
        public static Config defaults() {
            return new Config(Duration.ofMinutes(30), Duration.ofDays(30), Duration.ofDays(TurnRules.NODE_KEEP_DAYS),
                    Duration.ofDays(30), Duration.ofDays(90));
        }
    }

    /**
     * When the session is dropped, or null for never (keepDays 0, a one-off, an ask with no answer yet).
     *
     * @param lastUsedAt   the end of its last turn
     * @param lastAnswerAt asks: the last answer
     * @param keepDays     the chat's keepDays, or null
     * @param nextRunAt    routines: the next scheduled run, or null
     */
    public static Instant dropAt(Kind kind, Instant lastUsedAt, Instant lastAnswerAt, Integer keepDays, Instant nextRunAt,
                                 Config c) {
        if (kind == Kind.ASK) {
            return lastAnswerAt == null ? null : lastAnswerAt.plus(c.askIdle());
        }
        if (kind == Kind.ONE_OFF || (keepDays != null && keepDays == 0)) {
            return null;
        }
        if (keepDays != null) {
            return lastUsedAt.plus(Duration.ofDays(keepDays));
        }
        return switch (kind) {
            case CHAT -> lastUsedAt.plus(c.chatIdle());
            case NODE_CONVERSATION -> lastUsedAt.plus(c.nodeConversationIdle());
            case ROUTINE -> lastUsedAt.plus(Duration.ofDays(routineKeepDays(lastUsedAt, nextRunAt, c)));
            default -> throw new IllegalArgumentException("no idle rule for " + kind);
        };
    }

    /** Whether the session is dropped at {@code now}. */
    public static boolean dropped(Kind kind, Instant lastUsedAt, Instant lastAnswerAt, Integer keepDays, Instant nextRunAt,
                                  Instant now, Config c) {
        Instant at = dropAt(kind, lastUsedAt, lastAnswerAt, keepDays, nextRunAt, c);
        return at != null && !now.isBefore(at);
    }

    /**
     * routineKeepDays: twice the gap from the routine's last run to its next, in whole days rounded up (so a
     * session is never kept less than twice the gap), within [routineMin, routineMax] (30..90 days); routineMax when
     * the next run is not known. A daily routine 30, a fortnightly 30 (28 raised), weekly 30, every 20 days 40, monthly
     * (30 days) 60, every 45 days or more 90.
     */
    public static int routineKeepDays(Instant lastRunAt, Instant nextRunAt, Config c) {
        long min = c.routineMin().toDays();
        long max = c.routineMax().toDays();
        if (nextRunAt == null) {
            return (int) max;
        }
        Duration twice = Duration.between(lastRunAt, nextRunAt).multipliedBy(2);
        long days = twice.toDays() + (twice.minusDays(twice.toDays()).isZero() ? 0 : 1);
        return (int) Math.max(min, Math.min(max, days));
    }
}

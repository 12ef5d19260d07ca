package dev.ensemble.sessions.cleanup;

import java.time.Duration;
import java.util.Map;

/**
 * The cleanup service's settings (guide §6 "Cleaning up sessions").
 *
 * @param cleanSessions         {@code orchestration.cleanSessions}: on by default; off turns every sweep off (the
 *                              periodic ones and those an operator asks for); deletions people and nodes ask for
 *                              are not the cleanup's and go on
 * @param sweepInterval         how often each account is swept (15 minutes)
 * @param maxLookedAt           the most sessions one sweep of one account looks at (60)
 * @param maxRequests           the most deletions one sweep of one account asks for (20)
 * @param lookAgainAfterRequest a session whose deletion was just asked for is looked at again after this long
 *                              unless the retirement view says otherwise first (1 hour)
 * @param conversationTick      how often the assistant conversations due are looked at (the minute tick of guide §5
 *                              and §6: asks, drops asked again, idle chats, routines and node conversations); not
 *                              turned off by {@code cleanSessions}, which is about retired work's sessions
 */
public record CleanupConfig(boolean cleanSessions, Duration sweepInterval, int maxLookedAt, int maxRequests,
                            Duration lookAgainAfterRequest, Duration conversationTick) {
    /** The property that turns the sweeps on or off. */
    public static final String CLEAN_SESSIONS = "orchestration.cleanSessions";
    /** The property with the sweep interval (ISO-8601, e.g. PT15M). */
    public static final String SWEEP_INTERVAL = "orchestration.cleanSessions.sweepInterval";

    public CleanupConfig {
        if (sweepInterval.isNegative() || sweepInterval.isZero()) {
            throw new IllegalArgumentException("the sweep interval must be positive, not " + sweepInterval);
        }
        if (conversationTick.isNegative() || conversationTick.isZero()) {
            throw new IllegalArgumentException("the conversation tick must be positive, not " + conversationTick);
        }
        if (maxLookedAt < 1 || maxRequests < 0) {
            throw new IllegalArgumentException("a sweep looks at 1 or more sessions (not " + maxLookedAt
                    + ") and asks for 0 or more deletions (not " + maxRequests + ")");
        }
    }

    /** The guide's: on, every 15 minutes, 60 looked at, 20 asked for; conversations every minute. */
    public static CleanupConfig defaults() {
        return new CleanupConfig(true, Duration.ofMinutes(15), 60, 20, Duration.ofHours(1), Duration.ofMinutes(1));
    }

    /** These settings with the sweeps on or off. */
    public CleanupConfig withCleanSessions(boolean on) {
        return new CleanupConfig(on, sweepInterval, maxLookedAt, maxRequests, lookAgainAfterRequest, conversationTick);
    }

    /** These settings with another sweep interval. */
    public CleanupConfig withSweepInterval(Duration interval) {
        return new CleanupConfig(cleanSessions, interval, maxLookedAt, maxRequests, lookAgainAfterRequest, conversationTick);
    }

    /** These settings with another conversation tick (tests; the guide's is a minute). */
    public CleanupConfig withConversationTick(Duration tick) {
        return new CleanupConfig(cleanSessions, sweepInterval, maxLookedAt, maxRequests, lookAgainAfterRequest, tick);
    }

    /**
     * The defaults with {@value #CLEAN_SESSIONS} ({@code true}/{@code false}) and {@value #SWEEP_INTERVAL}
     * (ISO-8601) taken from {@code properties} when present.
     *
     * @throws IllegalArgumentException naming the property when a value cannot be read
     */
    public static CleanupConfig from(Map<String, String> properties) {
        CleanupConfig c = defaults();
        String on = properties.get(CLEAN_SESSIONS);
        if (on != null) {
            if (!on.equalsIgnoreCase("true") && !on.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException(CLEAN_SESSIONS + " must be true or false, not '" + on + "'");
            }
            c = c.withCleanSessions(Boolean.parseBoolean(on));
        }
        String every = properties.get(SWEEP_INTERVAL);
        if (every != null) {
            try {
                c = c.withSweepInterval(Duration.parse(every));
            } catch (java.time.format.DateTimeParseException e) {
                throw new IllegalArgumentException(SWEEP_INTERVAL + " must be an ISO-8601 duration such as PT15M, not '" + every + "'");
            }
        }
        return c;
    }
}

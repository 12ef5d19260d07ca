package dev.ensemble.sessions.projector;

import java.time.Duration;

/**
 * Paces a wall-clock publication (the session views, the rarity tables) while the projector works through a backlog:
 * a rebuild, a restart after downtime, a burst bigger than it keeps up with. Each view published then is overwritten
 * by a newer one a moment later, and publishing (encoding, the retirement rules, the view topics) is most of a run's
 * cost, so while it is behind it publishes at most once per half of its lag (the newest record's age), at least once per
 * {@link #MAX_DEFER}, instead of every tick; a session changed by several runs in that time is published once, with its
 * newest state. The latency a deferral adds is thus at most half of the latency the backlog has already caused.
 *
 * <p>Behind means all of: records were processed since the previous tick (the input is still flowing), at least
 * {@link #BUSY_RECORDS} since the last publication, and the newest of them was appended at least {@link #BEHIND}
 * before now (records carry their append time: every producer of the log leaves the timestamp to the send). As soon
 * as a tick finds no new record, or records appended within {@link #BEHIND}, the publication is due at once, so a
 * projector that has caught up publishes every tick again. Marks of what is to be published are changelogged either
 * way, so deferring loses nothing in a crash.
 */
final class CatchUp {
    /** The longest time a publication is deferred; never more than half of how far behind the projector is. */
    static final Duration MAX_DEFER = Duration.ofSeconds(30);
    /** How old (append time) the newest record processed must be for the projector to count as behind. */
    static final Duration BEHIND = Duration.ofSeconds(1);
    /** Records since the last publication below which it is never deferred. */
    static final int BUSY_RECORDS = 500;

    private long sinceTick;
    private long sincePublished;
    private long newestTimestamp = Long.MIN_VALUE;
    private long publishedAt = Long.MIN_VALUE;

    /** Notes a record processed, with its timestamp (ms since the epoch). */
    void processed(long timestamp) {
        sinceTick++;
        sincePublished++;
        if (timestamp > newestTimestamp) {
            newestTimestamp = timestamp;
        }
    }

    /**
     * Called at each tick of the publication's punctuation.
     *
     * @param now the wall-clock time (ms since the epoch)
     * @return true when the publication is due now (then the counts start again), false to defer it
     */
    boolean due(long now) {
        if (publishedAt == Long.MIN_VALUE) {
            publishedAt = now;
        }
        long lag = now - newestTimestamp;
        boolean behind = sinceTick > 0 && sincePublished >= BUSY_RECORDS && lag >= BEHIND.toMillis()
                && now - publishedAt < Math.min(MAX_DEFER.toMillis(), lag / 2);
        sinceTick = 0;
        if (behind) {
            return false;
        }
        sincePublished = 0;
        newestTimestamp = Long.MIN_VALUE;
        publishedAt = now;
        return true;
    }
}

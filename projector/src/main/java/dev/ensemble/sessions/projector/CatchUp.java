package dev.ensemble.sessions.projector;

import org.apache.kafka.streams.state.KeyValueStore;

import java.time.Duration;
import java.util.function.BiConsumer;

/**
 * Paces a wall-clock publication (the session views, the rarity tables) while the projector works through a backlog:
 * a rebuild, a restart after downtime, a burst bigger than it keeps up with. Each view published then is overwritten
 * by a newer one a moment later, and publishing (encoding, the retirement rules, the view topics) is a large part of
 * a run's cost, so while it is behind it defers the publication as long as the time since the last one is under half
 * of the newest record's age, and never longer than {@link #MAX_DEFER}, instead of publishing every tick; a session
 * changed by several runs in that time is published once, with its newest state.
 *
 * <p>Behind means all of: records were processed since the previous tick (the input is still flowing), at least
 * {@link #BUSY_RECORDS} since the last publication, and the newest of them is at least {@link #BEHIND} old by its
 * record timestamp (the producer's send time: every producer of the log leaves the timestamp to the send; the
 * records Streams itself writes there keep their input's). As soon as a tick finds no new record, or a record younger
 * than {@link #BEHIND}, the publication is due at once, so a projector that has caught up publishes every tick again.
 * Marks of what is to be published are changelogged either way, so deferring loses nothing in a crash, and a long
 * publication is spread over several ticks ({@link Projector#PUBLICATION_BUDGET}).
 */
final class CatchUp {
    /** The longest time a publication is deferred. */
    static final Duration MAX_DEFER = Duration.ofSeconds(30);
    /** How old (append time) the newest record processed must be for the projector to count as behind. */
    static final Duration BEHIND = Duration.ofSeconds(1);
    /** Records since the last publication below which it is never deferred. */
    static final int BUSY_RECORDS = 500;

    private long sinceTick;
    private boolean draining; // the last publication left marks for the next tick
    private final Duration budget;

    /** Pacing with {@link Projector#PUBLICATION_BUDGET} per tick. */
    CatchUp() {
        this(Projector.PUBLICATION_BUDGET);
    }

    /** @param budget the longest one tick of publication runs (at least one mark is published per tick) */
    CatchUp(Duration budget) {
        this.budget = budget;
    }
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
     * Called at each tick of the publication's punctuation: publishes (and unmarks) the marked keys when the
     * publication is due ({@link #due}) or a publication is still under way, at most its budget of it per tick
     * ({@link PendingMarks#drain}).
     *
     * @param now the wall-clock time (ms since the epoch)
     */
    void publish(long now, KeyValueStore<String, Long> marks, BiConsumer<String, Long> publish) {
        if (draining || due(now)) {
            draining = !PendingMarks.drain(marks, publish, budget);
        }
    }

    /**
     * Whether the publication is due at this tick.
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

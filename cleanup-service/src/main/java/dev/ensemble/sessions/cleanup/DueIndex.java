package dev.ensemble.sessions.cleanup;

import org.apache.kafka.streams.state.KeyValueStore;

import java.time.Instant;
import java.util.function.LongFunction;

/**
 * When each thing a sweep looks at is next due: its time by key ({@code schedule}: key → epoch millis) and the same
 * in due order ({@code due}: a due key that sorts by the time → what to look at), kept in step. The sessions' sweeps
 * and the conversations' tick each lay out their due keys their own way.
 */
final class DueIndex {
    private DueIndex() {
    }

    /**
     * Schedules {@code key} at {@code at} (null: not at all), replacing its earlier time.
     *
     * @param dueKeyAt its due key at a time (epoch millis)
     * @param value    what the due entry holds
     */
    static void lookAt(KeyValueStore<String, Long> schedule, KeyValueStore<String, String> due, String key, Instant at,
                       LongFunction<String> dueKeyAt, String value) {
        Long old = schedule.get(key);
        if (old != null) {
            due.delete(dueKeyAt.apply(old));
        }
        if (at == null) {
            schedule.delete(key);
        } else {
            long millis = Math.max(0, at.toEpochMilli());
            schedule.put(key, millis);
            due.put(dueKeyAt.apply(millis), value);
        }
    }
}

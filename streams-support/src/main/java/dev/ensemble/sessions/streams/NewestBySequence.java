package dev.ensemble.sessions.streams;

import org.apache.kafka.streams.state.KeyValueStore;

import java.util.function.ToLongFunction;

/**
 * How a consumer of a view topic keeps a view (DESIGN.md §8, Streams hygiene): an update is kept only when its
 * per-aggregate sequence is higher than the one held, so a late or repeated update never overwrites a newer
 * one; a tombstone deletes, and deleting an unknown key is a no-op.
 */
public final class NewestBySequence {
    private NewestBySequence() {
    }

    /**
     * Applies one update of {@code key} to {@code store}.
     *
     * @return true when the store changed by it (kept, or a tombstone), false when it was dropped as not newer
     */
    public static <V> boolean keep(KeyValueStore<String, V> store, String key, V value, ToLongFunction<V> sequence) {
        if (value == null) {
            store.delete(key);
            return true;
        }
        V held = store.get(key);
        if (held == null || sequence.applyAsLong(value) > sequence.applyAsLong(held)) {
            store.put(key, value);
            return true;
        }
        return false;
    }
}

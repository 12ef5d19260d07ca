package dev.ensemble.sessions.projector;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * A changelogged store of keys whose view is still to be published ({@link StoreNames#PENDING_VIEWS},
 * {@link StoreNames#PENDING_CORPUS}): a change marks its key in the same transaction, a punctuation publishes
 * and unmarks. So a change committed before a crash is published after it.
 */
final class PendingMarks {
    private PendingMarks() {
    }

    /** Calls {@code publish} with each marked key and its mark (oldest key order of the store), then unmarks them. */
    static void drain(KeyValueStore<String, Long> marks, BiConsumer<String, Long> publish) {
        List<String> done = new ArrayList<>();
        try (KeyValueIterator<String, Long> it = marks.all()) {
            while (it.hasNext()) {
                KeyValue<String, Long> kv = it.next();
                publish.accept(kv.key, kv.value);
                done.add(kv.key); // deleted after the scan: a store must not change under its open iterator
            }
        }
        for (String key : done) {
            marks.delete(key);
        }
    }
}

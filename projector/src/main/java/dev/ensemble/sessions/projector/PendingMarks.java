package dev.ensemble.sessions.projector;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * A changelogged store of keys whose view is still to be published ({@link StoreNames#PENDING_VIEWS},
 * {@link StoreNames#PENDING_CORPUS}, {@link StoreNames#PENDING_ASSISTANT}): a change marks its key in the same transaction, a punctuation publishes
 * and unmarks. So a change committed before a crash is published after it.
 */
final class PendingMarks {
    private PendingMarks() {
    }

    /**
     * Calls {@code publish} with each marked key and its mark (key order of the store), then unmarks them, until every
     * mark is published or {@code budget} has passed (at least one is published per call): a punctuation's output
     * is written in the task's open transaction, which must commit within the producer's transaction timeout (10 s
     * with exactly-once), so a large backlog of marks is published over several calls.
     *
     * @return true when no mark is left
     */
    static boolean drain(KeyValueStore<String, Long> marks, BiConsumer<String, Long> publish, Duration budget) {
        long until = System.nanoTime() + budget.toNanos();
        List<String> done = new ArrayList<>();
        boolean complete = true;
        try (KeyValueIterator<String, Long> it = marks.all()) {
            while (it.hasNext()) {
                if (!done.isEmpty() && System.nanoTime() - until > 0) {
                    complete = false;
                    break;
                }
                KeyValue<String, Long> kv = it.next();
                publish.accept(kv.key, kv.value);
                done.add(kv.key); // deleted after the scan: a store must not change under its open iterator
            }
        }
        for (String key : done) {
            marks.delete(key);
        }
        return complete;
    }
}

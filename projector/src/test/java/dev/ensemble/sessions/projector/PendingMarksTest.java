package dev.ensemble.sessions.projector;

import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link PendingMarks#drain} publishes and unmarks each mark once, over several calls when its budget runs out. */
class PendingMarksTest {
    /** An in-memory store (no changelog) holding marks k000, k001, … with marks 0, 1, …. */
    static KeyValueStore<String, Long> marks(int n) {
        KeyValueStore<String, Long> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("marks"),
                org.apache.kafka.common.serialization.Serdes.String(), org.apache.kafka.common.serialization.Serdes.Long())
                .withLoggingDisabled().build();
        var context = new org.apache.kafka.streams.processor.api.MockProcessorContext<String, Long>();
        store.init(context.getStateStoreContext(), store);
        for (int i = 0; i < n; i++) {
            store.put(String.format("k%03d", i), (long) i);
        }
        return store;
    }

    @Test
    void withinItsBudgetEveryMarkIsPublishedOnceAndUnmarked() {
        KeyValueStore<String, Long> store = marks(50);
        List<String> published = new ArrayList<>();
        assertThat(PendingMarks.drain(store, (k, v) -> published.add(k), Duration.ofSeconds(10))).isTrue();
        assertThat(published).hasSize(50).doesNotHaveDuplicates();
        assertThat(store.approximateNumEntries()).isZero();
    }

    @Test
    void aSpentBudgetLeavesTheRestForTheNextCallAndEachCallPublishesOne() {
        KeyValueStore<String, Long> store = marks(5);
        List<String> published = new ArrayList<>();
        int calls = 0;
        boolean complete = false;
        while (!complete) {
            complete = PendingMarks.drain(store, (k, v) -> published.add(k), Duration.ZERO);
            calls++;
            assertThat(calls).isLessThanOrEqualTo(6);
        }
        assertThat(published).containsExactly("k000", "k001", "k002", "k003", "k004");
        assertThat(calls).as("one mark per call with no budget, and a last call that finds none left").isBetween(5, 6);
        assertThat(store.approximateNumEntries()).isZero();
    }
}

package dev.ensemble.sessions.projector;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The batch rebuild's stores ({@link BatchRebuild.MapStore}) iterate in the order of a Kafka Streams store's keys (their
 * UTF-8 bytes), also for keys with characters from U+D800 up, where {@link String#compareTo} orders differently; and a
 * store iterated in a way its declaration ({@link Projector#STORES}) does not allow says so instead of answering in
 * another order.
 */
class BatchRebuildStoreTest {
    private static final Comparator<String> BYTES = Comparator.comparing(s -> Bytes.wrap(s.getBytes(StandardCharsets.UTF_8)));

    @Property(tries = 300)
    void rangesStoresIterateInTheOrderOfTheirKeysBytes(@ForAll long seed) {
        java.util.Random rnd = new java.util.Random(seed);
        int[][] blocks = {{'a', 'c'}, {0xD7F0, 0xD7FF}, {0xE000, 0xFFFF}, {0x10000, 0x10FFFF}};
        BatchRebuild.MapStore<String> store = new BatchRebuild.MapStore<>("corpus-docs", Projector.Iteration.RANGES);
        Set<String> keys = new TreeSet<>(BYTES);
        store.put("other/x", "");
        for (int i = rnd.nextInt(30); i > 0; i--) {
            StringBuilder k = new StringBuilder("t/");
            for (int j = rnd.nextInt(5); j >= 0; j--) {
                int[] b = blocks[rnd.nextInt(blocks.length)];
                k.appendCodePoint(b[0] + rnd.nextInt(b[1] - b[0] + 1));
            }
            store.put(k.toString(), "");
            keys.add(k.toString());
        }
        List<String> scanned = new ArrayList<>();
        try (KeyValueIterator<String, String> it = store.prefixScan("t/", new StringSerializer())) {
            it.forEachRemaining(kv -> scanned.add(kv.key));
        }
        assertThat(scanned).containsExactlyElementsOf(keys);
    }

    /**
     * Puts, deletes and scans interleaved, as the corpus documents see them (the sorted keys are brought up to date only
     * at a scan, or made again when more keys changed than the store holds): every scan answers what a sorted map
     * holding the same entries answers.
     */
    @Property(tries = 300)
    void scansBetweenChangesAnswerAsASortedMap(@ForAll long seed) {
        java.util.Random rnd = new java.util.Random(seed);
        BatchRebuild.MapStore<Integer> store = new BatchRebuild.MapStore<>("corpus-docs", Projector.Iteration.RANGES);
        java.util.TreeMap<String, Integer> expected = new java.util.TreeMap<>(BYTES);
        String[] prefixes = {"a/", "b/", "a/x/", "\uE000/", "\uD83D\uDE00/"};
        for (int step = rnd.nextInt(400); step > 0; step--) {
            String key = prefixes[rnd.nextInt(prefixes.length)] + rnd.nextInt(rnd.nextBoolean() ? 8 : 2000);
            int op = rnd.nextInt(10);
            if (op < 5) {
                store.put(key, step);
                expected.put(key, step);
            } else if (op < 7) {
                assertThat(store.delete(key)).isEqualTo(expected.remove(key));
            } else if (op < 9) {
                String p = prefixes[rnd.nextInt(prefixes.length)];
                List<KeyValue<String, Integer>> scanned = new ArrayList<>();
                try (KeyValueIterator<String, Integer> it = store.prefixScan(p, new StringSerializer())) {
                    it.forEachRemaining(scanned::add);
                }
                List<KeyValue<String, Integer>> want = new ArrayList<>();
                expected.tailMap(p, true).entrySet().stream().takeWhile(e -> e.getKey().startsWith(p))
                        .forEach(e -> want.add(KeyValue.pair(e.getKey(), e.getValue())));
                assertThat(scanned).containsExactlyElementsOf(want);
            } else {
                List<String> all = new ArrayList<>();
                try (KeyValueIterator<String, Integer> it = store.reverseRange("a/", "b/")) {
                    it.forEachRemaining(kv -> all.add(kv.key));
                }
                assertThat(all).containsExactlyElementsOf(expected.subMap("a/", true, "b/", true).descendingKeySet());
            }
        }
        assertThat(store.approximateNumEntries()).isEqualTo(expected.size());
    }

    @Test
    void aSurrogatePairSortsAfterThePrivateUseAreaAsInUtf8() {
        BatchRebuild.MapStore<String> store = new BatchRebuild.MapStore<>("computer-sessions", Projector.Iteration.RANGES);
        store.put("a/pc\n\uE000", "");
        store.put("a/pc\nplain", "");
        store.put("a/pc\n\uD83D\uDE00", ""); // U+1F600: F0 9F 98 80, after EE 80 80
        assertThat("\uD83D\uDE00".compareTo("\uE000")).as("String order differs").isNegative();
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, String> it = store.prefixScan("a/pc\n", new StringSerializer())) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        assertThat(keys).containsExactly("a/pc\nplain", "a/pc\n\uE000", "a/pc\n\uD83D\uDE00");
    }

    @Test
    void wholeStoresAreSortedWhenIteratedAndMayChangeUnderAnOpenIterator() {
        BatchRebuild.MapStore<Long> marks = new BatchRebuild.MapStore<>("pending-views", Projector.Iteration.WHOLE);
        for (String k : List.of("b/2", "a/1", "c/3", "a/0")) marks.put(k, 1L);
        List<String> seen = new ArrayList<>();
        try (KeyValueIterator<String, Long> it = marks.all()) {
            while (it.hasNext()) {
                KeyValue<String, Long> kv = it.next();
                seen.add(kv.key);
                marks.delete(kv.key);
            }
        }
        assertThat(seen).containsExactly("a/0", "a/1", "b/2", "c/3");
        assertThat(marks.approximateNumEntries()).isZero();
        assertThatThrownBy(() -> marks.range("a", "b")).isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("pending-views");
    }

    @Test
    void aStoreDeclaredNeverIteratedRefusesToBe() {
        BatchRebuild.MapStore<String> store = new BatchRebuild.MapStore<>("run-index", Projector.Iteration.NONE);
        store.put("a/r1", "x");
        assertThat(store.get("a/r1")).isEqualTo("x");
        store.put("a/r1", null);
        assertThat(store.get("a/r1")).isNull();
        assertThatThrownBy(store::all).isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("run-index");
    }
}

package dev.ensemble.sessions.streams;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.TreeMap;

/**
 * A key-value store that keeps its values as live objects between two commits and writes each changed key to the
 * store beneath it (RocksDB or in memory, with its changelog) once, when the task commits: a write-back object
 * cache in front of a logged store. Kafka Streams' own record cache holds serialised bytes, so every {@code get}
 * decodes and every {@code put} encodes the whole value; for a view that changes on every event (a session's fill
 * on each engine event) that encoding was most of the projector's cost. Here a key changed by a thousand events
 * between two commits is encoded once.
 *
 * <p>Semantics: exactly those of the store beneath it at every commit. Kafka Streams calls
 * {@link #flushCache()} before it flushes the producer and commits the transaction (the same hook its own record
 * cache uses), so every change of the transaction reaches the changelog inside it; a task closed dirty (an aborted
 * transaction) drops the objects and is restored from the changelog. Keys are Strings; iteration
 * ({@link #all()}, {@link #range}, {@link #prefixScan}) merges the objects over the store beneath, in key order.
 *
 * <p><b>Values are shared, not copied</b>: {@link #get} returns the object held, so a caller that changes it must
 * {@link #put} it again (as every processor of this project does), or the change is not written. A deletion is
 * written through at once (its tombstone), unless the key never reached the store beneath.
 *
 * <p>At most {@code maxEntries} keys are held (least recently used ones leave first, written if changed).
 * Interactive queries ({@link #query}) see the store beneath, i.e. the state as of the last commit.
 *
 * @param <V> the value type, written with the value serde of the store beneath
 */
public final class WriteBackStore<V> implements KeyValueStore<String, V>, CachedStateStore<String, V> {
    private static final byte UNKNOWN = 0;
    private static final byte ABSENT = 1;
    private static final byte PRESENT = 2;

    private static final class Entry<V> {
        final String key;
        V value;          // null: the key has no value
        boolean dirty;    // changed since it was last written beneath (then it is in the dirty list)
        byte beneath;     // whether the store beneath holds the key: UNKNOWN, ABSENT, PRESENT

        Entry(String key, V value, byte beneath) {
            this.key = key;
            this.value = value;
            this.beneath = beneath;
        }
    }

    private final KeyValueStore<String, V> inner;
    private final int maxEntries;
    private final LinkedHashMap<String, Entry<V>> held = new LinkedHashMap<>(1024, 0.75f, true);
    /** The entries changed since the last commit, in the order they were first changed (some may be clean again). */
    private final java.util.ArrayList<Entry<V>> dirty = new java.util.ArrayList<>();
    private StateStoreContext context;
    /** With {@link #VERIFY_PROPERTY} set: encodes values to catch one changed without a put (null: off). */
    private final org.apache.kafka.common.serialization.Serializer<V> verifier;
    /** Verifying: the encoding of each clean held value as it was read or written. */
    private final Map<String, byte[]> lastBytes = new java.util.HashMap<>();
    /** Verifying: the entries handed out by {@link #get} since the last commit. */
    private final java.util.ArrayList<Entry<V>> handedOut = new java.util.ArrayList<>();

    /**
     * The system property that makes every write-back store check, at each commit, that no value handed out since
     * the last commit was changed without being put again (it encodes them, so it is for tests: the projector's
     * test suites run with it).
     */
    public static final String VERIFY_PROPERTY = "ensemble.writeback.verify";

    /**
     * @param inner      the store beneath (logged, uncached), not yet initialised
     * @param maxEntries how many keys are held as objects at most (≥ 1)
     */
    public WriteBackStore(KeyValueStore<String, V> inner, int maxEntries) {
        this(inner, maxEntries, null);
    }

    /**
     * @param verifier when not null, the encoder of values used to check at each commit that no value handed out by
     *                 {@link #get} was changed without a {@link #put} ({@link IllegalStateException} naming the key)
     */
    public WriteBackStore(KeyValueStore<String, V> inner, int maxEntries, org.apache.kafka.common.serialization.Serializer<V> verifier) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1, got " + maxEntries);
        }
        this.inner = inner;
        this.maxEntries = maxEntries;
        this.verifier = verifier;
    }

    /**
     * A builder of the store for {@code Topology.addStateStore}: a write-back store over {@code supplier}'s store,
     * logged to its changelog (named after the store), with no Kafka Streams record cache between.
     *
     * @param supplier   RocksDB ({@code Stores.persistentKeyValueStore}) or in memory
     * @param valueSerde how values are written beneath and to the changelog
     * @param maxEntries how many keys each task's store holds as objects
     */
    public static <V> StoreBuilder<KeyValueStore<String, V>> builder(KeyValueBytesStoreSupplier supplier, Serde<V> valueSerde,
                                                                    int maxEntries) {
        StoreBuilder<KeyValueStore<String, V>> beneath = Stores.keyValueStoreBuilder(supplier, Serdes.String(), valueSerde)
                .withCachingDisabled().withLoggingEnabled(Map.of());
        return new Builder<>(beneath, maxEntries, Boolean.getBoolean(VERIFY_PROPERTY) ? valueSerde.serializer() : null);
    }

    private static final class Builder<V> implements StoreBuilder<KeyValueStore<String, V>> {
        private final StoreBuilder<KeyValueStore<String, V>> beneath;
        private final int maxEntries;
        private final org.apache.kafka.common.serialization.Serializer<V> verifier;

        Builder(StoreBuilder<KeyValueStore<String, V>> beneath, int maxEntries, org.apache.kafka.common.serialization.Serializer<V> verifier) {
            this.beneath = beneath;
            this.maxEntries = maxEntries;
            this.verifier = verifier;
        }

        @Override
        public StoreBuilder<KeyValueStore<String, V>> withCachingEnabled() {
            throw new UnsupportedOperationException("a write-back store is its own cache");
        }

        @Override
        public StoreBuilder<KeyValueStore<String, V>> withCachingDisabled() {
            return this;
        }

        @Override
        public StoreBuilder<KeyValueStore<String, V>> withLoggingEnabled(Map<String, String> config) {
            beneath.withLoggingEnabled(config);
            return this;
        }

        @Override
        public StoreBuilder<KeyValueStore<String, V>> withLoggingDisabled() {
            beneath.withLoggingDisabled();
            return this;
        }

        @Override
        public KeyValueStore<String, V> build() {
            return new WriteBackStore<>(beneath.build(), maxEntries, verifier);
        }

        @Override
        public Map<String, String> logConfig() {
            return beneath.logConfig();
        }

        @Override
        public boolean loggingEnabled() {
            return beneath.loggingEnabled();
        }

        @Override
        public String name() {
            return beneath.name();
        }
    }

    // ---- reads and writes ------------------------------------------------------------------------------

    @Override
    public V get(String key) {
        Entry<V> e = held.get(key);
        if (e == null) {
            V v = inner.get(key);
            e = new Entry<>(key, v, v == null ? ABSENT : PRESENT);
            held.put(key, e);
            remember(key, v);
            evictIfFull();
        }
        if (verifier != null && e.value != null) {
            handedOut.add(e);
        }
        return e.value;
    }

    @Override
    public void put(String key, V value) {
        if (value == null) {
            delete(key);
            return;
        }
        Entry<V> e = held.get(key);
        if (e == null) {
            e = new Entry<>(key, value, UNKNOWN);
            held.put(key, e);
            markDirty(e);
            evictIfFull();
        } else {
            e.value = value;
            markDirty(e);
        }
    }

    @Override
    public V putIfAbsent(String key, V value) {
        V old = get(key);
        if (old == null) {
            put(key, value);
        }
        return old;
    }

    @Override
    public void putAll(List<KeyValue<String, V>> entries) {
        for (KeyValue<String, V> kv : entries) {
            put(kv.key, kv.value);
        }
    }

    @Override
    public V delete(String key) {
        V old = get(key);
        Entry<V> e = held.get(key);
        if (e.beneath == UNKNOWN) {
            e.beneath = inner.get(key) == null ? ABSENT : PRESENT;
        }
        if (e.beneath == PRESENT) {
            ensureRecordContext();
            inner.delete(key); // its tombstone, in the changelog too
        }
        forget(key);
        e.value = null;
        e.dirty = false;
        e.beneath = ABSENT;
        return old;
    }

    private void markDirty(Entry<V> e) {
        if (!e.dirty) {
            e.dirty = true;
            dirty.add(e);
        }
    }

    private void evictIfFull() {
        if (held.size() <= maxEntries) {
            return;
        }
        Iterator<Map.Entry<String, Entry<V>>> it = held.entrySet().iterator();
        while (held.size() > maxEntries && it.hasNext()) {
            Map.Entry<String, Entry<V>> eldest = it.next();
            Entry<V> e = eldest.getValue();
            it.remove(); // first: a value that cannot be written must not stay the eldest and fail every later eviction
            if (e.dirty) {
                e.dirty = false; // its place in the dirty list is skipped at the commit
                e.beneath = PRESENT;
                V value = e.value;
                e.value = null;  // the dirty list keeps the entry until the commit, not its value
                ensureRecordContext();
                inner.put(e.key, value);
            }
            forget(e.key);
        }
    }

    // ---- commits ---------------------------------------------------------------------------------------

    /** Writes every changed key beneath (and so to the changelog). Called by Kafka Streams before each commit. */
    @Override
    public void flushCache() {
        verifyHandedOut();
        if (dirty.isEmpty()) {
            return;
        }
        ensureRecordContext();
        for (Entry<V> e : dirty) {
            if (e.dirty) {
                inner.put(e.key, e.value);
                e.dirty = false;
                e.beneath = PRESENT;
                remember(e.key, e.value);
            }
        }
        dirty.clear();
    }

    private void remember(String key, V value) {
        if (verifier != null) {
            if (value == null) {
                lastBytes.remove(key);
            } else {
                lastBytes.put(key, verifier.serialize(name(), value).clone()); // a copy: a byte[] value is its own encoding
            }
        }
    }

    private void forget(String key) {
        if (verifier != null) {
            lastBytes.remove(key);
        }
    }

    /** Verifying: every clean value handed out since the last commit still encodes as it was read or last written. */
    private void verifyHandedOut() {
        if (verifier == null) {
            return;
        }
        try {
            for (Entry<V> e : handedOut) {
                byte[] was = e.dirty || e.value == null ? null : lastBytes.get(e.key);
                if (was != null && held.containsKey(e.key) && !java.util.Arrays.equals(was, verifier.serialize(name(), e.value))) {
                    throw new IllegalStateException("store " + name() + ": the value of key '" + e.key
                            + "' was changed without a put (a write-back store writes only what is put)");
                }
            }
        } finally {
            handedOut.clear();
        }
    }

    /**
     * The changelog write beneath takes its timestamp from the current record context; a commit that comes before
     * any record was processed (after a restore, say) has none.
     */
    private void ensureRecordContext() {
        if (context instanceof InternalProcessorContext<?, ?> ipc && ipc.recordContext() == null) {
            ipc.setRecordContext(new ProcessorRecordContext(ipc.currentSystemTimeMs(), -1, -1, null, new RecordHeaders()));
        }
    }

    /** Drops every object held, changed or not (the store beneath is about to be restored or closed). */
    @Override
    public void clearCache() {
        held.clear();
        dirty.clear();
        lastBytes.clear();
        handedOut.clear();
    }

    @Override
    public boolean setFlushListener(CacheFlushListener<String, V> listener, boolean sendOldValues) {
        return false;
    }

    @Override
    public void flush() {
        flushCache();
        inner.flush();
    }

    @Override
    public void commit(Map<TopicPartition, Long> changelogOffsets) {
        flushCache();
        inner.commit(changelogOffsets);
    }

    // ---- iteration -------------------------------------------------------------------------------------

    @Override
    public KeyValueIterator<String, V> range(String from, String to) {
        return merged(inner.range(from, to), between(from, to), false);
    }

    @Override
    public KeyValueIterator<String, V> reverseRange(String from, String to) {
        return merged(inner.range(from, to), between(from, to), true);
    }

    /** Keys from {@code from} to {@code to}, both included; null is unbounded (as {@link KeyValueStore#range}). */
    private static java.util.function.Predicate<String> between(String from, String to) {
        return k -> (from == null || dev.ensemble.sessions.schema.Keys.UTF8_ORDER.compare(k, from) >= 0)
                && (to == null || dev.ensemble.sessions.schema.Keys.UTF8_ORDER.compare(k, to) <= 0);
    }

    @Override
    public KeyValueIterator<String, V> all() {
        return merged(inner.all(), k -> true, false);
    }

    @Override
    public KeyValueIterator<String, V> reverseAll() {
        return merged(inner.all(), k -> true, true);
    }

    @Override
    public <PS extends org.apache.kafka.common.serialization.Serializer<P>, P> KeyValueIterator<String, V> prefixScan(P prefix, PS serializer) {
        if (!(prefix instanceof String p)) {
            throw new IllegalArgumentException("a write-back store's keys are Strings; prefix " + prefix + " is not");
        }
        return merged(inner.prefixScan(prefix, serializer), k -> k.startsWith(p), false);
    }

    /**
     * The keys beneath, overlaid with the values changed since the last commit, in the order of the keys' UTF-8
     * bytes as beneath ({@link dev.ensemble.sessions.schema.Keys#UTF8_ORDER}; deletions are written through at once,
     * and every other key held equals its value beneath).
     */
    private KeyValueIterator<String, V> merged(KeyValueIterator<String, V> beneath, java.util.function.Predicate<String> inRange,
                                               boolean reverse) {
        TreeMap<String, V> view = new TreeMap<>(dev.ensemble.sessions.schema.Keys.UTF8_ORDER);
        try (beneath) {
            while (beneath.hasNext()) {
                KeyValue<String, V> kv = beneath.next();
                view.put(kv.key, kv.value);
            }
        }
        for (Entry<V> e : dirty) {
            if (e.dirty && inRange.test(e.key)) {
                view.put(e.key, e.value);
            }
        }
        NavigableMap<String, V> ordered = reverse ? view.descendingMap() : view;
        Iterator<Map.Entry<String, V>> it = ordered.entrySet().iterator();
        return new KeyValueIterator<>() {
            private Map.Entry<String, V> next = it.hasNext() ? it.next() : null;

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public KeyValue<String, V> next() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                KeyValue<String, V> kv = KeyValue.pair(next.getKey(), next.getValue());
                next = it.hasNext() ? it.next() : null;
                return kv;
            }

            @Override
            public String peekNextKey() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                return next.getKey();
            }

            @Override
            public void close() {
                // a snapshot: nothing to release
            }
        };
    }

    @Override
    public long approximateNumEntries() {
        long added = dirty.stream().filter(e -> e.dirty && e.beneath != PRESENT).count();
        return inner.approximateNumEntries() + added;
    }

    // ---- life cycle ------------------------------------------------------------------------------------

    @Override
    public void init(StateStoreContext context, StateStore root) {
        clearCache();
        this.context = context;
        inner.init(context, root);
    }

    @Override
    public void close() {
        clearCache();
        inner.close();
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public boolean persistent() {
        return inner.persistent();
    }

    @Override
    public boolean isOpen() {
        return inner.isOpen();
    }

    @Override
    public boolean managesOffsets() {
        return inner.managesOffsets();
    }

    @Override
    public Long committedOffset(TopicPartition partition) {
        return inner.committedOffset(partition);
    }

    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
        return inner.query(query, positionBound, config);
    }

    @Override
    public org.apache.kafka.streams.query.Position getPosition() {
        return inner.getPosition();
    }
}

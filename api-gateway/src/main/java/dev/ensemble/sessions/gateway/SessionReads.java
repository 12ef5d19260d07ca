package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.streams.StreamsDefaults;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The gateway's read side: a Kafka Streams application that materializes the session view topic into a
 * local store ({@value #STORE}, key {@code <account>/<sessionId>}), keeping for each key only an update
 * whose {@code sequence} is higher than the one held. Reads go through {@link #ownerOf} (which instance
 * holds an account) so a cluster of gateways can route each read to the instance that owns the key.
 */
public final class SessionReads implements AutoCloseable {
    /** The Streams application id of the gateway's read side. */
    public static final String APPLICATION_ID = "ensemble-gateway";
    /** The local store of session views. */
    public static final String STORE = "gateway-sessions";

    private final KafkaStreams streams;

    /**
     * @param bootstrapServers  the cluster
     * @param stateDir          where the store lives
     * @param replicationFactor of its changelog
     * @param advertised        {@code host:port} other gateway instances reach this one at (application.server)
     */
    public SessionReads(String bootstrapServers, Path stateDir, int replicationFactor, String advertised) {
        Map<String, Object> overrides = new HashMap<>();
        overrides.put(StreamsConfig.APPLICATION_SERVER_CONFIG, advertised);
        overrides.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        this.streams = new KafkaStreams(buildTopology(), StreamsDefaults.properties(APPLICATION_ID, bootstrapServers,
                stateDir, replicationFactor, overrides));
    }

    /** Source {@code sessions.view.sessions} → processor keeping the newest sequence per key → store. */
    public static Topology buildTopology() {
        Topology t = new Topology();
        t.addSource("views-source", Topics.SESSIONS_VIEW.keySerde().deserializer(),
                Topics.SESSIONS_VIEW.valueSerde().deserializer(), Topics.SESSIONS_VIEW.name());
        t.addProcessor("newest-view", NewestView::new, "views-source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STORE), Serdes.String(),
                AvroSerde.of(SessionView.class)), "newest-view");
        return t;
    }

    /** Keeps an update only when its sequence is higher than the stored one; a tombstone deletes (a no-op when unknown). */
    static final class NewestView implements Processor<String, SessionView, Void, Void> {
        private KeyValueStore<String, SessionView> store;

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            store = context.getStateStore(STORE);
        }

        @Override
        public void process(Record<String, SessionView> r) {
            if (r.value() == null) {
                store.delete(r.key());
                return;
            }
            SessionView held = store.get(r.key());
            if (held == null || r.value().getSequence() > held.getSequence()) {
                store.put(r.key(), r.value());
            }
        }
    }

    public void start() {
        streams.start();
    }

    /** Waits until the store is queryable. */
    public void awaitRunning(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (streams.state() != KafkaStreams.State.RUNNING) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("the gateway's read side did not start within " + timeout + " (state " + streams.state() + ")");
            }
            Thread.sleep(50);
        }
    }

    /**
     * The instance that holds an account's sessions: empty when it is this one (or when ownership is not
     * known yet), else its {@code host:port}.
     */
    public Optional<String> ownerOf(String account, String self) {
        org.apache.kafka.streams.processor.StreamPartitioner<String, Object> byAccount =
                (topic, key, value, n) -> Optional.of(Set.of(Keys.accountPartition(key, n)));
        KeyQueryMetadata m = streams.queryMetadataForKey(STORE, Keys.prefix(account), byAccount);
        if (m == null || m == KeyQueryMetadata.NOT_AVAILABLE) {
            return Optional.empty();
        }
        String owner = m.activeHost().host() + ":" + m.activeHost().port();
        return owner.equals(self) ? Optional.empty() : Optional.of(owner);
    }

    /** One session of the account, or null. */
    public SessionView get(String account, String sessionId) {
        return store().get(Keys.of(account, sessionId));
    }

    /** Every session of the account, in key order. */
    public List<SessionView> all(String account) {
        List<SessionView> out = new ArrayList<>();
        try (KeyValueIterator<String, SessionView> it = store().prefixScan(Keys.prefix(account), new StringSerializer())) {
            it.forEachRemaining(kv -> out.add(kv.value));
        }
        return out;
    }

    private ReadOnlyKeyValueStore<String, SessionView> store() {
        try {
            return streams.store(StoreQueryParameters.fromNameAndType(STORE, QueryableStoreTypes.keyValueStore()));
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException e) {
            throw new ApiError(503, "starting", "the session views are being loaded (" + streams.state()
                    + "); try again in a few seconds");
        }
    }

    /** The Streams instance (state, metrics). */
    public KafkaStreams streams() {
        return streams;
    }

    @Override
    public void close() {
        StreamsDefaults.close(streams, Duration.ofSeconds(30));
    }
}

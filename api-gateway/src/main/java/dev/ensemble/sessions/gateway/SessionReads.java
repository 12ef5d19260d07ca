package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.NewestBySequence;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.RetirementView;
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
 * local store ({@value #STORE}, key {@code <account>/<sessionId>}), and likewise the retirement view and the
 * deletion audit ({@value #RETIREMENT_STORE}, {@value #AUDIT_STORE}), keeping for each key only an update
 * whose {@code sequence} is higher than the one held. Reads go through {@link #ownerOf} (which instance
 * holds an account) so a cluster of gateways can route each read to the instance that owns the key.
 */
public final class SessionReads implements AutoCloseable {
    /** The Streams application id of the gateway's read side. */
    public static final String APPLICATION_ID = "ensemble-gateway";
    /** The local store of session views. */
    public static final String STORE = "gateway-sessions";
    /** The local store of retirement views (key {@code <account>/<sessionId>}). */
    public static final String RETIREMENT_STORE = "gateway-retirement";
    /** The local store of the deletion audit (key {@code <account>/<requestId>}). */
    public static final String AUDIT_STORE = "gateway-deletion-audit";

    private final KafkaStreams streams;

    /**
     * @param bootstrapServers  the cluster
     * @param stateDir          where the store lives
     * @param replicationFactor of its changelog
     * @param advertised        {@code host:port} other gateway instances reach this one at (application.server)
     */
    public SessionReads(String bootstrapServers, Path stateDir, int replicationFactor, String advertised) {
        this(APPLICATION_ID, bootstrapServers, Map.of(), stateDir, replicationFactor, advertised);
    }

    /** @param clientProperties the cluster's client properties (security settings), given to its Streams application */
    public SessionReads(String bootstrapServers, Map<String, ?> clientProperties, Path stateDir, int replicationFactor, String advertised) {
        this(APPLICATION_ID, bootstrapServers, clientProperties, stateDir, replicationFactor, advertised);
    }

    /** A read side with its own Streams application id (a second one beside the gateways of {@value #APPLICATION_ID}). */
    SessionReads(String applicationId, String bootstrapServers, Map<String, ?> clientProperties, Path stateDir, int replicationFactor,
                 String advertised) {
        Map<String, Object> overrides = new HashMap<>(clientProperties);
        overrides.put(StreamsConfig.APPLICATION_SERVER_CONFIG, advertised);
        overrides.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        this.streams = new KafkaStreams(buildTopology(), StreamsDefaults.properties(applicationId, bootstrapServers,
                stateDir, replicationFactor, overrides));
    }

    /**
     * Sources {@code sessions.view.sessions}, {@code sessions.view.retirement} and
     * {@code sessions.view.deletion-audit} → one processor keeping the newest sequence per key → three stores.
     * One processor for the three keeps them in one sub-topology, so the instance that holds an account's
     * sessions also holds its retirement and its audit (the topics are partitioned alike).
     */
    public static Topology buildTopology() {
        Topology t = new Topology();
        t.addSource("views-source", Topics.SESSIONS_VIEW.keySerde().deserializer(),
                Topics.SESSIONS_VIEW.valueSerde().deserializer(), Topics.SESSIONS_VIEW.name());
        t.addSource("retirement-source", Topics.RETIREMENT_VIEW.keySerde().deserializer(),
                Topics.RETIREMENT_VIEW.valueSerde().deserializer(), Topics.RETIREMENT_VIEW.name());
        t.addSource("audit-source", Topics.DELETION_AUDIT.keySerde().deserializer(),
                Topics.DELETION_AUDIT.valueSerde().deserializer(), Topics.DELETION_AUDIT.name());
        t.addProcessor("newest-view", NewestView::new, "views-source", "retirement-source", "audit-source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STORE), Serdes.String(),
                AvroSerde.of(SessionView.class)), "newest-view");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(RETIREMENT_STORE), Serdes.String(),
                AvroSerde.of(RetirementView.class)), "newest-view");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(AUDIT_STORE), Serdes.String(),
                AvroSerde.of(DeletionAudit.class)), "newest-view");
        return t;
    }

    /** Keeps an update only when its sequence is higher than the stored one; a tombstone deletes (a no-op when unknown). */
    static final class NewestView implements Processor<String, Object, Void, Void> {
        private ProcessorContext<Void, Void> context;
        private KeyValueStore<String, SessionView> sessions;
        private KeyValueStore<String, RetirementView> retirement;
        private KeyValueStore<String, DeletionAudit> audits;

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            this.context = context;
            sessions = context.getStateStore(STORE);
            retirement = context.getStateStore(RETIREMENT_STORE);
            audits = context.getStateStore(AUDIT_STORE);
        }

        @Override
        public void process(Record<String, Object> r) {
            String topic = context.recordMetadata().map(m -> m.topic()).orElse(Topics.SESSIONS_VIEW.name());
            if (topic.equals(Topics.RETIREMENT_VIEW.name())) {
                NewestBySequence.keep(retirement, r.key(), (RetirementView) r.value(), RetirementView::getSequence);
            } else if (topic.equals(Topics.DELETION_AUDIT.name())) {
                NewestBySequence.keep(audits, r.key(), (DeletionAudit) r.value(), DeletionAudit::getSequence);
            } else {
                NewestBySequence.keep(sessions, r.key(), (SessionView) r.value(), SessionView::getSequence);
            }
        }

    }

    public void start() {
        StreamsDefaults.start(streams, "gateway read side");
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

    /** True while the stores can be read: the read side is running (not starting, rebalancing, stopping or failed). */
    public boolean ready() {
        return streams.state() == KafkaStreams.State.RUNNING;
    }

    /**
     * The instance that holds an account's sessions: empty when it is this one (or when ownership is not
     * known yet, e.g. while starting: the local read then answers 503), else its {@code host:port}.
     */
    public Optional<String> ownerOf(String account, String self) {
        org.apache.kafka.streams.processor.StreamPartitioner<String, Object> byAccount =
                (topic, key, value, n) -> Optional.of(Set.of(Keys.accountPartition(key, n)));
        KeyQueryMetadata m;
        try {
            m = streams.queryMetadataForKey(STORE, Keys.prefix(account), byAccount);
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException | IllegalStateException e) {
            return Optional.empty(); // not started or not running: the local read answers 503
        }
        if (m == null || m == KeyQueryMetadata.NOT_AVAILABLE) {
            return Optional.empty();
        }
        String owner = m.activeHost().host() + ":" + m.activeHost().port();
        return owner.equals(self) ? Optional.empty() : Optional.of(owner);
    }

    // Every read below goes through read(): a store is looked up and read in one step, and a store that cannot be read
    // (the read side not started, its stream thread STARTING or restoring after a start or a rebalance, stopping, failed)
    // is a 503 with Retry-After, whether Streams refuses the lookup or, as it does while a thread starts, the read itself.

    /** One session of the account, or null. */
    public SessionView get(String account, String sessionId) {
        return read(STORE, "session views", s -> this.<SessionView>typed(s).get(Keys.of(account, sessionId)));
    }

    /** Every session of the account, in key order. */
    public List<SessionView> all(String account) {
        return read(STORE, "session views", s -> scan(this.<SessionView>typed(s), account));
    }

    /** The retirement view of one session of the account, or null. */
    public RetirementView retirement(String account, String sessionId) {
        return read(RETIREMENT_STORE, "retirement views", s -> this.<RetirementView>typed(s).get(Keys.of(account, sessionId)));
    }

    /** One deletion request's audit record, or null. */
    public DeletionAudit audit(String account, String requestId) {
        return read(AUDIT_STORE, "deletion audit records", s -> this.<DeletionAudit>typed(s).get(Keys.of(account, requestId)));
    }

    /** Every deletion request's audit record of the account, in key order. */
    public List<DeletionAudit> audits(String account) {
        return read(AUDIT_STORE, "deletion audit records", s -> scan(this.<DeletionAudit>typed(s), account));
    }

    private static <V> List<V> scan(ReadOnlyKeyValueStore<String, V> store, String account) {
        List<V> out = new ArrayList<>();
        try (KeyValueIterator<String, V> it = store.prefixScan(Keys.prefix(account), new StringSerializer())) {
            it.forEachRemaining(kv -> out.add(kv.value));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private <V> ReadOnlyKeyValueStore<String, V> typed(ReadOnlyKeyValueStore<String, ?> store) {
        return (ReadOnlyKeyValueStore<String, V>) store;
    }

    /**
     * Looks up the store {@code name} and applies {@code read} to it. A 503 {@link ApiError} when it cannot be read:
     * {@code starting} (with Retry-After) while the read side starts or rebalances, {@code unavailable} once it is
     * stopping or has failed.
     */
    private <R> R read(String name, String what, java.util.function.Function<ReadOnlyKeyValueStore<String, ?>, R> read) {
        ReadOnlyKeyValueStore<String, ?> store;
        try {
            store = streams.store(StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.<String, Object>keyValueStore()));
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException | IllegalStateException e) {
            throw notReadable(what);
        }
        try {
            return read.apply(store);
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException e) {
            throw notReadable(what);
        }
    }

    private ApiError notReadable(String what) {
        KafkaStreams.State state = streams.state();
        if (state == KafkaStreams.State.CREATED || state == KafkaStreams.State.REBALANCING || state == KafkaStreams.State.RUNNING) {
            return ApiError.starting("the " + what + " are being loaded (" + state + "); try again in a few seconds");
        }
        return new ApiError(503, "unavailable", "the " + what + " cannot be read: the gateway's read side is " + state
                + " (see the gateway's log)");
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

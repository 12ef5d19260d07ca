package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.NewestBySequence;
import dev.ensemble.sessions.streams.ViewCatchUp;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.views.ConversationView;
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
 * local store ({@value #STORE}, key {@code <account>/<sessionId>}), and likewise the retirement view, the
 * deletion audit and the assistant conversations ({@value #RETIREMENT_STORE}, {@value #AUDIT_STORE},
 * {@value #ASSISTANT_STORE}), keeping for each key only an update
 * whose {@code sequence} is higher than the one held. Reads go through {@link #ownerOf} (which instance
 * holds an account) so a cluster of gateways can route each read to the instance that owns the key. The same processor
 * keeps each partition's session index ({@link SessionIndex}: the list ordered by last activity, and the search), which
 * its task fills from the store when it starts running and removes when it leaves; {@link #sessions} answers from it.
 *
 * <p>Generations (blue/green rebuild, {@link Generations}): it reads the view topics of the serving projector
 * generation, as application {@link Generation#applicationId} of its application id. When another generation starts
 * serving, it starts a second Streams application on that generation's topics beside the first, keeps answering from the
 * first until the second has read its topics to their ends, then answers from the second, closes the first and removes
 * its local state. No read fails in between. Each application has its own session indexes, so the list and the search
 * switch with the views.
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
    /** The local store of assistant conversation views (key {@code <account>/<conversationKey>}, guide §5). */
    public static final String ASSISTANT_STORE = "gateway-assistant";

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SessionReads.class);
    /** The longest a new generation's views may take to load before the switch is given up (the old one keeps serving). */
    static final Duration SWITCH_TIMEOUT = Duration.ofMinutes(30);
    /** How long the old generation's application stays open after the switch, for reads under way on it. */
    static final Duration CLOSE_GRACE = Duration.ofSeconds(5);

    private final String applicationId;
    private final String bootstrapServers;
    private final Map<String, Object> overrides;
    /** The connection and security settings among {@link #overrides}, for its plain clients (generations, catch-up). */
    private final Map<String, Object> connection;
    private final Path stateDir;
    private final int replicationFactor;
    private volatile KafkaStreams streams;
    /** The session indexes of {@link #streams}' tasks (the serving generation's). */
    private volatile SessionIndexes indexes;
    private volatile Generation generation;
    private Generations.Watcher watcher;
    private io.micrometer.core.instrument.MeterRegistry meters = dev.ensemble.sessions.streams.ServiceMeters.NONE;
    private dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding bound =
            new dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding(meters, "gateway");

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
        this.applicationId = applicationId;
        this.bootstrapServers = bootstrapServers;
        this.overrides = overrides;
        this.connection = Map.copyOf(dev.ensemble.sessions.schema.KafkaClients.connection(overrides));
        this.stateDir = stateDir;
        this.replicationFactor = replicationFactor;
    }

    /** The registry its Streams metrics go to (docs/operations.md "Metrics"); before {@link #start()}. */
    SessionReads withMeters(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.orNone(registry);
        this.bound = new dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding(meters, "gateway");
        return this;
    }

    /** A read side on generation {@code g}'s views, and the session indexes its tasks fill. */
    private record Side(KafkaStreams streams, SessionIndexes indexes) {
    }

    private Side newStreams(Generation g) {
        SessionIndexes idx = new SessionIndexes(stateDir.resolve("session-index").resolve(g.applicationId(applicationId)));
        return new Side(new KafkaStreams(buildTopology(g, idx), dev.ensemble.sessions.streams.ServiceMeters.withRegistry(
                StreamsDefaults.properties(g.applicationId(applicationId), bootstrapServers, stateDir, replicationFactor, overrides), meters)), idx);
    }

    /** The generation whose views it answers from (null before {@link #start()}). */
    public Generation generation() {
        return generation;
    }

    /**
     * Sources {@code sessions.view.sessions}, {@code sessions.view.retirement}, {@code sessions.view.deletion-audit}
     * and {@code sessions.view.assistant} → one processor keeping the newest sequence per key → four stores.
     * One processor for the four keeps them in one sub-topology, so the instance that holds an account's
     * sessions also holds its retirement, its audit and its assistant conversations (the topics are partitioned alike).
     */
    public static Topology buildTopology() {
        return buildTopology(Generation.FIRST);
    }

    /** {@link #buildTopology()} on the view topics of generation {@code g} (without session indexes: e.g. to create its changelogs). */
    public static Topology buildTopology(Generation g) {
        return buildTopology(g, null);
    }

    /**
     * {@link #buildTopology(Generation)} whose processor also keeps each partition's session index ({@link SessionIndex})
     * in {@code indexes}: filled from the store when the partition's task starts, updated with every view it keeps.
     */
    static Topology buildTopology(Generation g, SessionIndexes indexes) {
        Topology t = new Topology();
        t.addSource("views-source", Topics.SESSIONS_VIEW.keySerde().deserializer(),
                Topics.SESSIONS_VIEW.valueSerde().deserializer(), g.view(Topics.SESSIONS_VIEW).name());
        t.addSource("retirement-source", Topics.RETIREMENT_VIEW.keySerde().deserializer(),
                Topics.RETIREMENT_VIEW.valueSerde().deserializer(), g.view(Topics.RETIREMENT_VIEW).name());
        t.addSource("audit-source", Topics.DELETION_AUDIT.keySerde().deserializer(),
                Topics.DELETION_AUDIT.valueSerde().deserializer(), g.view(Topics.DELETION_AUDIT).name());
        t.addSource("assistant-source", Topics.ASSISTANT_VIEW.keySerde().deserializer(),
                Topics.ASSISTANT_VIEW.valueSerde().deserializer(), g.view(Topics.ASSISTANT_VIEW).name());
        t.addProcessor("newest-view", () -> new NewestView(g, indexes), "views-source", "retirement-source", "audit-source",
                "assistant-source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STORE), Serdes.String(),
                AvroSerde.of(SessionView.class)), "newest-view");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(RETIREMENT_STORE), Serdes.String(),
                AvroSerde.of(RetirementView.class)), "newest-view");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(AUDIT_STORE), Serdes.String(),
                AvroSerde.of(DeletionAudit.class)), "newest-view");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(ASSISTANT_STORE), Serdes.String(),
                AvroSerde.of(ConversationView.class)), "newest-view");
        return t;
    }

    /**
     * Keeps an update only when its sequence is higher than the stored one; a tombstone deletes (a no-op when unknown).
     * A session view it keeps or deletes goes to its partition's session index too (when it has {@code indexes}).
     */
    static final class NewestView implements Processor<String, Object, Void, Void> {
        private final String retirementTopic;
        private final String auditTopic;
        private final String assistantTopic;
        private final SessionIndexes indexes;
        private ProcessorContext<Void, Void> context;
        private KeyValueStore<String, SessionView> sessions;
        private KeyValueStore<String, RetirementView> retirement;
        private KeyValueStore<String, DeletionAudit> audits;
        private KeyValueStore<String, ConversationView> conversations;
        private SessionIndex index;

        NewestView(Generation g, SessionIndexes indexes) {
            this.retirementTopic = g.view(Topics.RETIREMENT_VIEW).name();
            this.auditTopic = g.view(Topics.DELETION_AUDIT).name();
            this.assistantTopic = g.view(Topics.ASSISTANT_VIEW).name();
            this.indexes = indexes;
        }

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            this.context = context;
            sessions = context.getStateStore(STORE);
            retirement = context.getStateStore(RETIREMENT_STORE);
            audits = context.getStateStore(AUDIT_STORE);
            conversations = context.getStateStore(ASSISTANT_STORE);
            if (indexes != null) {
                index = indexes.open(context.taskId(), sessions); // the task runs: its store is restored
            }
        }

        @Override
        public void close() {
            if (index != null) {
                indexes.close(context.taskId(), index);
                index = null;
            }
        }

        @Override
        public void process(Record<String, Object> r) {
            String topic = context.recordMetadata().map(m -> m.topic()).orElse("");
            if (topic.equals(retirementTopic)) {
                NewestBySequence.keep(retirement, r.key(), (RetirementView) r.value(), RetirementView::getSequence);
            } else if (topic.equals(auditTopic)) {
                NewestBySequence.keep(audits, r.key(), (DeletionAudit) r.value(), DeletionAudit::getSequence);
            } else if (topic.equals(assistantTopic)) {
                NewestBySequence.keep(conversations, r.key(), (ConversationView) r.value(), ConversationView::getSequence);
            } else if (NewestBySequence.keep(sessions, r.key(), (SessionView) r.value(), SessionView::getSequence) && index != null) {
                if (r.value() == null) {
                    index.delete(r.key());
                } else {
                    index.put(r.key(), (SessionView) r.value());
                }
            }
        }

    }

    /** Starts on the serving generation's views, and follows each change of the serving generation. */
    public synchronized void start() {
        Generation serving = Generations.serving(bootstrapServers, connection);
        Side side = newStreams(serving);
        KafkaStreams first = side.streams();
        generation = serving;
        indexes = side.indexes();
        streams = first;
        StreamsDefaults.start(first, "gateway read side");
        bound.follow(first);
        watcher = new Generations.Watcher(bootstrapServers, connection, "gateway", records -> switchTo(Generations.parse(records.get(Generations.SERVING))));
    }

    /**
     * Answers from generation {@code g}'s views once a Streams application on them has read them to their ends (the old
     * one answers until then); then closes the old one and removes its local state. Runs on the watcher's thread.
     */
    private void switchTo(Generation g) {
        if (g.equals(generation)) {
            return;
        }
        LOG.info("gateway read side: loading the views of projector generation {} (answering from {} meanwhile)", g, generation);
        Side nextSide = newStreams(g);
        KafkaStreams next = nextSide.streams();
        StreamsDefaults.start(next, "gateway read side " + g);
        try {
            ViewCatchUp.await(bootstrapServers, connection, next, g.applicationId(applicationId),
                    List.of(g.view(Topics.SESSIONS_VIEW).name(), g.view(Topics.RETIREMENT_VIEW).name(), g.view(Topics.DELETION_AUDIT).name(),
                            g.view(Topics.ASSISTANT_VIEW).name()),
                    SWITCH_TIMEOUT);
        } catch (RuntimeException | InterruptedException e) {
            LOG.warn("gateway read side: generation {} did not load ({}); still answering from {}", g, e.toString(), generation);
            StreamsDefaults.close(next, Duration.ofSeconds(30));
            return;
        }
        KafkaStreams old;
        synchronized (this) {
            old = streams;
            indexes = nextSide.indexes();
            streams = next;
            generation = g;
        }
        bound.follow(next);
        LOG.info("gateway read side: answering from projector generation {}", g);
        try {
            Thread.sleep(CLOSE_GRACE.toMillis()); // reads that took the old stores just before the switch finish on them
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        StreamsDefaults.close(old, Duration.ofSeconds(30));
        old.cleanUp();
        Generations.acknowledge(bootstrapServers, connection, "gateway", g);
    }

    /** Waits until the store is queryable. */
    public void awaitRunning(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (streams == null || streams.state() != KafkaStreams.State.RUNNING) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("the gateway's read side did not start within " + timeout + " (state "
                        + (streams == null ? "not started" : streams.state()) + ")");
            }
            Thread.sleep(50);
        }
    }

    /** True while the stores can be read: the read side is running (not starting, rebalancing, stopping or failed). */
    public boolean ready() {
        KafkaStreams s = streams;
        return s != null && s.state() == KafkaStreams.State.RUNNING;
    }

    /**
     * The instance that holds an account's sessions: empty when it is this one (or when ownership is not
     * known yet, e.g. while starting: the local read then answers 503), else its {@code host:port}.
     */
    public Optional<String> ownerOf(String account, String self) {
        KeyQueryMetadata m;
        try {
            KafkaStreams current = streams;
            if (current == null) {
                return Optional.empty();
            }
            m = accountMetadata(current, account);
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException | IllegalStateException e) {
            return Optional.empty(); // not started or not running: the local read answers 503
        }
        if (m == null || m == KeyQueryMetadata.NOT_AVAILABLE) {
            return Optional.empty();
        }
        String owner = m.activeHost().host() + ":" + m.activeHost().port();
        return owner.equals(self) ? Optional.empty() : Optional.of(owner);
    }

    /** Keys go to the partition of their account ({@link Keys#accountPartition}), whatever follows the account in them. */
    private static final org.apache.kafka.streams.processor.StreamPartitioner<String, Object> BY_ACCOUNT =
            (topic, key, value, n) -> Optional.of(Set.of(Keys.accountPartition(key, n)));

    /**
     * Where {@code streams} holds the account's partition: its host and partition, or {@link KeyQueryMetadata#NOT_AVAILABLE}
     * (or null) while that is not known; throws as {@link KafkaStreams#queryMetadataForKey} does when it is not running.
     */
    private static KeyQueryMetadata accountMetadata(KafkaStreams streams, String account) {
        return streams.queryMetadataForKey(STORE, Keys.prefix(account), BY_ACCOUNT);
    }

    // Every read below goes through read(): a store is looked up and read in one step, and a store that cannot be read
    // (the read side not started, its stream thread STARTING or restoring after a start or a rebalance, stopping, failed)
    // is a 503 with Retry-After, whether Streams refuses the lookup or, as it does while a thread starts, the read itself.

    /** One session of the account, or null. */
    public SessionView get(String account, String sessionId) {
        return read(STORE, "session views", s -> this.<SessionView>typed(s).get(Keys.of(account, sessionId)));
    }

    /**
     * One page of the account's sessions for {@code query} from its partition's session index (newest first, or by
     * relevance with {@code q}). A 503 while that partition's task is not running here (starting, restoring, moving).
     */
    public SessionIndex.Page sessions(String account, SessionQuery query) {
        KafkaStreams current = streams;
        SessionIndexes idx = indexes;
        KeyQueryMetadata m;
        try {
            if (current == null || idx == null || current.state() != KafkaStreams.State.RUNNING) {
                throw notReadable("session views");
            }
            m = accountMetadata(current, account);
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException | IllegalStateException e) {
            throw notReadable("session views");
        }
        SessionIndex index = m == null || m == KeyQueryMetadata.NOT_AVAILABLE ? null : idx.of(m.partition());
        if (index == null) {
            throw notReadable("session views");
        }
        try {
            return index.page(account, query);
        } catch (org.apache.lucene.store.AlreadyClosedException e) {
            throw notReadable("session views"); // the partition moved away while it was read
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("reading the session index", e);
        }
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

    /** One assistant conversation of the account (guide §5), or null. */
    public ConversationView conversation(String account, String conversationKey) {
        return read(ASSISTANT_STORE, "assistant conversations", s -> this.<ConversationView>typed(s).get(Keys.of(account, conversationKey)));
    }

    /** Every assistant conversation of the account, in key order. */
    public List<ConversationView> conversations(String account) {
        return read(ASSISTANT_STORE, "assistant conversations", s -> scan(this.<ConversationView>typed(s), account));
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
            KafkaStreams current = streams;
            if (current == null) {
                throw notReadable(what);
            }
            store = current.store(StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.<String, Object>keyValueStore()));
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
        KafkaStreams.State state = streams == null ? KafkaStreams.State.CREATED : streams.state();
        if (state == KafkaStreams.State.CREATED || state == KafkaStreams.State.REBALANCING || state == KafkaStreams.State.RUNNING) {
            return ApiError.starting("the " + what + " are being loaded (" + state + "); try again in a few seconds");
        }
        return new ApiError(503, "unavailable", "the " + what + " cannot be read: the gateway's read side is " + state
                + " (see the gateway's log)");
    }

    /** The Streams instance (state, metrics); null until {@link #start()} has made it. */
    public KafkaStreams streams() {
        return streams;
    }

    @Override
    public void close() {
        if (watcher != null) {
            watcher.close();
        }
        bound.close();
        if (streams != null) {
            StreamsDefaults.close(streams, Duration.ofSeconds(30));
        }
    }
}

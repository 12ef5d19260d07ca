package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.streams.StreamsDefaults;
import dev.ensemble.sessions.schema.streams.WriteBackStore;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionState;
import dev.ensemble.sessions.views.ParkedEvents;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.RunFacts;
import dev.ensemble.sessions.views.RunRef;
import dev.ensemble.sessions.views.SessionView;
import dev.ensemble.sessions.scorer.ConfigWatcher;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The projector service: one Kafka Streams application that folds the event log ({@code sessions.events},
 * key account) into the views (DESIGN.md §4): session chains (guide §1) on {@code sessions.view.sessions},
 * corpus statistics (guide §4) on {@code sessions.view.corpus},
 * retirement (guide §5, §6) on {@code sessions.view.retirement}, the deletion audit on
 * {@code sessions.view.deletion-audit} (compacted, keys {@code <account>/<id>}, partitioned by account); and,
 * as the single writer of each account, the deletion guard's decisions, appended to {@code sessions.events}
 * in the same exactly-once transaction.
 *
 * <p>Life cycle: {@link #start()} runs the application until {@link #stop()}; startable alone against any
 * bootstrap servers, or together with the other services by the local launcher.
 */
public final class Projector implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Projector.class);

    /**
     * How often the views of changed sessions are forwarded to {@code sessions.view.sessions} and the retirement
     * rules (wall-clock time): a session changed by several events in this time is published once, with its
     * newest state. A caught-up projector adds at most this to a view's latency; one working through a backlog
     * publishes less often ({@link CatchUp}).
     */
    public static final Duration VIEW_EMIT_INTERVAL = Duration.ofMillis(100);

    /**
     * The longest one publication (of session views, of rarity tables) runs in one punctuation; what is left is
     * published at the next ticks. Its output joins the task's open transaction, which must commit within the
     * exactly-once producer's transaction timeout (10 s).
     */
    static final Duration PUBLICATION_BUDGET = Duration.ofSeconds(1);

    /** The Streams application id (its consumer group and the prefix of its internal topics). */
    public static final String APPLICATION_ID = "ensemble-projector";

    private final Properties properties;
    private final RetirementRules.Config rules;
    private KafkaStreams streams;

    /**
     * @param bootstrapServers  the cluster
     * @param stateDir          where its RocksDB stores live
     * @param replicationFactor of its changelog topics
     * @param overrides         further Streams settings, applied last
     */
    public Projector(String bootstrapServers, Path stateDir, int replicationFactor, Map<String, ?> overrides) {
        this(bootstrapServers, stateDir, replicationFactor, overrides, RetirementRules.Config.defaults());
    }

    /**
     * @param rules the retirement rules' numbers, e.g. {@code Config.defaults().withCompletedWindow(Duration.ofDays(14))}
     */
    public Projector(String bootstrapServers, Path stateDir, int replicationFactor, Map<String, ?> overrides,
                     RetirementRules.Config rules) {
        this.properties = StreamsDefaults.properties(APPLICATION_ID, bootstrapServers, stateDir, replicationFactor, overrides);
        this.rules = rules;
    }

    /** The topology with the default {@link RetirementRules.Config}. */
    public static Topology buildTopology() {
        return buildTopology(RetirementRules.Config.defaults());
    }

    /** The topology with RocksDB stores, as {@link #start()} runs it. */
    public static Topology buildTopology(RetirementRules.Config rules) {
        return buildTopology(rules, false);
    }

    /**
     * The projector's topology; both {@link #start()} and the tests build it here.
     * <pre>
     * sessions.events → deletion-guard ─┬→ session-chains ─┬→ sessions.view.sessions
     *                                   │                  └→ retirement ─→ sessions.view.retirement
     *                                   ├→ corpus-stats ─→ sessions.view.corpus
     *                                   ├→ retirement (a computer's status, a deletion's progress)
     *                                   ├→ sessions.view.deletion-audit
     *                                   └→ sessions.events (its own decisions, in the same transaction)
     * </pre>
     * The deletion guard ({@link DeletionProcessor}) meets every event first: it refuses foreign deletion
     * decisions, folds the facts the retirement rules need, passes the event on to the session chains
     * ({@link SessionChainProcessor}), then decides deletion requests and records computers' answers. Stores:
     * event-ids, run-event-ids ({@link AppliedEvents}), session-chains, run-index, task-sessions, parked-runs, pending-views (chains); run-facts, task-states,
     * computer-states, computer-sessions, deletion-states, deletion-audit (guard); retirement-views. The
     * corpus statistics ({@link CorpusProcessor}, stores corpus-docs, corpus-index, corpus-claim-docs, pending-corpus) get every
     * valid new event after the chains (an invalid one is refused once, by the guard), with the analysis config
     * from {@code ENSEMBLE_SESSION_CHOICE_CONFIG}.
     *
     * @param rules          the retirement rules' numbers (the completed window)
     * @param inMemoryStores the same topology with in-memory stores instead of RocksDB: for long simulations
     *                       and throwaway replays, where writing every store to disk on every commit dominates
     */
    public static Topology buildTopology(RetirementRules.Config rules, boolean inMemoryStores) {
        java.util.function.Function<String, org.apache.kafka.streams.state.KeyValueBytesStoreSupplier> store =
                name -> inMemoryStores ? Stores.inMemoryKeyValueStore(name) : Stores.persistentKeyValueStore(name);
        String guard = DeletionProcessor.GUARD;
        String chains = DeletionProcessor.CHAINS;
        String retirement = DeletionProcessor.RETIREMENT;
        Topology t = new Topology();
        t.addSource("events-source", Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer(),
                Topics.EVENTS.name());
        String corpus = DeletionProcessor.CORPUS;
        t.addProcessor(guard, () -> new DeletionProcessor(rules, List.of(chains, corpus)), "events-source");
        t.addProcessor(chains, SessionChainProcessor::new, guard);
        t.addProcessor(retirement, () -> new RetirementProcessor(rules), chains, guard);
        t.addStateStore(held(store.apply(StoreNames.EVENT_IDS), Serdes.Long()), chains, guard);
        t.addStateStore(held(store.apply(StoreNames.RUN_EVENT_IDS), AppliedEvents.RunEventIds.SERDE), chains, guard);
        t.addStateStore(held(store.apply(StoreNames.SESSION_CHAINS), AvroSerde.of(SessionView.class)), chains, guard, retirement);
        t.addStateStore(held(store.apply(StoreNames.RUN_INDEX), AvroSerde.of(RunRef.class)), chains, guard);
        t.addStateStore(held(store.apply(StoreNames.TASK_SESSIONS), Serdes.String()), chains);
        t.addStateStore(held(Stores.inMemoryKeyValueStore(StoreNames.PENDING_VIEWS), Serdes.Long()), chains);
        t.addStateStore(held(store.apply(StoreNames.PARKED_RUNS), AvroSerde.of(ParkedEvents.class)), chains);
        t.addStateStore(held(store.apply(StoreNames.RUN_FACTS), AvroSerde.of(RunFacts.class)), guard, retirement);
        t.addStateStore(held(store.apply(StoreNames.TASK_STATES), AvroSerde.of(Event.class)), guard, retirement);
        t.addStateStore(held(store.apply(StoreNames.COMPUTER_STATES), AvroSerde.of(Event.class)), guard, retirement);
        t.addStateStore(held(store.apply(StoreNames.COMPUTER_SESSIONS), Serdes.String()), guard, retirement);
        t.addStateStore(held(store.apply(StoreNames.DELETION_STATES), AvroSerde.of(DeletionState.class)), guard, retirement);
        t.addStateStore(held(store.apply(StoreNames.DELETION_AUDIT), AvroSerde.of(DeletionAudit.class)), guard);
        t.addStateStore(held(store.apply(StoreNames.RETIREMENT_VIEWS), AvroSerde.of(RetirementView.class)), retirement);
        ConfigWatcher config = ConfigWatcher.fromEnvironment(Clock.systemUTC(), LOG::warn);
        t.addProcessor(corpus, () -> new CorpusProcessor(config), guard);
        t.addStateStore(held(store.apply(StoreNames.CORPUS_DOCS), Serdes.String()), "corpus-stats");
        t.addStateStore(held(store.apply(StoreNames.CORPUS_INDEX), Serdes.Long()), "corpus-stats");
        t.addStateStore(held(store.apply(StoreNames.CORPUS_CLAIMS), Serdes.String()), "corpus-stats");
        t.addStateStore(held(Stores.inMemoryKeyValueStore(StoreNames.PENDING_CORPUS), Serdes.Long()), "corpus-stats");
        t.addSink("corpus-view-sink", Topics.CORPUS_VIEW.name(), Topics.CORPUS_VIEW.keySerde().serializer(),
                Topics.CORPUS_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), "corpus-stats");
        t.addSink("sessions-view-sink", Topics.SESSIONS_VIEW.name(), Topics.SESSIONS_VIEW.keySerde().serializer(),
                Topics.SESSIONS_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), chains);
        t.addSink("retirement-view-sink", Topics.RETIREMENT_VIEW.name(), Topics.RETIREMENT_VIEW.keySerde().serializer(),
                Topics.RETIREMENT_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), retirement);
        t.addSink(DeletionProcessor.AUDIT_SINK, Topics.DELETION_AUDIT.name(), Topics.DELETION_AUDIT.keySerde().serializer(),
                Topics.DELETION_AUDIT.valueSerde().serializer(), new AccountPartitioner<>(), guard);
        t.addSink(DeletionProcessor.EVENTS_SINK, Topics.EVENTS.name(), Topics.EVENTS.keySerde().serializer(),
                Topics.EVENTS.valueSerde().serializer(), new AccountPartitioner<>(), guard);
        return t;
    }

    /** How many keys each store of a task holds as live objects between commits ({@link WriteBackStore}). */
    static final int HELD_PER_STORE = 10_000;

    /**
     * The store with a {@link WriteBackStore} in front of it: the processors read and change live objects, and
     * each key changed between two commits is encoded and written to the store and its changelog once, at the commit.
     */
    private static <V> org.apache.kafka.streams.state.StoreBuilder<org.apache.kafka.streams.state.KeyValueStore<String, V>> held(
            org.apache.kafka.streams.state.KeyValueBytesStoreSupplier supplier, org.apache.kafka.common.serialization.Serde<V> serde) {
        return WriteBackStore.builder(supplier, serde, HELD_PER_STORE);
    }

    /** Starts the application (non-blocking). */
    public synchronized void start() {
        if (streams != null) {
            return;
        }
        streams = new KafkaStreams(buildTopology(rules), properties);
        StreamsDefaults.start(streams, "projector");
        LOG.info("projector started ({} → {})", Topics.EVENTS.name(), Topics.SESSIONS_VIEW.name());
    }

    /** The running Streams instance (for state and metrics), or null before start. */
    public synchronized KafkaStreams streams() {
        return streams;
    }

    /** Stops the application, committing what it processed; waits up to 30 s. */
    public synchronized void stop() {
        if (streams != null) {
            StreamsDefaults.close(streams, Duration.ofSeconds(30));
            streams = null;
            LOG.info("projector stopped");
        }
    }


    @Override
    public void close() {
        stop();
    }
}

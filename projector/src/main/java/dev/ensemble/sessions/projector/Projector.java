package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionState;
import dev.ensemble.sessions.views.ParkedEvents;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
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
 * as the single writer of each account, the deletion workflow's decisions, appended to {@code sessions.events}
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

    /** The topology's node names (its state stores are named in {@link StoreNames}). The source: the event log. */
    public static final String SOURCE = "events-source";
    /** The processor every event meets first ({@link EventIntakeProcessor}). */
    public static final String EVENT_INTAKE = "event-intake";
    /** The session chains ({@link SessionChainProcessor}). */
    public static final String SESSION_CHAINS = "session-chains";
    /** The retirement rules ({@link RetirementProcessor}). */
    public static final String RETIREMENT = "retirement";
    /** The corpus statistics ({@link CorpusProcessor}). */
    public static final String CORPUS_STATS = "corpus-stats";
    /** The assistant conversations ({@link ConversationProcessor}). */
    public static final String ASSISTANT_CONVERSATIONS = "assistant-conversations";
    /** The sinks: views and the intake's own decisions. */
    public static final String SESSIONS_VIEW_SINK = "sessions-view-sink";
    public static final String RETIREMENT_VIEW_SINK = "retirement-view-sink";
    public static final String CORPUS_VIEW_SINK = "corpus-view-sink";
    public static final String DELETION_AUDIT_SINK = "deletion-audit-sink";
    public static final String ASSISTANT_VIEW_SINK = "assistant-view-sink";
    public static final String DECISIONS_SINK = "decisions-sink";

    private final Properties properties;
    private final RetirementRules.Config rules;
    private final dev.ensemble.sessions.schema.Generation generation;
    private KafkaStreams streams;
    private io.micrometer.core.instrument.MeterRegistry meters = dev.ensemble.sessions.streams.ServiceMeters.NONE;
    private AutoCloseable metrics;

    /**
     * The registry its Kafka Streams metrics ({@code service="projector"}) and its deletion outcomes
     * ({@link DeletionWorkflow}) go to (docs/operations.md "Metrics"); before {@link #start()}. Without it nothing is counted.
     */
    public synchronized Projector withMeters(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.orNone(registry);
        return this;
    }

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
        this(bootstrapServers, stateDir, replicationFactor, overrides, rules, dev.ensemble.sessions.schema.Generation.FIRST);
    }

    /**
     * @param generation its application id ({@code Generation.applicationId} of {@value #APPLICATION_ID}) and view topics
     *                   ({@code Generation.views}); it appends the deletion workflow's decisions only while the log's
     *                   handover markers name it ({@link dev.ensemble.sessions.schema.Generations})
     */
    public Projector(String bootstrapServers, Path stateDir, int replicationFactor, Map<String, ?> overrides,
                     RetirementRules.Config rules, dev.ensemble.sessions.schema.Generation generation) {
        this.properties = StreamsDefaults.properties(generation.applicationId(APPLICATION_ID), bootstrapServers, stateDir,
                replicationFactor, overrides);
        this.rules = rules;
        this.generation = generation;
    }

    /** Its generation. */
    public dev.ensemble.sessions.schema.Generation generation() {
        return generation;
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
     * sessions.events → event-intake ─┬→ session-chains ─┬→ sessions.view.sessions
     *                                 │                  └→ retirement ─→ sessions.view.retirement
     *                                 ├→ corpus-stats ─→ sessions.view.corpus
     *                                 ├→ assistant-conversations ─┬→ sessions.view.assistant
     *                                 │                           ├→ sessions.view.deletion-audit
     *                                 │                           └→ sessions.events (its conversation deletion decisions)
     *                                 ├→ retirement (a computer's status, a deletion's progress)
     *                                 ├→ sessions.view.deletion-audit
     *                                 └→ sessions.events (its own decisions, in the same transaction)
     * </pre>
     * The event intake ({@link EventIntakeProcessor}) meets every event first: it validates it, drops duplicates,
     * refuses foreign deletion decisions, folds the facts the retirement rules need, passes the event on to the
     * session chains ({@link SessionChainProcessor}) and the corpus statistics, then runs the deletion workflow
     * ({@link DeletionWorkflow}: decides deletion requests by {@link DeletionGuard}, records computers' answers). Stores:
     * event-ids, runs ({@link AppliedEvents}, {@link RunRecord}), session-chains, session-fills, task-sessions, parked-runs, pending-views (chains); task-states,
     * computer-states, computer-sessions, deletion-states, deletion-audit (intake); retirement-digests. The
     * corpus statistics ({@link CorpusProcessor}, stores corpus-docs, corpus-claim-docs, pending-corpus) get every
     * valid new event after the chains (an invalid one is refused once, by the intake), and fold the session-choice
     * config from the log's {@code ChoiceConfigChanged} (store choice-config): nothing here reads a file or the
     * environment, so a replay of the log gives the same views. The assistant conversations ({@link ConversationProcessor},
     * stores assistant-conversations, pending-assistant, assistant-drops) fold the turns, asks and conversation deletions
     * and decide those deletions, appending their decisions like the deletion workflow.
     *
     * @param rules          the retirement rules' numbers (the completed window)
     * @param inMemoryStores the same topology with in-memory stores instead of RocksDB: for long simulations
     *                       and throwaway replays, where writing every store to disk on every commit dominates
     */
    public static Topology buildTopology(RetirementRules.Config rules, boolean inMemoryStores) {
        return buildTopology(rules, inMemoryStores, dev.ensemble.sessions.schema.Generation.FIRST);
    }

    /**
     * The topology of {@code generation}: its view topics ({@code Generation.view}), and the deletion workflow's appends
     * only while the log's handover markers name it.
     */
    public static Topology buildTopology(RetirementRules.Config rules, boolean inMemoryStores, dev.ensemble.sessions.schema.Generation generation) {
        Topology t = new Topology();
        t.addSource(SOURCE, Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer(),
                Topics.EVENTS.name());
        t.addProcessor(EVENT_INTAKE, () -> new EventIntakeProcessor(rules, generation), SOURCE);
        t.addProcessor(SESSION_CHAINS, SessionChainProcessor::new, EVENT_INTAKE);
        t.addProcessor(RETIREMENT, () -> new RetirementProcessor(rules), SESSION_CHAINS, EVENT_INTAKE);
        t.addProcessor(CORPUS_STATS, CorpusProcessor::new, EVENT_INTAKE);
        t.addProcessor(ASSISTANT_CONVERSATIONS, () -> new ConversationProcessor(rules, generation), EVENT_INTAKE);
        for (StoreSpec spec : STORES) {
            t.addStateStore(Stores.keyValueStoreBuilder(spec.inMemory() || inMemoryStores ? Stores.inMemoryKeyValueStore(spec.name())
                            : Stores.persistentKeyValueStore(spec.name()), Serdes.String(), spec.serde()).withCachingEnabled(),
                    spec.processors().toArray(String[]::new));
        }
        t.addSink(CORPUS_VIEW_SINK, generation.view(Topics.CORPUS_VIEW).name(), Topics.CORPUS_VIEW.keySerde().serializer(),
                Topics.CORPUS_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), CORPUS_STATS);
        t.addSink(SESSIONS_VIEW_SINK, generation.view(Topics.SESSIONS_VIEW).name(), Topics.SESSIONS_VIEW.keySerde().serializer(),
                Topics.SESSIONS_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), SESSION_CHAINS);
        t.addSink(RETIREMENT_VIEW_SINK, generation.view(Topics.RETIREMENT_VIEW).name(), Topics.RETIREMENT_VIEW.keySerde().serializer(),
                Topics.RETIREMENT_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), RETIREMENT);
        t.addSink(DELETION_AUDIT_SINK, generation.view(Topics.DELETION_AUDIT).name(), Topics.DELETION_AUDIT.keySerde().serializer(),
                Topics.DELETION_AUDIT.valueSerde().serializer(), new AccountPartitioner<>(), EVENT_INTAKE, ASSISTANT_CONVERSATIONS);
        t.addSink(ASSISTANT_VIEW_SINK, generation.view(Topics.ASSISTANT_VIEW).name(), Topics.ASSISTANT_VIEW.keySerde().serializer(),
                Topics.ASSISTANT_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), ASSISTANT_CONVERSATIONS);
        t.addSink(DECISIONS_SINK, Topics.EVENTS.name(), Topics.EVENTS.keySerde().serializer(),
                Topics.EVENTS.valueSerde().serializer(), new AccountPartitioner<>(), EVENT_INTAKE, ASSISTANT_CONVERSATIONS);
        return t;
    }

    /**
     * One of the projector's state stores: its name (and so its changelog, {@code <application.id>-<name>-changelog}),
     * how its values are encoded (in the store and its changelog; keys are UTF-8 Strings), whether it is kept in memory
     * also when the others are RocksDB stores, and the processors that use it.
     */
    record StoreSpec(String name, org.apache.kafka.common.serialization.Serde<?> serde, boolean inMemory, List<String> processors) {
    }

    /** Every state store of the projector's topology ({@link #buildTopology(RetirementRules.Config, boolean)}). */
    static final List<StoreSpec> STORES = List.of(
            new StoreSpec(StoreNames.EVENT_IDS, Serdes.Long(), false, List.of(SESSION_CHAINS, EVENT_INTAKE, ASSISTANT_CONVERSATIONS)),
            new StoreSpec(StoreNames.RUNS, RunRecord.SERDE, false, List.of(SESSION_CHAINS, EVENT_INTAKE, RETIREMENT, ASSISTANT_CONVERSATIONS)),
            new StoreSpec(StoreNames.SESSION_CHAINS, AvroSerde.of(SessionView.class), false,
                    List.of(SESSION_CHAINS, EVENT_INTAKE, RETIREMENT)),
            new StoreSpec(StoreNames.SESSION_FILLS, SessionFill.SERDE, false, List.of(SESSION_CHAINS, EVENT_INTAKE, RETIREMENT)),
            new StoreSpec(StoreNames.TASK_SESSIONS, Serdes.String(), false, List.of(SESSION_CHAINS)),
            new StoreSpec(StoreNames.PENDING_VIEWS, Serdes.Long(), true, List.of(SESSION_CHAINS)),
            new StoreSpec(StoreNames.PARKED_RUNS, AvroSerde.of(ParkedEvents.class), false, List.of(SESSION_CHAINS)),
            new StoreSpec(StoreNames.TASK_STATES, AvroSerde.of(Event.class), false, List.of(EVENT_INTAKE, RETIREMENT)),
            new StoreSpec(StoreNames.COMPUTER_STATES, AvroSerde.of(Event.class), false, List.of(EVENT_INTAKE, RETIREMENT)),
            new StoreSpec(StoreNames.COMPUTER_SESSIONS, Serdes.String(), false, List.of(EVENT_INTAKE, RETIREMENT)),
            new StoreSpec(StoreNames.DELETION_STATES, AvroSerde.of(DeletionState.class), false, List.of(EVENT_INTAKE, RETIREMENT)),
            new StoreSpec(StoreNames.DELETION_AUDIT, AvroSerde.of(DeletionAudit.class), false, List.of(EVENT_INTAKE, ASSISTANT_CONVERSATIONS)),
            new StoreSpec(StoreNames.RETIREMENT_DIGESTS, RetirementDigest.SERDE, false, List.of(RETIREMENT)),
            new StoreSpec(StoreNames.CORPUS_DOCS, Serdes.String(), false, List.of(CORPUS_STATS)),
            new StoreSpec(StoreNames.CORPUS_CLAIMS, Serdes.String(), false, List.of(CORPUS_STATS)),
            new StoreSpec(StoreNames.PENDING_CORPUS, Serdes.Long(), true, List.of(CORPUS_STATS)),
            new StoreSpec(StoreNames.CHOICE_CONFIG, Serdes.String(), false, List.of(CORPUS_STATS)),
            new StoreSpec(StoreNames.SERVING_GENERATION, Serdes.String(), false, List.of(EVENT_INTAKE, ASSISTANT_CONVERSATIONS)),
            new StoreSpec(StoreNames.ASSISTANT_CONVERSATIONS, AvroSerde.of(dev.ensemble.sessions.views.ConversationView.class), false,
                    List.of(ASSISTANT_CONVERSATIONS)),
            new StoreSpec(StoreNames.PENDING_ASSISTANT, Serdes.Long(), true, List.of(ASSISTANT_CONVERSATIONS)),
            new StoreSpec(StoreNames.ASSISTANT_DROPS, Serdes.String(), false, List.of(ASSISTANT_CONVERSATIONS)));

    /** Starts the application (non-blocking). */
    public synchronized void start() {
        if (streams != null) {
            return;
        }
        Properties p = new Properties();
        p.putAll(properties);
        streams = new KafkaStreams(buildTopology(rules, false, generation), dev.ensemble.sessions.streams.ServiceMeters.withRegistry(p, meters));
        StreamsDefaults.start(streams, "projector");
        metrics = dev.ensemble.sessions.streams.ServiceMeters.bind(meters, streams, "projector");
        LOG.info("projector {} started ({} → {})", generation, Topics.EVENTS.name(), generation.view(Topics.SESSIONS_VIEW).name());
    }

    /** The running Streams instance (for state and metrics), or null before start. */
    public synchronized KafkaStreams streams() {
        return streams;
    }

    /**
     * Whether views are still to be published: a mark in {@link StoreNames#PENDING_VIEWS},
     * {@link StoreNames#PENDING_CORPUS} or {@link StoreNames#PENDING_ASSISTANT} of this instance's tasks (read through
     * Kafka Streams' interactive queries; true while they cannot be read, e.g. during a rebalance, or before start: a
     * failed read is "not known yet", never an error, so a rebuild waiting on it is not aborted by a read that races a
     * task's move).
     */
    public boolean publicationPending() {
        KafkaStreams s = streams();
        if (s == null) {
            return true;
        }
        try {
            for (String store : List.of(StoreNames.PENDING_VIEWS, StoreNames.PENDING_CORPUS, StoreNames.PENDING_ASSISTANT)) {
                org.apache.kafka.streams.state.ReadOnlyKeyValueStore<String, Long> marks = s.store(
                        org.apache.kafka.streams.StoreQueryParameters.fromNameAndType(store,
                                org.apache.kafka.streams.state.QueryableStoreTypes.<String, Long>keyValueStore()));
                try (var it = marks.all()) {
                    if (it.hasNext()) {
                        return true;
                    }
                }
            }
            return false;
        } catch (org.apache.kafka.streams.errors.InvalidStateStoreException notNow) {
            return true;
        } catch (RuntimeException whileMoving) {
            // a store read while the instance starts, rebalances or replaces a thread may fail otherwise too: not known yet
            LOG.debug("the marks of views to publish could not be read now; asking again", whileMoving);
            return true;
        }
    }

    /** Stops the application, committing what it processed; waits up to 30 s. */
    public synchronized void stop() {
        if (streams != null) {
            dev.ensemble.sessions.streams.ServiceMeters.closeQuietly(metrics);
            metrics = null;
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

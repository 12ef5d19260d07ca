package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.streams.StreamsDefaults;
import dev.ensemble.sessions.views.ParkedEvents;
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
import java.util.Map;
import java.util.Properties;

/**
 * The projector service: one Kafka Streams application that folds the event log ({@code sessions.events},
 * key account) into the views (DESIGN.md §4). Today: session chains (guide §1), published on the compacted
 * topic {@code sessions.view.sessions} (key {@code <account>/<sessionId>}, partitioned by account).
 *
 * <p>Life cycle: {@link #start()} runs the application until {@link #stop()}; startable alone against any
 * bootstrap servers, or together with the other services by the local launcher.
 */
public final class Projector implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Projector.class);

    /** The Streams application id (its consumer group and the prefix of its internal topics). */
    public static final String APPLICATION_ID = "ensemble-projector";

    private final Properties properties;
    private KafkaStreams streams;

    /**
     * @param bootstrapServers  the cluster
     * @param stateDir          where its RocksDB stores live
     * @param replicationFactor of its changelog topics
     * @param overrides         further Streams settings, applied last
     */
    public Projector(String bootstrapServers, Path stateDir, int replicationFactor, Map<String, ?> overrides) {
        this.properties = StreamsDefaults.properties(APPLICATION_ID, bootstrapServers, stateDir, replicationFactor, overrides);
    }

    /**
     * The projector's topology: source {@code sessions.events} → processor {@code session-chains} (stores
     * event-ids, session-chains, run-index, task-sessions, parked-runs) → sink {@code sessions.view.sessions};
     * and → processor {@code corpus-stats} (stores corpus-docs, corpus-index, corpus-claims) → sink
     * {@code sessions.view.corpus}. The analysis config is read from {@code ENSEMBLE_SESSION_CHOICE_CONFIG}. Both
     * {@link #start()} and the tests build it here.
     */
    public static Topology buildTopology() {
        Topology t = new Topology();
        t.addSource("events-source", Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer(),
                Topics.EVENTS.name());
        t.addProcessor("session-chains", SessionChainProcessor::new, "events-source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.EVENT_IDS),
                Serdes.String(), Serdes.Long()), "session-chains");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.SESSION_CHAINS),
                Serdes.String(), AvroSerde.of(SessionView.class)), "session-chains");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.RUN_INDEX),
                Serdes.String(), AvroSerde.of(RunRef.class)), "session-chains");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.TASK_SESSIONS),
                Serdes.String(), Serdes.String()), "session-chains");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.PARKED_RUNS),
                Serdes.String(), AvroSerde.of(ParkedEvents.class)), "session-chains");
        ConfigWatcher config = ConfigWatcher.fromEnvironment(Clock.systemUTC(), LOG::warn);
        t.addProcessor("corpus-stats", () -> new CorpusProcessor(config), "events-source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.CORPUS_DOCS),
                Serdes.String(), Serdes.String()), "corpus-stats");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.CORPUS_INDEX),
                Serdes.String(), Serdes.Long()), "corpus-stats");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.CORPUS_CLAIMS),
                Serdes.String(), Serdes.ByteArray()), "corpus-stats");
        t.addSink("corpus-view-sink", Topics.CORPUS_VIEW.name(), Topics.CORPUS_VIEW.keySerde().serializer(),
                Topics.CORPUS_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), "corpus-stats");
        t.addSink("sessions-view-sink", Topics.SESSIONS_VIEW.name(), Topics.SESSIONS_VIEW.keySerde().serializer(),
                Topics.SESSIONS_VIEW.valueSerde().serializer(), new AccountPartitioner<>(), "session-chains");
        return t;
    }

    /** Starts the application (non-blocking). */
    public synchronized void start() {
        if (streams != null) {
            return;
        }
        streams = new KafkaStreams(buildTopology(), properties);
        streams.setUncaughtExceptionHandler(ex -> {
            LOG.error("projector stream thread failed; replacing it", ex);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
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

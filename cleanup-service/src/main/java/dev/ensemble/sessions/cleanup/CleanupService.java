package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;

/**
 * The cleanup service (guide §5 and §6, DESIGN.md §6): sweeps every account every 15 minutes and asks for the
 * deletion of the sessions whose retirement view says they may go (every task retired; asks, chats, node
 * conversations, routines and node sessions unused long enough), at most 60 looked at and 20 asked for per
 * account per sweep. It never deletes anything itself: each request goes through the projector's guard, which
 * decides, and the computers delete. It consumes {@code sessions.view.retirement} and
 * {@code sessions.cleanup.commands} and produces SessionDeletionRequested events on {@code sessions.events}.
 *
 * <p>Life cycle: {@link #start()} runs the Streams application until {@link #stop()}; startable alone against
 * any bootstrap servers, or with the other services by the local launcher. Several instances share the
 * accounts by partition.
 */
public final class CleanupService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CleanupService.class);

    /** The Streams application id (its consumer group and the prefix of its internal topics). */
    public static final String APPLICATION_ID = "ensemble-cleanup";

    private final Properties properties;
    private final CleanupConfig config;
    private KafkaStreams streams;

    /**
     * @param bootstrapServers  the cluster
     * @param stateDir          where its RocksDB stores live
     * @param replicationFactor of its changelog topics
     * @param config            the sweeps' settings ({@link CleanupConfig#defaults()})
     * @param overrides         further Streams settings, applied last
     */
    public CleanupService(String bootstrapServers, Path stateDir, int replicationFactor, CleanupConfig config,
                          Map<String, ?> overrides) {
        this.config = config;
        this.properties = StreamsDefaults.properties(APPLICATION_ID, bootstrapServers, stateDir, replicationFactor, overrides);
    }

    /** Starts the application (non-blocking). */
    public synchronized void start() {
        if (streams != null) {
            return;
        }
        streams = new KafkaStreams(CleanupTopology.build(config), properties);
        StreamsDefaults.start(streams, "cleanup");
        LOG.info("cleanup started ({} → {}): {}", Topics.RETIREMENT_VIEW.name(), Topics.EVENTS.name(),
                config.cleanSessions() ? "sweeping every " + config.sweepInterval() : CleanupConfig.CLEAN_SESSIONS + " is off");
    }

    /** The running Streams instance (state, metrics), or null before start. */
    public synchronized KafkaStreams streams() {
        return streams;
    }

    /** Stops the application, committing what it did; waits up to 30 s. */
    public synchronized void stop() {
        if (streams != null) {
            StreamsDefaults.close(streams, Duration.ofSeconds(30));
            streams = null;
            LOG.info("cleanup stopped");
        }
    }

    @Override
    public void close() {
        stop();
    }
}

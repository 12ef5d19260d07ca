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
 * {@code sessions.cleanup.commands} and produces SessionDeletionRequested events on {@code sessions.events}. Every
 * minute it also looks at the assistant conversations due ({@code sessions.view.assistant}, and the log's
 * ComputerStatus events): ConversationDeletionRequested for idle chats, routines and node conversations, answered ask
 * lines and drops asked again, and TurnEnded for asks that never reported back ({@link ConversationSweepPlanner}).
 *
 * <p>Life cycle: {@link #start()} runs the Streams application until {@link #stop()}; startable alone against
 * any bootstrap servers, or with the other services by the local launcher. Several instances share the
 * accounts by partition.
 */
public final class CleanupService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CleanupService.class);

    /** The Streams application id (its consumer group and the prefix of its internal topics). */
    public static final String APPLICATION_ID = "ensemble-cleanup";

    private final String bootstrapServers;
    private final Path stateDir;
    private final int replicationFactor;
    private final Map<String, ?> overrides;
    private final CleanupConfig config;
    private KafkaStreams streams;
    private dev.ensemble.sessions.schema.Generation generation;
    private dev.ensemble.sessions.schema.Generations.Watcher watcher;
    private io.micrometer.core.instrument.MeterRegistry meters = dev.ensemble.sessions.streams.ServiceMeters.NONE;
    private dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding metrics =
            new dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding(meters, "cleanup");

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
        this.bootstrapServers = bootstrapServers;
        this.stateDir = stateDir;
        this.replicationFactor = replicationFactor;
        this.overrides = overrides;
    }

    /**
     * The registry its Kafka Streams metrics ({@code service="cleanup"}) and its sweeps' deletion requests
     * ({@link SweepProcessor#REQUESTS}) go to (docs/operations.md "Metrics"); before {@link #start()}. Without it nothing
     * is counted.
     */
    public synchronized CleanupService withMeters(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.orNone(registry);
        this.metrics = new dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding(meters, "cleanup");
        return this;
    }

    private KafkaStreams newStreams(dev.ensemble.sessions.schema.Generation g) {
        return new KafkaStreams(CleanupTopology.build(config, false, g), dev.ensemble.sessions.streams.ServiceMeters.withRegistry(
                StreamsDefaults.properties(g.applicationId(APPLICATION_ID), bootstrapServers, stateDir, replicationFactor, overrides), meters));
    }

    /**
     * Starts the application (non-blocking) on the serving projector generation's retirement view, and follows each
     * change of the serving generation ({@link dev.ensemble.sessions.schema.Generations}).
     */
    public synchronized void start() {
        if (streams != null) {
            return;
        }
        generation = dev.ensemble.sessions.schema.Generations.serving(bootstrapServers, dev.ensemble.sessions.schema.KafkaClients.connection(overrides));
        streams = newStreams(generation);
        StreamsDefaults.start(streams, "cleanup");
        metrics.follow(streams);
        LOG.info("cleanup started ({}, {} → {}): {}; conversations every {}", generation.view(Topics.RETIREMENT_VIEW).name(),
                generation.view(Topics.ASSISTANT_VIEW).name(), Topics.EVENTS.name(),
                config.cleanSessions() ? "sweeping every " + config.sweepInterval() : CleanupConfig.CLEAN_SESSIONS + " is off",
                config.conversationTick());
        watcher = new dev.ensemble.sessions.schema.Generations.Watcher(bootstrapServers, dev.ensemble.sessions.schema.KafkaClients.connection(overrides), "cleanup",
                records -> switchTo(dev.ensemble.sessions.schema.Generations.parse(records.get(dev.ensemble.sessions.schema.Generations.SERVING))));
    }

    /**
     * Sweeps on generation {@code g}'s retirement view from now on: the old application stops (so no two sweep at
     * once), the new one (application {@code ensemble-cleanup-g<n>}) takes over the old one's place in
     * {@code sessions.cleanup.commands}, loads the new views and sweeps; the old one's group, topics and state are
     * removed. The new generation has caught up when it starts serving, so the gap is the restart's few seconds.
     */
    private synchronized void switchTo(dev.ensemble.sessions.schema.Generation g) {
        if (streams == null || g.equals(generation)) {
            return;
        }
        String oldApp = generation.applicationId(APPLICATION_ID);
        String newApp = g.applicationId(APPLICATION_ID);
        StreamsDefaults.close(streams, Duration.ofSeconds(30));
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, dev.ensemble.sessions.schema.KafkaClients.connection(overrides)))) {
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> commands = new java.util.HashMap<>();
            admin.listConsumerGroupOffsets(oldApp).partitionsToOffsetAndMetadata().get().forEach((tp, o) -> {
                if (tp.topic().equals(Topics.CLEANUP_COMMANDS.name()) && o != null) {
                    commands.put(tp, new org.apache.kafka.clients.consumer.OffsetAndMetadata(o.offset()));
                }
            });
            if (!commands.isEmpty()) {
                admin.alterConsumerGroupOffsets(newApp, commands).all().get();
            }
        } catch (Exception e) {
            LOG.warn("cleanup: could not carry its place in {} over to {} ({}); it reads the commands kept", Topics.CLEANUP_COMMANDS.name(), newApp, e.toString());
        }
        dev.ensemble.sessions.streams.GenerationApps.remove(bootstrapServers, dev.ensemble.sessions.schema.KafkaClients.connection(overrides), stateDir, oldApp, APPLICATION_ID);
        generation = g;
        streams = newStreams(g);
        StreamsDefaults.start(streams, "cleanup");
        metrics.follow(streams);
        LOG.info("cleanup: sweeping on projector generation {} ({})", g, g.view(Topics.RETIREMENT_VIEW).name());
        dev.ensemble.sessions.schema.Generations.acknowledge(bootstrapServers, dev.ensemble.sessions.schema.KafkaClients.connection(overrides), "cleanup", g);
    }

    /** The running Streams instance (state, metrics), or null before start. */
    public synchronized KafkaStreams streams() {
        return streams;
    }

    /** Stops the application, committing what it did; waits up to 30 s. */
    public void stop() {
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
        stopStreams();
    }

    private synchronized void stopStreams() {
        if (streams != null) {
            metrics.close();
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

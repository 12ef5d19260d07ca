package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The projector in generations (blue/green rebuild, DESIGN.md §4; docs/operations.md "Generations"): runs the serving
 * generation's {@link Projector}, and when a rebuild asks for the next generation ({@link Generations#BUILDING} in
 * {@code sessions.generations}, written by {@code rebuild}), builds it beside the serving one without stopping it:
 * <ol>
 *   <li>creates the new generation's view topics and starts its projector (application {@code ensemble-projector-g<n>}),
 *       which replays {@code sessions.events} from the beginning, appending no decision (the markers name another
 *       generation);</li>
 *   <li>waits until it has caught up (its committed offsets on {@code sessions.events} reach the log's end) and its views
 *       are published (their topics' ends stay still for 3 s);</li>
 *   <li>hands over ({@link Generations#handOver}): a marker on every partition of the log, after which only the new
 *       generation appends decisions, and {@code serving} = n; readers (gateway, choice service, cleanup) switch when
 *       their copy of the new views has caught up, and acknowledge;</li>
 *   <li>once the readers it waits for acknowledged (or after {@link #READERS_TIMEOUT}), stops the old generation's
 *       projector and removes its local state, its consumer group, its internal topics and its view topics.</li>
 * </ol>
 * The old generation serves throughout; a failure before the hand-over leaves it serving (the new generation's remains
 * are removed at the next attempt).
 */
public final class ProjectorGenerations implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProjectorGenerations.class);
    /** The longest the readers may take to switch before the old generation is removed anyway. */
    static final Duration READERS_TIMEOUT = Duration.ofMinutes(5);
    /** The longest a new generation may take to replay the log. */
    static final Duration REPLAY_TIMEOUT = Duration.ofHours(6);

    private final String bootstrapServers;
    private final Path stateDir;
    private final int replicationFactor;
    private final Map<String, ?> overrides;
    private final RetirementRules.Config rules;
    private final List<String> readers;
    private final Consumer<String> progress;
    private volatile Projector serving;
    private Generations.Watcher watcher;
    private Thread building;
    private volatile boolean closed;

    /**
     * @param stateDir the Streams state folder (each generation's stores live under its application id)
     * @param readers  the readers whose acknowledgement ({@link Generations#acknowledge}) the removal of an old
     *                 generation waits for, e.g. gateway, choice, cleanup
     * @param progress gets a line at each step of a rebuild
     */
    public ProjectorGenerations(String bootstrapServers, Path stateDir, int replicationFactor, Map<String, ?> overrides,
                                RetirementRules.Config rules, List<String> readers, Consumer<String> progress) {
        this.bootstrapServers = bootstrapServers;
        this.stateDir = stateDir;
        this.replicationFactor = replicationFactor;
        this.overrides = overrides;
        this.rules = rules;
        this.readers = List.copyOf(readers);
        this.progress = progress;
    }

    /** Starts the serving generation's projector and watches for rebuilds. */
    public synchronized ProjectorGenerations start() {
        Generation g = Generations.serving(bootstrapServers, client());
        ensureViews(g);
        serving = new Projector(bootstrapServers, stateDir, replicationFactor, overrides, rules, g);
        serving.start();
        watcher = new Generations.Watcher(bootstrapServers, client(), "projector", records -> {
            String b = records.get(Generations.BUILDING);
            if (b != null) {
                startBuilding(Generations.parse(b));
            }
        });
        return this;
    }

    /** The cluster's client properties (security settings) among the Streams overrides. */
    private Map<String, Object> client() {
        return dev.ensemble.sessions.schema.KafkaClients.connection(overrides);
    }

    /** The serving generation's projector. */
    public Projector serving() {
        return serving;
    }

    private synchronized void startBuilding(Generation next) {
        if (closed || (building != null && building.isAlive()) || !next.equals(serving.generation().next())) {
            return;
        }
        building = new Thread(() -> {
            try {
                build(next);
            } catch (Exception e) {
                LOG.error("rebuild of projector generation {} failed; generation {} keeps serving", next, serving.generation(), e);
                progress.accept("rebuild failed: " + e.getMessage() + "; generation " + serving.generation() + " keeps serving");
            }
        }, "projector-rebuild-" + next);
        building.setDaemon(true);
        building.start();
    }

    /** Steps 1–4 of the class comment. */
    void build(Generation next) throws Exception {
        Projector old = serving;
        try (Admin admin = Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, client()))) {
            remove(admin, next, null); // what an earlier, failed attempt left
            ensureViews(next);
            Projector fresh = new Projector(bootstrapServers, stateDir, replicationFactor, overrides, rules, next);
            progress.accept("generation " + next + ": replaying " + Topics.EVENTS.name() + " beside generation " + old.generation());
            fresh.start();
            try {
                awaitCaughtUp(admin, next.applicationId(Projector.APPLICATION_ID), REPLAY_TIMEOUT);
                awaitViewsSettled(admin, next, Duration.ofSeconds(3), Duration.ofMinutes(10));
            } catch (Exception e) {
                fresh.stop();
                throw e;
            }
            if (closed) {
                fresh.stop();
                return;
            }
            progress.accept("generation " + next + ": caught up; handing over");
            Generations.handOver(bootstrapServers, client(), next);
            serving = fresh;
            try {
                awaitReaders(next, READERS_TIMEOUT);
            } finally {
                old.stop(); // it appends nothing after the marker; it may stop at once
            }
            remove(admin, old.generation(), old);
            progress.accept("generation " + next + " serves; generation " + old.generation() + " removed");
        }
    }

    private void ensureViews(Generation g) {
        try (Admin admin = Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, client()))) {
            TopicAdmin.ensureTopics(admin, g.views(), TopicAdmin.partitions(admin, Topics.EVENTS.name()).size(), (short) replicationFactor);
        } catch (ExecutionException | InterruptedException e) {
            throw new IllegalStateException("could not create the views of generation " + g + ": " + e, e);
        }
    }

    private void awaitReaders(Generation g, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<String, String> records = Generations.read(bootstrapServers, client());
            List<String> behind = readers.stream()
                    .filter(r -> !Integer.toString(g.number()).equals(records.get(Generations.readerKey(r)))).toList();
            if (behind.isEmpty()) {
                return;
            }
            if (System.nanoTime() > until) {
                LOG.warn("readers {} did not switch to generation {} within {}; removing the old generation anyway", behind, g, timeout);
                return;
            }
            Thread.sleep(200);
        }
    }

    /**
     * Removes generation {@code g}: its local state ({@code stopped}'s, or a fresh instance's when null), its consumer
     * group, its internal topics ({@code <application id>-...-changelog}) and its view topics.
     */
    void remove(Admin admin, Generation g, Projector stopped) throws InterruptedException {
        String app = g.applicationId(Projector.APPLICATION_ID);
        try (KafkaStreams s = new KafkaStreams(Projector.buildTopology(rules, false, g),
                dev.ensemble.sessions.streams.StreamsDefaults.properties(app, bootstrapServers, stateDir, replicationFactor, overrides))) {
            s.cleanUp();
        }
        deleteTree(stateDir.resolve(app)); // cleanUp keeps the folder when a store's files outlive it
        try {
            try {
                admin.deleteConsumerGroups(List.of(app)).all().get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) {
                    throw e;
                }
            }
            Pattern otherGeneration = Pattern.compile(Pattern.quote(Projector.APPLICATION_ID) + "-g\\d+-.*");
            List<String> topics = new ArrayList<>();
            for (String t : admin.listTopics().names().get()) {
                boolean internal = t.startsWith(app + "-") && (t.endsWith("-changelog") || t.endsWith("-repartition"))
                        && (g.number() != 1 || !otherGeneration.matcher(t).matches());
                boolean view = g.number() != 1 && g.views().stream().anyMatch(v -> v.name().equals(t));
                if (internal || view) {
                    topics.add(t);
                }
            }
            if (g.number() == 1) {
                // generation 1's views have the plain names: they go too once another generation serves
                if (!serving.generation().equals(g)) {
                    Generation.FIRST.views().forEach(v -> topics.add(v.name()));
                }
            }
            if (!topics.isEmpty()) {
                admin.deleteTopics(topics).all().get();
                LOG.info("removed generation {}'s topics {}", g, topics);
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not remove generation " + g + ": " + e.getCause(), e.getCause());
        }
    }

    private static void awaitCaughtUp(Admin admin, String group, Duration timeout) throws Exception {
        List<TopicPartition> parts = TopicAdmin.partitions(admin, Topics.EVENTS.name());
        Map<TopicPartition, Long> end = TopicAdmin.offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
        long until = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            if (parts.stream().allMatch(tp -> end.get(tp) == 0 || (committed.get(tp) != null && committed.get(tp).offset() >= end.get(tp)))) {
                return;
            }
            if (System.nanoTime() > until) {
                throw new IllegalStateException(group + " did not catch up with " + Topics.EVENTS.name() + " within " + timeout);
            }
            Thread.sleep(200);
        }
    }

    private static void awaitViewsSettled(Admin admin, Generation g, Duration quiet, Duration timeout) throws Exception {
        List<TopicPartition> parts = new ArrayList<>();
        for (var t : g.views()) {
            parts.addAll(TopicAdmin.partitions(admin, t.name()));
        }
        long until = System.nanoTime() + timeout.toNanos();
        Map<TopicPartition, Long> last = TopicAdmin.offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
        long stableSince = System.nanoTime();
        while (System.nanoTime() - stableSince < quiet.toNanos()) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("the views of generation " + g + " did not settle within " + timeout);
            }
            Thread.sleep(250);
            Map<TopicPartition, Long> now = TopicAdmin.offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
            if (!now.equals(last)) {
                last = now;
                stableSince = System.nanoTime();
            }
        }
    }

    private static void deleteTree(Path dir) {
        if (!java.nio.file.Files.exists(dir)) {
            return;
        }
        try (var files = java.nio.file.Files.walk(dir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.deleteIfExists(p);
            }
        } catch (java.io.IOException e) {
            LOG.warn("could not remove {}: {}", dir, e.toString());
        }
    }

    /** Stops the projectors (a rebuild under way is abandoned: the serving generation stays). */
    @Override
    public void close() {
        closed = true;
        if (watcher != null) {
            watcher.close();
        }
        Thread b;
        synchronized (this) {
            b = building;
        }
        if (b != null) {
            b.interrupt();
            try {
                b.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Projector p = serving;
        if (p != null) {
            p.stop();
        }
    }
}

package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.GenerationApps;
import dev.ensemble.sessions.streams.ViewCatchUp;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * The projector in generations (blue/green rebuild, DESIGN.md §4; docs/operations.md "Generations"): runs the serving
 * generation's {@link Projector}, and when a rebuild asks for the next generation ({@link Generations#BUILDING} in
 * {@code sessions.generations}, written by {@code rebuild}), builds it beside the serving one without stopping it:
 * <ol>
 *   <li>creates the new generation's view topics and starts its projector (application {@code ensemble-projector-g<n>}),
 *       which replays {@code sessions.events} from the beginning, appending no decision (the markers name another
 *       generation);</li>
 *   <li>waits until it has caught up (its committed offsets on {@code sessions.events} reach the log's end), its views
 *       are published (its marks of views to publish drained), and it has caught up again with the log's ends read
 *       after that;</li>
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
    /** The longest a new generation that replayed the log may take to publish its views. */
    static final Duration PUBLICATION_TIMEOUT = Duration.ofMinutes(10);

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

    private io.micrometer.core.instrument.MeterRegistry meters;

    /** The registry each generation's projector counts into ({@link Projector#withMeters}); before {@link #start()}. */
    public synchronized ProjectorGenerations withMeters(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meters = registry;
        return this;
    }

    /** Starts the serving generation's projector and watches for rebuilds. */
    public synchronized ProjectorGenerations start() {
        Generation g = Generations.serving(bootstrapServers, client());
        try (Admin admin = Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, client()))) {
            ensureViews(admin, g);
        }
        serving = new Projector(bootstrapServers, stateDir, replicationFactor, overrides, rules, g).withMeters(meters);
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
                progress.accept("rebuild failed: " + e + "; generation " + serving.generation() + " keeps serving");
            }
        }, "projector-rebuild-" + next);
        building.setDaemon(true);
        building.start();
    }

    /** Steps 1–4 of the class comment. */
    void build(Generation next) throws Exception {
        Projector old = serving;
        try (Admin admin = Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, client()))) {
            remove(admin, next); // what an earlier, failed attempt left
            ensureViews(admin, next);
            Projector fresh = new Projector(bootstrapServers, stateDir, replicationFactor, overrides, rules, next).withMeters(meters);
            progress.accept("generation " + next + ": replaying " + Topics.EVENTS.name() + " beside generation " + old.generation());
            fresh.start();
            try {
                awaitReplayed(fresh);
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
                old.stop(); // it appends nothing after the markers; it serves the readers until they switched (or the wait ran out)
            }
            remove(admin, old.generation());
            progress.accept("generation " + next + " serves; generation " + old.generation() + " removed");
        }
    }

    /**
     * Waits until {@code fresh} has replayed the log and published its views: its committed offsets reach the log's ends
     * ({@link ViewCatchUp}, which also fails at once when the instance stopped or failed), then its marks of views to
     * publish are drained (while it was behind it published at most every 30 s, {@link CatchUp}), then it has caught
     * up once more, with ends read after that: so the transaction that published the last marks has committed when
     * the log kept growing meanwhile. No quiet on the view topics is asked for: under steady traffic there is none.
     */
    private void awaitReplayed(Projector fresh) throws Exception {
        String app = fresh.generation().applicationId(Projector.APPLICATION_ID);
        List<String> log = List.of(Topics.EVENTS.name());
        ViewCatchUp.await(bootstrapServers, client(), fresh.streams(), app, log, REPLAY_TIMEOUT);
        long until = System.nanoTime() + PUBLICATION_TIMEOUT.toNanos();
        while (fresh.publicationPending()) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException(app + " did not publish its views within " + PUBLICATION_TIMEOUT);
            }
            Thread.sleep(100);
        }
        ViewCatchUp.await(bootstrapServers, client(), fresh.streams(), app, log, PUBLICATION_TIMEOUT);
    }

    private void ensureViews(Admin admin, Generation g) {
        try {
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
     * Removes generation {@code g} once its projector is stopped: its consumer group, its internal topics and its local
     * state ({@link GenerationApps#remove}), and its view topics (generation 1's plain-named ones only when another
     * generation serves).
     */
    void remove(Admin admin, Generation g) throws InterruptedException {
        String app = g.applicationId(Projector.APPLICATION_ID);
        if (!GenerationApps.remove(bootstrapServers, client(), stateDir, app, Projector.APPLICATION_ID)) {
            throw new IllegalStateException("could not remove generation " + g + "'s application " + app + " (logged above)");
        }
        List<String> views = new ArrayList<>();
        if (g.number() != 1 || !serving.generation().equals(g)) {
            g.views().forEach(v -> views.add(v.name()));
        }
        try {
            Set<String> existing = admin.listTopics().names().get();
            views.retainAll(existing);
            if (!views.isEmpty()) {
                admin.deleteTopics(views).all().get();
                LOG.info("removed generation {}'s view topics {}", g, views);
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not remove generation " + g + "'s view topics: " + e.getCause(), e.getCause());
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

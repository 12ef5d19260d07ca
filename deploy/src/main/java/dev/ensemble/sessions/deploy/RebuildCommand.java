package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.projector.ProjectorRebuild;
import dev.ensemble.sessions.projector.RetirementRules;
import dev.ensemble.sessions.schema.KafkaClients;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions rebuild [--data-dir DIR]}. While {@code up} serves (the data folder's broker is in use, or the
 * serving projector generation's group has members on {@code --bootstrap-servers}): a blue/green rebuild
 * (docs/operations.md "Generations"): it records the next generation as {@code building} in {@code sessions.generations}
 * and follows the running system building it beside the serving one, handing over, and removing the old one; the API
 * answers throughout. With the system stopped: rebuilds every view of the serving generation's projector in place by
 * replaying the log (DESIGN.md §1): starts the data folder's broker (its lock refuses while {@code up} runs), resets the
 * projector with Kafka's tools ({@link ProjectorRebuild#reset}: the application reset tool for the group's offsets and
 * the internal topics, {@code KafkaStreams.cleanUp()} for the state folder), and runs the projector (Kafka Streams, its
 * own topology) until it has processed every event and published the last views. Killed half-way, running the command
 * again starts over; running {@code up} instead goes on from where the replay was.
 */
@Command(name = "rebuild", mixinStandardHelpOptions = true,
        description = "Rebuild the projector's views by replaying the event log: beside the serving projector while up runs "
                + "(blue/green), in place when the system is stopped.")
final class RebuildCommand implements Callable<Integer> {
    @Option(names = "--data-dir", description = "the system's data folder (default ~/.ensemble-sessions)")
    Path dataDir;

    @Option(names = "--kafka-port", defaultValue = "9092", description = "the embedded broker's port (default ${DEFAULT-VALUE})")
    int kafkaPort;

    @picocli.CommandLine.Mixin
    ClusterOptions cluster = new ClusterOptions();

    @Option(names = "--replication-factor", defaultValue = "1", description = "of the internal topics it recreates (default ${DEFAULT-VALUE})")
    int replicationFactor;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--completed-window-days", defaultValue = "7", description = "as given to up: a done or dropped task's session is "
            + "cleaned up after this many days (the retirement views depend on it; default ${DEFAULT-VALUE})")
    int completedWindowDays;

    PrintStream out = System.out;

    /** How long a rebuild waits for a killed projector's membership to expire (the broker's session timeout is 45 s). */
    static final Duration MEMBERS_LEAVE = Duration.ofSeconds(60);

    /** What a rebuild did: events replayed, and how long it took (reset excluded; to the last view published). */
    record Result(long events, Duration elapsed) {
        double eventsPerSecond() {
            return events / Math.max(1e-9, elapsed.toNanos() / 1e9);
        }
    }

    @Override
    public Integer call() throws Exception {
        CommandChecks.requireWindow(spec, completedWindowDays);
        CommandChecks.requirePort(spec, "--kafka-port", kafkaPort);
        CommandChecks.requireAtLeast(spec, "--replication-factor", replicationFactor, 1);
        Map<String, Object> security = cluster.clientProperties();
        cluster.requireReachable(security); // a cluster of one's own that does not answer: one line, before anything changes
        DataDir data = DataDir.of(dataDir);
        LocalKafka kafka = null;
        data.requireNotAFile();
        if (cluster.bootstrapServers == null && !java.nio.file.Files.isDirectory(data.root().resolve("kafka"))) {
            // nothing to rebuild, and a mistyped path should not leave a new data folder behind
            out.println("No event log in " + data.root() + " (no kafka folder there): nothing to rebuild. "
                    + "Give the data folder that up uses (--data-dir), or start the system with up first.");
            return 1;
        }
        data.createPrivate();
        try {
            String bootstrap = cluster.bootstrapServers;
            if (bootstrap == null) {
                try {
                    kafka = LocalKafka.start(data.root(), kafkaPort);
                } catch (LocalKafka.InUse e) {
                    // up runs on this data folder: rebuild beside it
                    DataDir.Cluster running = data.runningCluster();
                    return blueGreen(running.bootstrapServers(), running.clientProperties(), out, BLUE_GREEN_TIMEOUT);
                }
                kafka.waitUntilReady(Duration.ofSeconds(60));
                bootstrap = kafka.bootstrapServers();
                security = kafka.clientProperties();
            } else if (serving(bootstrap, security)) {
                return blueGreen(bootstrap, security, out, BLUE_GREEN_TIMEOUT);
            }
            Result r = rebuild(bootstrap, data.state("projector"), replicationFactor, security,
                    RetirementRules.Config.defaults().withCompletedWindow(Duration.ofDays(completedWindowDays)), true);
            out.printf(Locale.ROOT, "Rebuilt the views from %,d events in %.1f s (%,.0f events/s, replayed by the projector)%n",
                    r.events(), r.elapsed().toNanos() / 1e9, r.eventsPerSecond());
            return 0;
        } finally {
            if (kafka != null) kafka.close();
        }
    }

    /** The longest a blue/green rebuild is followed. */
    static final Duration BLUE_GREEN_TIMEOUT = Duration.ofHours(6);

    /** Whether the serving generation's projector runs (its consumer group has members). */
    static boolean serving(String bootstrap, Map<String, ?> security) throws Exception {
        String group = Generations.serving(bootstrap, security).applicationId(Projector.APPLICATION_ID);
        try (Admin admin = Admin.create(KafkaClients.config(bootstrap, security))) {
            return !admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get().members().isEmpty();
        } catch (java.util.concurrent.ExecutionException e) {
            return false;
        }
    }

    /**
     * One entry of the generations' state as a person reads it: {@code building} → "generation g2 is being built
     * (replaying the log)", {@code serving} → "generation g2 serves the views", {@code reader/choice} → "the choice
     * service reads generation g2"; another key as {@code key = value}.
     */
    static String progress(String key, String value) {
        String generation = "g" + value;
        if (key.equals(Generations.BUILDING)) {
            return "generation " + generation + " is being built (replaying the log)";
        }
        if (key.equals(Generations.SERVING)) {
            return "generation " + generation + " serves the views";
        }
        if (key.startsWith(Generations.readerKey(""))) {
            return "the " + key.substring(Generations.readerKey("").length()) + " service reads generation " + generation;
        }
        return key + " = " + value;
    }

    /**
     * Asks the running system for the next generation ({@link Generations#markBuilding}) and prints its progress until it
     * serves and the readers answer from it (0), or {@code timeout} (1).
     */
    static int blueGreen(String bootstrap, Map<String, ?> security, PrintStream out, Duration timeout) throws InterruptedException {
        Generation old = Generations.serving(bootstrap, security);
        Generation next = old.next();
        out.println("up is running: building projector generation " + next + " beside generation " + old
                + " (the API keeps answering from " + old + " until " + next + " has caught up)");
        Generations.markBuilding(bootstrap, security, next);
        Map<String, String> seen = Map.of();
        long until = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < until) {
            Map<String, String> now = Generations.read(bootstrap, security);
            for (var e : new java.util.TreeMap<>(now).entrySet()) {
                if (!e.getValue().equals(seen.get(e.getKey()))) {
                    out.println("  " + progress(e.getKey(), e.getValue()));
                }
            }
            seen = now;
            String number = Integer.toString(next.number());
            if (number.equals(now.get(Generations.SERVING))
                    && UpCommand.GENERATION_READERS.stream().allMatch(r -> number.equals(now.get(Generations.readerKey(r))))) {
                out.println("Projector generation " + next + " serves; generation " + old + " is being removed.");
                return 0;
            }
            Thread.sleep(500);
        }
        out.println("Generation " + next + " did not take over within " + timeout + "; generation " + old + " still serves (see up's output).");
        return 1;
    }

    /**
     * Resets the projector ({@link ProjectorRebuild#reset}) and replays the log with the projector itself, until its
     * committed offsets reach the log's end and the last view it changed is published. A progress bar on stderr when
     * {@code progress}. {@code overrides} are the projector's Streams settings, the cluster's client properties among
     * them (its other clients take those: {@link KafkaClients#connection}).
     */
    static Result rebuild(String bootstrap, Path stateDir, int replicationFactor, Map<String, ?> overrides, RetirementRules.Config rules,
                          boolean progress) throws InterruptedException {
        Map<String, Object> security = KafkaClients.connection(overrides);
        Generation g = Generations.serving(bootstrap, security);
        long total = ProjectorRebuild.reset(bootstrap, security, stateDir, MEMBERS_LEAVE, System.err::println, g);
        try (Admin admin = Admin.create(KafkaClients.config(bootstrap, security))) {
            long start = System.nanoTime();
            ProgressBar bar = progress && total > 0 ? bar(total) : null;
            try (Projector projector = new Projector(bootstrap, stateDir, replicationFactor, overrides, rules, g)) {
                projector.start();
                boolean done = ProjectorRebuild.awaitCaughtUp(admin, g.applicationId(Projector.APPLICATION_ID), Duration.ofMillis(200), Duration.ofHours(6), n -> {
                    if (bar != null) bar.stepTo(n);
                });
                if (!done) throw new IllegalStateException("the replay did not finish within 6 hours");
                long[] lastView = new long[1];
                if (!ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofMinutes(5), t -> lastView[0] = t, g)) {
                    throw new IllegalStateException("the views were still being published 5 minutes after the replay");
                }
                // done when every event is processed and the last view it changed is published
                return new Result(total, Duration.ofNanos(lastView[0] - start));
            } finally {
                if (bar != null) bar.close();
            }
        }
    }

    private static ProgressBar bar(long total) {
        return new ProgressBarBuilder().setTaskName("Replaying").setInitialMax(total).setUnit(" events", 1)
                .setStyle(ProgressBarStyle.ASCII).setConsumer(new ConsoleProgressBarConsumer(System.err)).build();
    }
}

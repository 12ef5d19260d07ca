package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.projector.ProjectorRebuild;
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
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions rebuild [--data-dir DIR]}: with the system stopped, rebuilds every view of the projector by
 * replaying the log (DESIGN.md §1): starts the data folder's broker (its lock refuses while {@code up} runs), resets the
 * projector ({@link ProjectorRebuild#reset}: state folder, group offsets, internal topics), runs it until it has
 * processed every event and published the last views, and stops. Killed half-way, running the command again starts
 * over; running {@code up} instead goes on from where the replay was.
 */
@Command(name = "rebuild", mixinStandardHelpOptions = true,
        description = "With the system stopped, rebuild the projector's views by replaying the event log.")
final class RebuildCommand implements Callable<Integer> {
    @Option(names = "--data-dir", description = "the system's data folder (default ~/.ensemble-sessions)")
    Path dataDir;

    @Option(names = "--kafka-port", defaultValue = "9092", description = "the embedded broker's port (default ${DEFAULT-VALUE})")
    int kafkaPort;

    @Option(names = "--bootstrap-servers", description = "rebuild against this Kafka cluster instead of the data folder's broker (stop every projector instance first)")
    String bootstrapServers;

    @Option(names = "--replication-factor", defaultValue = "1", description = "of the internal topics it recreates (default ${DEFAULT-VALUE})")
    int replicationFactor;

    PrintStream out = System.out;

    /** What a rebuild did: events replayed and how long it took (reset excluded). */
    record Result(long events, Duration elapsed) {
        double eventsPerSecond() {
            return events / Math.max(1e-9, elapsed.toNanos() / 1e9);
        }
    }

    @Override
    public Integer call() throws Exception {
        DataDir data = DataDir.of(dataDir);
        LocalKafka kafka = null;
        data.createPrivate();
        try {
            String bootstrap = bootstrapServers;
            if (bootstrap == null) {
                kafka = LocalKafka.start(data.root(), kafkaPort);
                kafka.waitUntilReady(Duration.ofSeconds(60));
                bootstrap = kafka.bootstrapServers();
            }
            Result r = rebuild(bootstrap, data.state("projector"), replicationFactor, Map.of(), true);
            out.printf(Locale.ROOT, "Rebuilt the views from %,d events in %.1f s (%,.0f events/s)%n", r.events(),
                    r.elapsed().toNanos() / 1e9, r.eventsPerSecond());
            return 0;
        } finally {
            if (kafka != null) kafka.close();
        }
    }

    /** Resets the projector and replays the log with it; a progress bar on stderr when {@code progress}. */
    static Result rebuild(String bootstrap, Path stateDir, int replicationFactor, Map<String, ?> overrides, boolean progress)
            throws InterruptedException {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            long total = ProjectorRebuild.reset(admin, stateDir, Duration.ofSeconds(60));
            long start = System.nanoTime();
            ProgressBar bar = progress && total > 0 ? new ProgressBarBuilder().setTaskName("Replaying").setInitialMax(total)
                    .setUnit(" events", 1).setStyle(ProgressBarStyle.ASCII).setConsumer(new ConsoleProgressBarConsumer(System.err)).build() : null;
            try (Projector projector = new Projector(bootstrap, stateDir, replicationFactor, overrides)) {
                projector.start();
                boolean done = ProjectorRebuild.awaitCaughtUp(admin, Duration.ofHours(6), n -> {
                    if (bar != null) bar.stepTo(n);
                });
                if (!done) throw new IllegalStateException("the replay did not finish within 6 hours");
                long[] lastView = new long[1];
                if (!ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofMinutes(5), t -> lastView[0] = t)) {
                    throw new IllegalStateException("the views were still being published 5 minutes after the replay");
                }
                // done when every event is processed and the last view it changed is published
                return new Result(total, Duration.ofNanos(lastView[0] - start));
            } finally {
                if (bar != null) bar.close();
            }
        }
    }
}

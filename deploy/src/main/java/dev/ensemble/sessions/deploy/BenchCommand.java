package dev.ensemble.sessions.deploy;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import static dev.ensemble.sessions.deploy.CommandChecks.require;

/** {@code ensemble-sessions bench}: the projector's throughput and lag on a fresh embedded broker. */
@Command(name = "bench", mixinStandardHelpOptions = true, subcommands = {ImportBench.class, SessionsBench.class},
        description = "Replays synthetic runs and engine events through a fresh embedded broker and the projector "
                + "(exactly-once on) and prints sustained events/s and end-to-end lag.")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--events", defaultValue = "1000000", description = "events to replay (default ${DEFAULT-VALUE})")
    int events;

    @Option(names = "--accounts", defaultValue = "2000", description = "accounts they spread over (default ${DEFAULT-VALUE})")
    int accounts;

    @Option(names = "--warmup-events", defaultValue = "100000", description = "events processed before the measurement starts, so the figures are of compiled code; the JIT compilers' time during the measurement is printed (default ${DEFAULT-VALUE}; 0 measures a cold start)")
    int warmupEvents;

    @Option(names = "--partitions", defaultValue = "2", description = "partitions of the event log (default ${DEFAULT-VALUE})")
    int partitions;

    @Option(names = "--set", description = "a Kafka Streams setting for the projector, key=value (repeatable), e.g. commit.interval.ms=1000")
    java.util.Map<String, String> settings = new java.util.HashMap<>();

    @Option(names = "--recalibrate-decisions", defaultValue = "100000", description = "synthetic recorded decisions to recalibrate after the rebuild (default ${DEFAULT-VALUE}); 0 skips the replay benchmarks")
    int recalibrateDecisions;

    @Option(names = "--ceiling", description = "also run three reference topologies that do far less than the projector (decode; decode and forward; decode and one store entry per event) over the same log, broker and settings, as a yardstick")
    boolean ceiling;

    @Option(names = "--replay-only", description = "skip the projector's measurement: append the same log (warm-up and measured "
            + "events) and run only the replay benchmarks, in a JVM that has not run the projector yet (as the rebuild command does)")
    boolean replayOnly;

    @Option(names = "--restore", description = "after the projector's measurement, time its stores' restore from their "
            + "changelogs into an empty state folder (an instance that lost its disk)")
    boolean restore;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandChecks.requireAtLeast(spec, "--events", events, 1);
        CommandChecks.requireAtLeast(spec, "--warmup-events", warmupEvents, 0);
        CommandChecks.requireAtLeast(spec, "--accounts", accounts, 1);
        CommandChecks.requireAtLeast(spec, "--partitions", partitions, 1);
        require(spec, !(replayOnly && restore), "--restore times the projector's restore: it cannot go with --replay-only");
        require(spec, !replayOnly || recalibrateDecisions > 0, "--recalibrate-decisions must be 1 or more with --replay-only (which runs the replay benchmarks)");
        CommandChecks.requireAtLeast(spec, "--recalibrate-decisions", recalibrateDecisions, 0);
        for (String key : settings.keySet()) {
            require(spec, isStreamsSetting(key), "--set " + key + ": not a Kafka Streams setting (nor a producer., consumer., "
                    + "main.consumer., restore.consumer., global.consumer., admin. or topic. one)");
        }
        require(spec, (long) events + warmupEvents <= 50_000_000L, "--events plus --warmup-events must be 50,000,000 or fewer (they are held in memory)");
        Path dir = Files.createTempDirectory("ensemble-bench");
        System.out.println("starting a fresh broker in " + dir);
        try (LocalKafka kafka = LocalKafka.start(dir.resolve("kafka"), 0)) {
            kafka.waitUntilReady(java.time.Duration.ofSeconds(60));
            // the Streams settings of every application it runs: --set's, and the broker's client credentials (passed on
            // by the plain clients too: KafkaClients.connection); only --set's are printed
            java.util.Map<String, Object> streamsSettings = new java.util.HashMap<>(settings);
            streamsSettings.putAll(kafka.clientProperties());
            Bench.Result live = null;
            if (replayOnly) {
                Bench.appendOnly(kafka.bootstrapServers(), new Bench.Settings(events, accounts, partitions, streamsSettings,
                        warmupEvents), System.out);
            } else {
                Bench.Result r = live = Bench.run(kafka.bootstrapServers(), dir.resolve("state"),
                        new Bench.Settings(events, accounts, partitions, streamsSettings, warmupEvents), System.out);
                System.out.println();
                System.out.println("projector settings: " + (settings.isEmpty() ? "defaults" : settings));
                System.out.println();
                System.out.println("| events | partitions | seconds | sustained events/s | lag p50 ms | lag p99 ms | lag max ms | view updates |");
                System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
                System.out.printf("| %,d | %d | %.1f | %,.0f | %d | %d | %d | %,d |%n", r.events(), partitions, r.seconds(),
                        r.eventsPerSecond(), r.lagP50Ms(), r.lagP99Ms(), r.lagMaxMs(), r.viewUpdates());
                if (restore) {
                    System.out.println();
                    System.out.printf("the state of %,d events (%,d accounts):%n", (long) events + warmupEvents, accounts);
                    Bench.restore(kafka.bootstrapServers(), dir.resolve("state"), streamsSettings, System.out);
                }
            }
            RebuildCommand.Result rebuilt = null;
            if (recalibrateDecisions > 0) {
                rebuilt = ReplayBench.run(kafka.bootstrapServers(), dir.resolve("state"), streamsSettings, recalibrateDecisions,
                        System.out);
            }
            if (ceiling) {
                System.out.println();
                System.out.println("running the reference topologies over the same log …");
                java.util.List<CeilingBench.Result> rows = CeilingBench.run(kafka.bootstrapServers(), dir.resolve("state"),
                        streamsSettings, System.out);
                if (live != null) {
                    System.out.println();
                    CeilingBench.Result store = rows.get(rows.size() - 1);
                    System.out.println(ratioLine(live.eventsPerSecond(), store.eventsPerSecond()));
                    if (live.streamThreadMicrosPerEvent() > 0 && store.streamThreadMicrosPerEvent() > 0) { // NaN: not measured
                        System.out.println(cpuRatioLine(live.streamThreadMicrosPerEvent(), store.streamThreadMicrosPerEvent()));
                    }
                }
            }
            if (live != null && rebuilt != null) {
                System.out.println(rebuildLine(rebuilt.eventsPerSecond(), live.eventsPerSecond()));
            }
        } finally {
            deleteQuietly(dir);
        }
        return 0;
    }

    /** The line that compares the projector with the "store" reference topology of the same run (issue #15's figure). */
    static String ratioLine(double projector, double store) {
        return String.format(java.util.Locale.ROOT, "ratio: projector %,.0f events/s ÷ store reference %,.0f events/s = %.2f",
                projector, store, projector / store);
    }

    /**
     * The same comparison by the stream thread's CPU per event (the store reference's over the projector's): the work
     * each does per event, which the machine's other load moves far less than the events/s.
     */
    static String cpuRatioLine(double projectorMicros, double storeMicros) {
        return String.format(java.util.Locale.ROOT,
                "CPU ratio: store reference %.1f µs ÷ projector %.1f µs of stream thread CPU per event = %.2f",
                storeMicros, projectorMicros, storeMicros / projectorMicros);
    }

    /** The line that compares the rebuild by Kafka Streams with the live projector of the same run, per event. */
    static String rebuildLine(double rebuild, double live) {
        return String.format(java.util.Locale.ROOT, "rebuild ÷ live: %,.0f ÷ %,.0f events/s = %.2f", rebuild, live, rebuild / live);
    }

    /** A key Kafka Streams knows, or one it passes on to its clients or internal topics by prefix. */
    static boolean isStreamsSetting(String key) {
        if (org.apache.kafka.streams.StreamsConfig.configDef().names().contains(key)) {
            return true;
        }
        for (String prefix : java.util.List.of("producer.", "consumer.", "main.consumer.", "restore.consumer.",
                "global.consumer.", "admin.", "topic.")) {
            if (key.startsWith(prefix) && key.length() > prefix.length()) {
                return true;
            }
        }
        return false;
    }

    static void deleteQuietly(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (Exception e) {
            System.err.println("note: could not remove " + dir + " (" + e.getMessage() + "); it is safe to delete");
        }
    }
}

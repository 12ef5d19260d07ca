package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.TaskFacts;
import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The projector benchmark: replays synthetic runs and engine events through a real broker and the projector
 * (exactly-once v2 on) and prints the sustained events/s and the end-to-end lag (from an event's append to
 * the log until its session's view is committed on the view topic), p50/p99/max.
 *
 * <p>The synthetic history: {@code accounts} accounts, each run a chain step (claim, working, five engine
 * events, done: 8 events), chains of up to 5 runs per session, so a session view never holds more than
 * 5 runs. Events are pre-encoded, so the producer is not the bottleneck.
 */
public final class Bench {
    /**
     * Settings.
     *
     * @param events     how many events to replay
     * @param accounts   how many accounts they spread over
     * @param partitions partitions of the event log
     * @param streamsOverrides Kafka Streams settings for the projector (e.g. commit.interval.ms)
     * @param warmupEvents events appended and processed before the measurement starts (the same synthetic
     *                     history, earlier in it), so that the figures are of a JVM whose code is compiled
     *                     rather than of the JIT compiler; 0 measures from a cold start
     */
    public record Settings(int events, int accounts, int partitions, Map<String, Object> streamsOverrides, int warmupEvents) {
        public Settings(int events, int accounts, int partitions, Map<String, Object> streamsOverrides) {
            this(events, accounts, partitions, streamsOverrides, 0);
        }
    }

    /** What one run measured. */
    public record Result(int events, double seconds, double eventsPerSecond, double produceSeconds,
                         long lagP50Ms, long lagP99Ms, long lagMaxMs, int viewUpdates, double streamThreadMicrosPerEvent) {
    }

    private Bench() {
    }

    /**
     * Appends the benchmark's log (the warm-up's events and the measured ones) without running the projector: for the
     * replay benchmarks alone ({@code bench --replay-only}).
     */
    public static void appendOnly(String bootstrapServers, Settings s, PrintStream out) {
        List<byte[][]> all = prepare(bootstrapServers, s);
        try (KafkaProducer<String, byte[]> producer = appender(bootstrapServers, s)) {
            append(producer, all);
        }
        out.printf("appended %,d events over %,d accounts (the projector did not run)%n", all.size(), s.accounts());
    }

    /** Creates the topics and synthesizes the log: the warm-up's events, then the measured ones. */
    private static List<byte[][]> prepare(String bootstrapServers, Settings s) {
        try (Admin admin = Admin.create(KafkaClients.config(bootstrapServers, KafkaClients.connection(s.streamsOverrides())))) {
            TopicAdmin.ensureTopics(admin, s.partitions(), (short) 1);
        }
        return synthesize(new Settings(s.warmupEvents() + s.events(), s.accounts(), s.partitions(), s.streamsOverrides()));
    }

    /** The producer that appends the synthesized log (batched, lz4, as a busy gateway would). */
    private static KafkaProducer<String, byte[]> appender(String bootstrapServers, Settings s) {
        return new KafkaProducer<>(dev.ensemble.sessions.schema.LogProducers.config(bootstrapServers, "bench-appender",
                KafkaClients.merge(KafkaClients.connection(s.streamsOverrides()),
                        Map.of("linger.ms", 5, "batch.size", 512 * 1024, "compression.type", "lz4"))), new StringSerializer(), new ByteArraySerializer());
    }

    /** Runs the benchmark against {@code bootstrapServers} (a fresh cluster: topics are created). */
    public static Result run(String bootstrapServers, Path stateDir, Settings s, PrintStream out) throws Exception {
        List<byte[][]> all = prepare(bootstrapServers, s);
        List<byte[][]> warmup = all.subList(0, s.warmupEvents());
        List<byte[][]> payload = all.subList(s.warmupEvents(), all.size());
        out.printf("synthesized %,d events (and %,d to warm up) over %,d accounts%n", s.events(), s.warmupEvents(), s.accounts());

        AtomicBoolean done = new AtomicBoolean();
        long[] lags = new long[s.events() * 2];
        AtomicInteger lagCount = new AtomicInteger();
        java.util.concurrent.atomic.AtomicLong measureFrom = new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);
        Thread lagReader = new Thread(() -> readLags(bootstrapServers, KafkaClients.connection(s.streamsOverrides()), done, lags, lagCount, measureFrom), "bench-lag");
        lagReader.start();

        try (Projector projector = new Projector(bootstrapServers, stateDir, 1, s.streamsOverrides())) {
            projector.start();
            while (projector.streams().state() != org.apache.kafka.streams.KafkaStreams.State.RUNNING) {
                Thread.sleep(50);
            }
            long start;
            long compilingBefore;
            StreamThreadCpu.Reading cpuBefore;
            try (KafkaProducer<String, byte[]> producer = appender(bootstrapServers, s)) {
                if (!warmup.isEmpty()) {
                    long w = System.nanoTime();
                    append(producer, warmup);
                    awaitCommitted(bootstrapServers, KafkaClients.connection(s.streamsOverrides()), Duration.ofMinutes(30));
                    out.printf("warmed up on %,d events in %.1f s%n", warmup.size(), (System.nanoTime() - w) / 1e9);
                }
                measureFrom.set(System.currentTimeMillis());
                compilingBefore = compilingMs();
                cpuBefore = StreamThreadCpu.read(projector.streams());
                start = System.nanoTime();
                append(producer, payload);
            }
            double produced = (System.nanoTime() - start) / 1e9;
            out.printf("produced in %.1f s (%,.0f events/s)%n", produced, s.events() / produced);
            awaitCommitted(bootstrapServers, KafkaClients.connection(s.streamsOverrides()), Duration.ofMinutes(10));
            double seconds = (System.nanoTime() - start) / 1e9;
            double cpuPerEvent = StreamThreadCpu.microsPerEvent(cpuBefore, StreamThreadCpu.read(projector.streams()), s.events());
            printCompiling(compilingMs() - compilingBefore, seconds, out);
            printThreadMetrics(projector.streams(), out);
            if (!Double.isNaN(cpuPerEvent)) {
                out.printf(java.util.Locale.ROOT, "stream thread CPU during the measurement: %.1f µs per event%n", cpuPerEvent);
            }
            Thread.sleep(1000);
            done.set(true);
            lagReader.join(10_000);
            int n = lagCount.get();
            long[] sorted = Arrays.copyOf(lags, n);
            Arrays.sort(sorted);
            return new Result(s.events(), seconds, s.events() / seconds, produced,
                    pct(sorted, 0.50), pct(sorted, 0.99), n == 0 ? 0 : sorted[n - 1], n, cpuPerEvent);
        }
    }

    /** The JIT compilers' time so far (ms, all compiler threads together), or -1 where the JVM does not tell it. */
    static long compilingMs() {
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    /**
     * Prints how long the JIT compilers worked during the measurement (all compiler threads, the embedded broker's code
     * included: it runs in this JVM). On 2 cores the compiler threads take CPU from the stream thread, and after a short
     * warm-up the projector's own methods are still among those compiled, so its figure is not yet of compiled code;
     * compare runs by their warm-up (docs/benchmarks.md, "Warm-up and the JIT").
     */
    static void printCompiling(long compilingMs, double seconds, PrintStream out) {
        if (compilingMs >= 0) {
            out.printf("JIT compilers during the measurement: %.1f s of compiling in %.1f s (all compiler threads, the broker's code included)%n",
                    compilingMs / 1e3, seconds);
        }
    }

    /** A restore: how many changelog records the projector's stores were rebuilt from, and how long it took. */
    public record Restore(int changelogs, long changelogRecords, double seconds) {
        public double recordsPerSecond() {
            return changelogRecords / seconds;
        }
    }

    /**
     * The projector's stores restored from their changelogs into an empty state folder, as an instance that lost its
     * disk (or a new pod without a standby) does: {@code stateDir} is emptied, a projector started, and the time taken
     * until Kafka Streams runs (every active task restored; at most 30 minutes, polled every 100 ms). The projector must
     * have been stopped.
     *
     * @return the changelogs' records (last offset minus first: what the restore reads) and the seconds
     */
    public static Restore restore(String bootstrapServers, Path stateDir, Map<String, Object> overrides, PrintStream out) throws Exception {
        BenchCommand.deleteQuietly(stateDir);
        long records = 0;
        int changelogs;
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
                KafkaClients.config(bootstrapServers, KafkaClients.connection(overrides)))) {
            List<String> topics = admin.listTopics().names().get().stream()
                    .filter(n -> n.startsWith(Projector.APPLICATION_ID + "-") && n.endsWith("-changelog")).sorted().toList();
            changelogs = topics.size();
            List<org.apache.kafka.common.TopicPartition> partitions = new java.util.ArrayList<>();
            for (String t : topics) {
                partitions.addAll(dev.ensemble.sessions.schema.TopicAdmin.partitions(admin, t));
            }
            Map<org.apache.kafka.common.TopicPartition, Long> first = dev.ensemble.sessions.schema.TopicAdmin.offsets(admin, partitions,
                    org.apache.kafka.clients.admin.OffsetSpec.earliest(), org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED);
            Map<org.apache.kafka.common.TopicPartition, Long> last = dev.ensemble.sessions.schema.TopicAdmin.offsets(admin, partitions,
                    org.apache.kafka.clients.admin.OffsetSpec.latest(), org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED);
            for (var tp : partitions) {
                records += last.get(tp) - first.get(tp);
            }
        }
        long t0 = System.nanoTime();
        try (Projector projector = new Projector(bootstrapServers, stateDir, 1, overrides)) {
            projector.start();
            RunCommand.awaitRunning(projector::streams, "the projector (restoring)", Duration.ofMinutes(30));
            Restore r = new Restore(changelogs, records, (System.nanoTime() - t0) / 1e9);
            out.printf("restore: %,d records of %d changelogs restored into an empty state folder in %.1f s (%,.0f records/s)%n",
                    r.changelogRecords(), r.changelogs(), r.seconds(), r.recordsPerSecond());
            return r;
        }
    }

    /**
     * Where the projector's stream thread spent its time (Kafka Streams' thread-level metrics: the ratios of
     * process, commit, poll and punctuate, over the metrics' window) and what a commit cost.
     */
    static void printThreadMetrics(org.apache.kafka.streams.KafkaStreams streams, PrintStream out) {
        List<String> names = List.of("process-ratio", "commit-ratio", "poll-ratio", "punctuate-ratio", "commit-latency-avg",
                "commit-latency-max", "commit-total", "process-records-avg", "poll-records-avg", "process-latency-avg");
        StringBuilder sb = new StringBuilder("stream thread:");
        for (String n : names) {
            streams.metrics().forEach((k, m) -> {
                if (k.group().equals("stream-thread-metrics") && k.name().equals(n)) {
                    Object v = m.metricValue();
                    sb.append(' ').append(n).append('=').append(v instanceof Double d ? String.format("%.3f", d) : v);
                }
            });
        }
        out.println(sb);
    }

    private static long pct(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    private static void append(KafkaProducer<String, byte[]> producer, List<byte[][]> events) {
        for (byte[][] kv : events) {
            producer.send(new ProducerRecord<>(Topics.EVENTS.name(), null, System.currentTimeMillis(),
                    new String(kv[0], java.nio.charset.StandardCharsets.UTF_8), kv[1]));
        }
        producer.flush();
    }

    /** Waits until the projector's committed offsets reach the end of every event-log partition. */
    private static void awaitCommitted(String bootstrap, Map<String, Object> security, Duration timeout) throws Exception {
        try (Admin admin = Admin.create(KafkaClients.config(bootstrap, security))) {
            if (!dev.ensemble.sessions.projector.ProjectorRebuild.awaitCaughtUp(admin, Projector.APPLICATION_ID, Duration.ofMillis(20),
                    timeout, n -> { })) {
                throw new IllegalStateException("the projector did not catch up within " + timeout);
            }
        }
    }

    private static void readLags(String bootstrap, Map<String, Object> security, AtomicBoolean done, long[] lags, AtomicInteger count,
                                 java.util.concurrent.atomic.AtomicLong measureFrom) {
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(KafkaClients.merge(KafkaClients.config(bootstrap, security), Map.of(
                "group.id", "bench-lag-" + UUID.randomUUID(), "auto.offset.reset", "earliest",
                "isolation.level", "read_committed", "fetch.min.bytes", 1, "max.poll.records", 5000)),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(Topics.SESSIONS_VIEW.name()));
            while (!done.get()) {
                long now = System.currentTimeMillis();
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(50))) {
                    if (r.timestamp() < measureFrom.get()) {
                        continue; // a view of the warm-up
                    }
                    int i = count.getAndIncrement();
                    if (i < lags.length) {
                        lags[i] = now - r.timestamp();
                    }
                }
            }
        }
    }

    /** Pre-encoded (key, value) pairs in the order they are appended. */
    static List<byte[][]> synthesize(Settings s) {
        Random rnd = new Random(42);
        var serde = Topics.EVENTS.valueSerde().serializer();
        byte[][][] out = new byte[s.events()][][];
        int[] runOfAccount = new int[s.accounts()];
        String[] lastRun = new String[s.accounts()];
        int[] chain = new int[s.accounts()];
        Instant t = Instant.parse("2026-11-01T00:00:00Z");
        int i = 0;
        while (i < s.events()) {
            int a = rnd.nextInt(s.accounts());
            String account = "bench-" + a;
            String runId = account + "-run-" + runOfAccount[a]++;
            String parent = chain[a] > 0 && chain[a] < 5 ? lastRun[a] : null;
            chain[a] = parent == null ? 1 : chain[a] + 1;
            lastRun[a] = runId;
            String agentSession = UUID.nameUUIDFromBytes(account.concat(String.valueOf(runOfAccount[a] / 5)).getBytes()).toString();
            List<Object> payloads = List.of(
                    RunClaimed.newBuilder().setRunId(runId).setComputerId("pc-" + a).setAgent("claude-code").setKind(RunKind.TASK_RUN)
                            .setContinueFromJobId(parent).setFolder("/work/p" + a)
                            .setTask(TaskFacts.newBuilder().setTitle("Task " + runId).build()).build(),
                    RunStatusChanged.newBuilder().setRunId(runId).setStatus(RunStatus.WORKING).build(),
                    engine(runId, agentSession, 20_000), engine(runId, agentSession, 40_000), engine(runId, agentSession, 60_000),
                    engine(runId, agentSession, 80_000), engine(runId, agentSession, 100_000),
                    RunStatusChanged.newBuilder().setRunId(runId).setStatus(RunStatus.DONE).setReportSummary("done " + runId)
                            .setFilesChanged(List.of("src/F" + rnd.nextInt(50) + ".java")).build());
            for (Object p : payloads) {
                if (i >= s.events()) {
                    break;
                }
                t = t.plusMillis(100);
                Event e = Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(account).setSpace("local:pc-" + a)
                        .setOccurredAt(t).setRecordedAt(t).setSource("computer:pc-" + a).setPayload(p).build();
                out[i++] = new byte[][]{account.getBytes(java.nio.charset.StandardCharsets.UTF_8), serde.serialize(Topics.EVENTS.name(), e)};
            }
        }
        return Arrays.asList(out);
    }

    private static EngineEvent engine(String runId, String agentSession, long used) {
        return EngineEvent.newBuilder().setRunId(runId).setAgentSessionId(agentSession).setContextUsed(used).setContextSize(200_000L).build();
    }
}

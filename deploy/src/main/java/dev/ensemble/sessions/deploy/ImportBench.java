package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.agent.AgentStores;
import dev.ensemble.sessions.agent.ComputerAgent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.agent.ImportSummary;
import dev.ensemble.sessions.agent.KafkaEventSink;
import dev.ensemble.sessions.agent.StoreImporter;
import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.TopicAdmin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code ensemble-sessions bench import}: the computer agent's import on a generated Claude Code store (copies of
 * real transcripts with new session ids and folders), against ccusage 20.0.24 ({@code ccusage session --json},
 * installed with npm into a temporary folder) reading the same store in the same run. Prints a Markdown table of
 * medians: the first import (into a fresh embedded broker, as {@code up} does), a restart with nothing new, and
 * ccusage cold and warm (run right before each import, so both meet the same load), with the ratio of the first
 * import to ccusage cold, and each run's own ratio; then how soon a prompt appended to a
 * transcript while the computer agent runs is in the event log (its {@code RunClaimed}), median of {@code --prompts}.
 */
@Command(name = "import", mixinStandardHelpOptions = true,
        description = "Times the computer agent's import of a generated Claude Code store against ccusage reading the same store.")
final class ImportBench implements Callable<Integer> {
    static final String CCUSAGE = "ccusage@20.0.24";

    @Option(names = "--sessions", defaultValue = "500", description = "sessions to generate (default ${DEFAULT-VALUE})")
    int sessions;

    @Option(names = "--runs", defaultValue = "3", description = "runs of each measurement; the table shows medians (default ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--source", description = "a Claude Code projects folder whose transcripts are copied (default ../shared/data/agent-stores/claude/projects)")
    Path source;

    @Option(names = "--no-ccusage", description = "do not install and run ccusage")
    boolean noCcusage;

    @Option(names = "--prompts", defaultValue = "7", description = "new prompts appended while the agent runs, to time how soon each is in the log (default ${DEFAULT-VALUE})")
    int prompts;

    @Option(names = "--fresh-jvm", description = "time each run's first import in a new JVM (a child java with this JVM's "
            + "options, as the launcher starts it: its own embedded broker, then the import), ccusage cold right before each; "
            + "no restart or prompt timing")
    boolean freshJvm;

    @Option(names = "--jvm-variant", paramLabel = "NAME=OPTIONS", description = "with --fresh-jvm: also time, in each run, a child "
            + "started with these JVM options added after this JVM's (repeatable; space-separated), e.g. c1=-XX:TieredStopAtLevel=1")
    java.util.LinkedHashMap<String, String> variants = new java.util.LinkedHashMap<>();

    /** The child's part of --fresh-jvm: import this Claude Code projects folder into a fresh embedded broker, print one line. */
    @Option(names = "--one-import", hidden = true)
    Path oneImport;

    /** The launcher's class-data-sharing training: a tiny generated store imported into a fresh embedded broker. */
    @Option(names = "--class-archive-training", hidden = true)
    boolean classArchiveTraining;

    /** The line a --fresh-jvm child prints (parsed by the parent): the import's seconds and CPU split, the whole JVM's. */
    static final Pattern CHILD_LINE = Pattern.compile("fresh-jvm import: ([0-9.]+) s; import (.+); whole JVM (.+)");

    @Override
    public Integer call() throws Exception {
        if (oneImport != null) {
            return oneImport(oneImport, System.out);
        }
        if (classArchiveTraining) {
            return classArchiveTraining();
        }
        if (sessions < 1 || runs < 1) {
            throw new IllegalArgumentException("--sessions and --runs must be 1 or more");
        }
        if (!variants.isEmpty() && !freshJvm) {
            throw new IllegalArgumentException("--jvm-variant goes with --fresh-jvm");
        }
        Path src = source != null ? source : defaultSource();
        Path dir = Files.createTempDirectory("ensemble-import-bench");
        PrintStream out = System.out;
        out.println("load average at the start: " + loadAverage());
        Path claudeHome = dir.resolve("claude");
        long bytes = generate(src, claudeHome.resolve("projects"), sessions, new Random(42));
        out.printf("generated %,d sessions (%,.1f MB) from %s in %s%n", sessions, bytes / 1e6, src, claudeHome);

        Path ccusage = noCcusage ? null : installCcusage(dir.resolve("npm"), out);
        if (freshJvm) {
            try {
                return freshJvm(dir, claudeHome, bytes, ccusage, out);
            } finally {
                out.println("load average at the end: " + loadAverage());
                BenchCommand.deleteQuietly(dir);
            }
        }
        List<Double> ccCold = new ArrayList<>();
        List<Double> ccWarm = new ArrayList<>();

        List<Double> first = new ArrayList<>();
        List<Double> restart = new ArrayList<>();
        List<Double> promptDelays = new ArrayList<>();
        List<CpuSplit> cpu = new ArrayList<>();
        ImportSummary summary = null;
        try (LocalKafka kafka = broker(dir)) {
            java.util.Map<String, Object> client = kafka.clientProperties(); // the broker takes SASL clients only
            AgentStores stores = AgentStores.of(List.of(claudeHome.resolve("projects")), List.of());
            for (int i = 0; i < runs; i++) {
                if (ccusage != null) {
                    // ccusage right before each import, so that both meet the same load on a shared machine
                    ccCold.add(runCcusage(ccusage, claudeHome, dir.resolve("npm-cache-" + i), true));
                    ccWarm.add(runCcusage(ccusage, claudeHome, dir.resolve("npm-cache-" + i), false));
                }
                Path state = dir.resolve("state-" + i + ".json");
                ImportConfig config = new ImportConfig("bench", "bench-" + i, Clock.systemUTC(), state);
                try (KafkaEventSink sink = new KafkaEventSink(kafka.bootstrapServers(), client)) {
                    Timed t = firstImport(config, stores, sink);
                    summary = t.summary();
                    first.add(t.seconds());
                    cpu.add(t.cpu());
                    long t1 = System.nanoTime();
                    new StoreImporter(config).importStores(stores, sink); // a restart: the state is read from its file
                    restart.add((System.nanoTime() - t1) / 1e9);
                }
                out.printf("run %d: %sfirst import %.2f s, restart %.2f s; CPU of the first import: %s%n", i + 1,
                        ccusage == null ? "" : String.format("ccusage cold %.2f s, warm %.2f s; ", ccCold.get(i), ccWarm.get(i)),
                        first.get(i), restart.get(i), cpu.get(i));
            }
            if (prompts > 0) {
                ImportConfig config = new ImportConfig("bench", "bench-" + (runs - 1), Clock.systemUTC(),
                        dir.resolve("state-" + (runs - 1) + ".json"));
                promptDelays = newPromptDelays(kafka.bootstrapServers(), client, config, stores, prompts);
                out.printf("new prompts in the log after: %s s%n", promptDelays.stream()
                        .map(d -> String.format("%.3f", d)).collect(java.util.stream.Collectors.joining(", ")));
            }
        }
        out.println(summary);
        out.println();
        out.println("| store | first import | restart, nothing new | ccusage cold / warm | first import / ccusage cold |");
        out.println("|---|---:|---:|---:|---:|");
        String cc = ccusage == null ? "not run" : String.format("%.2f / %.2f s", median(ccCold), median(ccWarm));
        String ratio = ccusage == null ? "-" : String.format("%.2f", median(first) / median(ccCold));
        out.printf("| %,d sessions, %,.0f MB | %.2f s | %.2f s | %s | %s |%n", sessions, bytes / 1e6, median(first),
                median(restart), cc, ratio);
        out.printf("(medians of %d runs; %d cores)%n", runs, Runtime.getRuntime().availableProcessors());
        if (ccusage != null) {
            List<Double> ratios = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                ratios.add(first.get(i) / ccCold.get(i));
            }
            out.printf("each run's first import / ccusage cold just before it: %s (median %.2f)%n", ratios.stream()
                    .map(r -> String.format("%.2f", r)).collect(java.util.stream.Collectors.joining(", ")), median(ratios));
        }
        if (!promptDelays.isEmpty()) {
            out.println();
            out.println("| new prompt: appended to a transcript → its run claimed in the log (the agent running, polling every 10 min) | median | slowest |");
            out.println("|---|---:|---:|");
            out.printf("| median of %d prompts | %.3f s | %.3f s |%n", promptDelays.size(), median(promptDelays),
                    Collections.max(promptDelays));
        }
        out.println("CPU of the first import (medians): " + CpuSplit.median(cpu));
        out.println("load average at the end: " + loadAverage());
        BenchCommand.deleteQuietly(dir);
        return 0;
    }

    /** One child's figures: the import's seconds and CPU split, the whole JVM's CPU split, the process's seconds. */
    record FreshRun(double seconds, CpuSplit cpu, CpuSplit jvm, double processSeconds) {
    }

    /**
     * --fresh-jvm: in each run, for the defaults and then each --jvm-variant in turn (so the machine's load meets
     * them alike), ccusage cold and then a child JVM that imports the store into its own broker.
     */
    private int freshJvm(Path dir, Path claudeHome, long bytes, Path ccusage, PrintStream out) throws Exception {
        java.util.LinkedHashMap<String, List<String>> all = new java.util.LinkedHashMap<>();
        all.put("defaults", List.of());
        variants.forEach((name, opts) -> all.put(name, List.of(opts.trim().split("\\s+"))));
        out.println("child JVM: " + String.join(" ", childCommand(List.of(), claudeHome.resolve("projects"))));
        java.util.Map<String, List<FreshRun>> results = new java.util.LinkedHashMap<>();
        java.util.Map<String, List<Double>> ratios = new java.util.LinkedHashMap<>();
        for (int i = 0; i < runs; i++) {
            for (java.util.Map.Entry<String, List<String>> v : all.entrySet()) {
                double cc = ccusage == null ? Double.NaN
                        : runCcusage(ccusage, claudeHome, dir.resolve("npm-cache-" + i + "-" + v.getKey()), true);
                FreshRun r = runChild(childCommand(v.getValue(), claudeHome.resolve("projects")), dir.resolve("child.log"));
                results.computeIfAbsent(v.getKey(), k -> new ArrayList<>()).add(r);
                ratios.computeIfAbsent(v.getKey(), k -> new ArrayList<>()).add(r.seconds() / cc);
                out.printf("run %d, %s: %sfirst import in a fresh JVM %.2f s%s (the child %.2f s from its start); "
                                + "CPU of the import: %s; of the whole JVM: %s%n", i + 1, v.getKey(),
                        ccusage == null ? "" : String.format("ccusage cold %.2f s, ", cc), r.seconds(),
                        ccusage == null ? "" : String.format(", ratio %.2f", r.seconds() / cc), r.processSeconds(), r.cpu(), r.jvm());
            }
        }
        out.println();
        out.printf("%,d sessions, %,.0f MB; first import in a fresh JVM, medians of %d runs (%d cores):%n", sessions,
                bytes / 1e6, runs, Runtime.getRuntime().availableProcessors());
        out.println("| JVM options | first import | each run's first import / ccusage cold | median ratio | CPU-s of the import (importer, broker, JIT, GC) | the child from its start |");
        out.println("|---|---:|---|---:|---|---:|");
        for (String name : all.keySet()) {
            List<FreshRun> rs = results.get(name);
            CpuSplit cpu = CpuSplit.median(rs.stream().map(FreshRun::cpu).toList());
            out.printf("| %s | %.2f s | %s | %s | %.2f (%.2f, %.2f, %.2f, %.2f) | %.2f s |%n",
                    name.equals("defaults") ? "defaults" : name + ": " + variants.get(name),
                    median(rs.stream().map(FreshRun::seconds).toList()),
                    ccusage == null ? "not run" : ratios.get(name).stream().map(x -> String.format("%.2f", x))
                            .collect(java.util.stream.Collectors.joining(", ")),
                    ccusage == null ? "-" : String.format("%.2f", median(ratios.get(name))),
                    cpu.total(), cpu.importer(), cpu.broker(), cpu.jit(), cpu.gc(),
                    median(rs.stream().map(FreshRun::processSeconds).toList()));
        }
        return 0;
    }

    /**
     * The child's command: this JVM's java and class path, this JVM's options (as the launcher gave them, without
     * {@code -XX:ArchiveClassesAtExit}: a child must not write the launcher's class archive), then {@code extra}.
     */
    static List<String> childCommand(List<String> extra, Path projects) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        for (String a : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-XX:ArchiveClassesAtExit")) {
                cmd.add(a);
            }
        }
        cmd.addAll(extra);
        String cp = System.getProperty("java.class.path");
        if (!cp.contains(java.io.File.pathSeparator) && cp.endsWith("ensemble-sessions.jar")) {
            cmd.addAll(List.of("-jar", cp)); // as the launcher starts it (a class archive is for this class path)
        } else {
            cmd.addAll(List.of("-cp", cp, EnsembleSessions.class.getName()));
        }
        cmd.addAll(List.of("bench", "import", "--one-import", projects.toString()));
        return cmd;
    }

    /** Runs a child and reads its line; its output goes to {@code log}, shown in the error when it fails. */
    static FreshRun runChild(List<String> cmd, Path log) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(20, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("the fresh JVM's import did not end within 20 minutes: " + cmd);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        String text = Files.readString(log, StandardCharsets.UTF_8);
        Matcher m = CHILD_LINE.matcher(text);
        if (p.exitValue() != 0 || !m.find()) {
            throw new IllegalStateException("the fresh JVM's import failed (exit " + p.exitValue() + "): " + cmd + "\n" + text);
        }
        return new FreshRun(Double.parseDouble(m.group(1)), CpuSplit.parse(m.group(2)), CpuSplit.parse(m.group(3)), seconds);
    }

    /** The child: its own embedded broker (as {@code up} starts one), then the first import of {@code projects}, timed. */
    static int oneImport(Path projects, PrintStream out) throws Exception {
        Path dir = Files.createTempDirectory("ensemble-import-child");
        try (LocalKafka kafka = broker(dir)) {
            AgentStores stores = AgentStores.of(List.of(projects), List.of());
            ImportConfig config = new ImportConfig("bench", "bench-fresh", Clock.systemUTC(), dir.resolve("state.json"));
            try (KafkaEventSink sink = new KafkaEventSink(kafka.bootstrapServers(), kafka.clientProperties())) {
                Timed t = firstImport(config, stores, sink);
                out.println(t.summary());
                out.printf("fresh-jvm import: %.3f s; import %s; whole JVM %s%n", t.seconds(), t.cpu(), CpuSplit.now());
            }
        } finally {
            BenchCommand.deleteQuietly(dir);
        }
        return 0;
    }

    /** An embedded broker in {@code dir}, as {@code up} starts one, ready and with the topics made. */
    static LocalKafka broker(Path dir) throws Exception {
        LocalKafka kafka = LocalKafka.start(dir.resolve("kafka"), 0);
        try {
            kafka.waitUntilReady(Duration.ofSeconds(120));
            try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
                    KafkaClients.config(kafka.bootstrapServers(), kafka.clientProperties()))) {
                TopicAdmin.ensureTopics(admin, 1, (short) 1);
            }
            return kafka;
        } catch (Exception | Error e) {
            kafka.close();
            throw e;
        }
    }

    /** A first import's summary, seconds and CPU split. */
    record Timed(ImportSummary summary, double seconds, CpuSplit cpu) {
    }

    /** Imports {@code stores} with a new importer of {@code config}, timed. */
    static Timed firstImport(ImportConfig config, AgentStores stores, KafkaEventSink sink) {
        CpuSplit before = CpuSplit.now();
        long t0 = System.nanoTime();
        ImportSummary summary = new StoreImporter(config).importStores(stores, sink);
        double seconds = (System.nanoTime() - t0) / 1e9;
        return new Timed(summary, seconds, CpuSplit.now().since(before));
    }

    /**
     * What the launcher runs once with {@code -XX:ArchiveClassesAtExit} after a build: three sessions of a built-in
     * transcript imported into a fresh embedded broker, so that the archive holds the classes an import loads.
     */
    static int classArchiveTraining() throws Exception {
        Path dir = Files.createTempDirectory("ensemble-class-archive");
        try {
            String id = "11111111-2222-4333-8444-555555555555";
            Path projects = dir.resolve("projects");
            for (int i = 0; i < 3; i++) {
                String sid = id.substring(0, 35) + i;
                Path f = Files.createDirectories(projects.resolve("-w" + i)).resolve(sid + ".jsonl");
                Files.writeString(f, String.join("\n",
                        "{\"type\":\"user\",\"sessionId\":\"" + sid + "\",\"cwd\":\"/w" + i + "\",\"uuid\":\"u1\","
                                + "\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}",
                        "{\"type\":\"assistant\",\"sessionId\":\"" + sid + "\",\"cwd\":\"/w" + i + "\",\"uuid\":\"a1\","
                                + "\"timestamp\":\"2026-01-01T00:00:01.500Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-sonnet-4-5\","
                                + "\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},{\"type\":\"tool_use\","
                                + "\"id\":\"t1\",\"name\":\"Bash\",\"input\":{\"command\":\"ls\"}}],\"stop_reason\":\"tool_use\","
                                + "\"usage\":{\"input_tokens\":10,\"output_tokens\":2}}}",
                        "{\"type\":\"user\",\"sessionId\":\"" + sid + "\",\"cwd\":\"/w" + i + "\",\"uuid\":\"u2\","
                                + "\"timestamp\":\"2026-01-01T00:00:02Z\",\"message\":{\"role\":\"user\",\"content\":[{"
                                + "\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"a b\"}]}}",
                        ""), StandardCharsets.UTF_8);
            }
            return oneImport(projects, System.out);
        } finally {
            BenchCommand.deleteQuietly(dir);
        }
    }

    /** {@code /proc/loadavg}'s first three figures, or "unknown" where there is none. */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /**
     * Starts a {@link ComputerAgent} on the imported store (its state file says everything is imported) with a
     * 10-minute poll, so that only its watch of the store can be in time; then, {@code n} times, appends a prompt
     * line to a transcript (another one each time) and waits for that prompt's {@code RunClaimed} in the event log.
     *
     * @return seconds from each append to the event being read from the log
     */
    static List<Double> newPromptDelays(String bootstrap, java.util.Map<String, Object> client, ImportConfig config,
                                        AgentStores stores, int n) throws IOException {
        List<Path> transcripts;
        try (Stream<Path> s = Files.walk(stores.claude().get(0), 2)) {
            transcripts = s.filter(p -> p.getFileName().toString().endsWith(".jsonl")).sorted().toList();
        }
        ComputerAgent agent = new ComputerAgent(bootstrap, config, stores, Duration.ofMinutes(10),
                dev.ensemble.sessions.agent.ImportProgress.NONE).withClientProperties(client);
        java.util.Map<String, Object> consumerConfig = new java.util.HashMap<>(KafkaClients.config(bootstrap, client));
        consumerConfig.put("group.id", "bench-import-prompts");
        List<Double> delays = new ArrayList<>();
        try (KafkaConsumer<String, Event> consumer = new KafkaConsumer<>(consumerConfig,
                Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(Topics.EVENTS.name()).stream()
                    .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            consumer.assign(partitions);
            agent.start();
            long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (agent.lastSummary() == null && agent.lastError() == null && System.nanoTime() < until) {
                sleep(50); // its first import: nothing new
            }
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position);
            for (int i = 0; i < n; i++) {
                Path file = transcripts.get(i % transcripts.size());
                String session = file.getFileName().toString().replace(".jsonl", "");
                String uuid = UUID.randomUUID().toString();
                String line = "{\"type\":\"user\",\"sessionId\":\"" + session + "\",\"cwd\":\"/bench/prompts\",\"uuid\":\""
                        + uuid + "\",\"timestamp\":\"" + java.time.Instant.now() + "\",\"message\":{\"role\":\"user\","
                        + "\"content\":\"bench prompt " + i + "\"}}\n";
                String runId = "claude-code:" + session + ":" + uuid;
                long t0 = System.nanoTime();
                Files.writeString(file, line, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
                long deadline = t0 + TimeUnit.MINUTES.toNanos(2);
                boolean seen = false;
                while (!seen && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, Event> r : consumer.poll(Duration.ofMillis(20))) {
                        seen |= r.value().getPayload() instanceof RunClaimed c && c.getRunId().equals(runId);
                    }
                }
                if (!seen) {
                    throw new IllegalStateException("the prompt appended to " + file + " was not in the log after 2 minutes");
                }
                delays.add((System.nanoTime() - t0) / 1e9);
                sleep(300); // apart, as a person types
            }
        } finally {
            agent.stop();
        }
        return delays;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * CPU seconds of this process by part: the embedded broker's threads (every Java thread but {@code main},
     * the importer's readers and the producer's), the producer's network thread, the JIT compiler and the garbage
     * collector (their threads read from {@code /proc/self/task}, Linux only; 0 elsewhere), and the importer: the
     * rest (its reading threads and {@code main}, which end or are shared, so they are what is left).
     */
    record CpuSplit(double total, double broker, double producer, double jit, double gc) {
        /** The process's CPU seconds so far, by part. */
        static CpuSplit now() {
            java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
            double broker = 0;
            double producer = 0;
            for (java.lang.management.ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
                if (t == null) {
                    continue;
                }
                long ns = threads.getThreadCpuTime(t.getThreadId());
                String name = t.getThreadName();
                if (ns <= 0 || name.equals("main") || name.startsWith("computer-agent")) {
                    continue;
                }
                if (name.startsWith("kafka-producer-network-thread")) {
                    producer += ns / 1e9;
                } else {
                    broker += ns / 1e9;
                }
            }
            double jit = 0;
            double gc = 0;
            Path tasks = Path.of("/proc/self/task");
            if (Files.isDirectory(tasks)) {
                try (Stream<Path> s = Files.list(tasks)) {
                    for (Path task : s.toList()) {
                        try {
                            String comm = Files.readString(task.resolve("comm")).strip();
                            String stat = Files.readString(task.resolve("stat"));
                            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                            double sec = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0; // utime + stime, ticks
                            if (comm.contains("CompilerThre")) {
                                jit += sec;
                            } else if (comm.startsWith("GC Thread") || comm.startsWith("G1 ")) {
                                gc += sec;
                            }
                        } catch (IOException | RuntimeException e) {
                            // a thread that ended meanwhile
                        }
                    }
                } catch (IOException e) {
                    // not Linux: no JIT and GC figures
                }
            }
            java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            double total = os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() / 1e9 : 0;
            return new CpuSplit(total, broker, producer, jit, gc);
        }

        CpuSplit since(CpuSplit before) {
            return new CpuSplit(total - before.total, broker - before.broker, producer - before.producer,
                    jit - before.jit, gc - before.gc);
        }

        /** The importer's own: what is left of the process's CPU. */
        double importer() {
            return Math.max(0, total - broker - producer - jit - gc);
        }

        /** Reads what {@link #toString()} wrote. */
        static CpuSplit parse(String text) {
            Matcher m = Pattern.compile("([0-9.]+) CPU-s: importer [0-9.]+ \\([0-9]+ %\\), broker ([0-9.]+) \\([0-9]+ %\\), "
                    + "producer ([0-9.]+), JIT compiler ([0-9.]+), GC ([0-9.]+)").matcher(text);
            if (!m.find()) {
                throw new IllegalArgumentException("not a CPU split: " + text);
            }
            return new CpuSplit(Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3)),
                    Double.parseDouble(m.group(4)), Double.parseDouble(m.group(5)));
        }

        /** Each part's median (the importer's: what is left of the medians). */
        static CpuSplit median(List<CpuSplit> xs) {
            return new CpuSplit(ImportBench.median(xs.stream().map(CpuSplit::total).toList()),
                    ImportBench.median(xs.stream().map(CpuSplit::broker).toList()),
                    ImportBench.median(xs.stream().map(CpuSplit::producer).toList()),
                    ImportBench.median(xs.stream().map(CpuSplit::jit).toList()),
                    ImportBench.median(xs.stream().map(CpuSplit::gc).toList()));
        }

        @Override
        public String toString() {
            return String.format("%.2f CPU-s: importer %.2f (%.0f %%), broker %.2f (%.0f %%), producer %.2f, JIT compiler %.2f, GC %.2f",
                    total, importer(), pct(importer()), broker, pct(broker), producer, jit, gc);
        }

        private double pct(double part) {
            return total <= 0 ? 0 : 100 * part / total;
        }
    }

    /** {@code ../shared/data/agent-stores/claude/projects} from the working folder (or one folder further up). */
    static Path defaultSource() {
        Path beside = Path.of("../shared/data/agent-stores/claude/projects").toAbsolutePath().normalize();
        Path above = Path.of("../../shared/data/agent-stores/claude/projects").toAbsolutePath().normalize();
        return Files.isDirectory(beside) || !Files.isDirectory(above) ? beside : above;
    }

    /**
     * Copies the source transcripts round-robin into {@code projects}: each copy gets a new session id (in its
     * name and lines) and a folder of its own ({@code /bench/project-<n>}, ten sessions a folder).
     *
     * @return bytes written
     */
    static long generate(Path source, Path projects, int sessions, Random random) throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(source, 2)) {
            s.filter(p -> p.getFileName().toString().endsWith(".jsonl") && !p.getFileName().toString().startsWith("agent-"))
                    .sorted().forEach(files::add);
        }
        if (files.isEmpty()) {
            throw new IllegalArgumentException("no transcripts in " + source);
        }
        List<String> texts = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        List<String> cwds = new ArrayList<>();
        for (Path f : files) {
            String text = Files.readString(f, StandardCharsets.UTF_8);
            texts.add(text);
            String name = f.getFileName().toString();
            ids.add(name.substring(0, name.length() - ".jsonl".length()));
            int at = text.indexOf("\"cwd\":\"");
            cwds.add(at < 0 ? null : text.substring(at + 7, text.indexOf('"', at + 7)));
        }
        long bytes = 0;
        for (int i = 0; i < sessions; i++) {
            int k = i % texts.size();
            String id = new UUID(random.nextLong(), random.nextLong()).toString();
            String folder = "/bench/project-" + i / 10;
            String text = texts.get(k).replace(ids.get(k), id);
            if (cwds.get(k) != null) {
                text = text.replace("\"cwd\":\"" + cwds.get(k) + "\"", "\"cwd\":\"" + folder + "\"");
            }
            Path target = projects.resolve(folder.replace('/', '-')).resolve(id + ".jsonl");
            Files.createDirectories(target.getParent());
            byte[] b = text.getBytes(StandardCharsets.UTF_8);
            Files.write(target, b);
            bytes += b.length;
        }
        return bytes;
    }

    /** Installs ccusage with npm into {@code dir}; null, with a message, when npm is absent or the install fails. */
    static Path installCcusage(Path dir, PrintStream out) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        ProcessBuilder pb = new ProcessBuilder("npm", "install", "--no-audit", "--no-fund", "--prefix", dir.toString(), CCUSAGE)
                .redirectErrorStream(true).redirectOutput(dir.resolve("npm-install.log").toFile());
        try {
            Process p = pb.start();
            if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
                out.println("ccusage comparison skipped: npm install " + CCUSAGE + " failed (see " + dir.resolve("npm-install.log") + ")");
                return null;
            }
        } catch (IOException e) {
            out.println("ccusage comparison skipped: npm is not installed (" + e.getMessage() + ")");
            return null;
        }
        Path bin = dir.resolve("node_modules/.bin/ccusage");
        if (!Files.isExecutable(bin)) {
            out.println("ccusage comparison skipped: " + bin + " not found after npm install");
            return null;
        }
        return bin;
    }

    /** Seconds ccusage takes to read the store ({@code session --json --offline}); cold empties its cache first. */
    static double runCcusage(Path bin, Path claudeHome, Path cache, boolean cold) throws IOException, InterruptedException {
        if (cold && Files.exists(cache)) {
            try (Stream<Path> s = Files.walk(cache)) {
                s.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        ProcessBuilder pb = new ProcessBuilder(bin.toString(), "session", "--json", "--offline")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("CLAUDE_CONFIG_DIR", claudeHome.toString());
        pb.environment().put("XDG_CACHE_HOME", cache.toString());
        long t0 = System.nanoTime();
        Process p = pb.start();
        if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
            throw new IllegalStateException("ccusage failed (exit " + (p.isAlive() ? "timeout" : p.exitValue()) + ")");
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        Collections.sort(s);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }
}

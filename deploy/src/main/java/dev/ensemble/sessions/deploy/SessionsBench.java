package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.gateway.Gateway;
import dev.ensemble.sessions.gateway.Principal;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ensemble-sessions bench sessions}: the session list and search of {@code GET /api/agent/sessions} (issue 19
 * item 3), over HTTP, on a fresh embedded broker: one account with {@code --sessions} sessions holding
 * {@code --prompts} prompts in all (each a run with its prompt, a report summary and files changed), written as session
 * views straight to the serving generation's view topic (the projector is not what is measured), read by a gateway
 * whose read side indexes them. Then, one request at a time after {@code --warmup} unmeasured ones, {@code --requests}
 * of each kind: the list's first page, pages further on (following {@code next}), a filtered first page, and
 * searches of one word, two words and a phrase. Prompt texts are the task titles of
 * {@code ../shared/data/kafka-history/tasks.jsonl} (with their descriptions as reports and their files as files
 * changed), or generated words when that file is absent. Prints a Markdown table of p50, p90, p99 and max, and the
 * JVM's CPU time per request (client and gateway together: a figure the machine's load changes less than the times).
 */
@Command(name = "sessions", mixinStandardHelpOptions = true,
        description = "Times the session list and search over HTTP on a generated account (default 3,000 sessions, 100,000 prompts).")
final class SessionsBench implements Callable<Integer> {
    static final String ACCOUNT = "acct-bench";
    static final String TOKEN = "bench-token";
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @Option(names = "--sessions", defaultValue = "3000", description = "sessions of the account (default ${DEFAULT-VALUE})")
    int sessions;

    @Option(names = "--prompts", defaultValue = "100000", description = "prompts (runs) over all its sessions, at most 100 a session (default ${DEFAULT-VALUE})")
    int prompts;

    @Option(names = "--requests", defaultValue = "1000", description = "measured requests of each kind (default ${DEFAULT-VALUE})")
    int requests;

    @Option(names = "--warmup", defaultValue = "300", description = "unmeasured requests of each kind before (default ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--limit", defaultValue = "50", description = "sessions a page (default ${DEFAULT-VALUE})")
    int limit;

    @Option(names = "--tasks", description = "the task texts (default ../shared/data/kafka-history/tasks.jsonl; generated words when absent)")
    Path tasks;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** A prompt's texts: the title, a report summary, files changed. */
    record Text(String title, String report, List<String> files) {
    }

    @Override
    public Integer call() throws Exception {
        CommandChecks.requireAtLeast(spec, "--sessions", sessions, 1);
        CommandChecks.requireAtLeast(spec, "--prompts", prompts, sessions);
        CommandChecks.require(spec, prompts <= 100L * sessions, "--prompts must be at most 100 a session (a session view keeps 100 runs)");
        CommandChecks.requireAtLeast(spec, "--requests", requests, 1);
        CommandChecks.requireAtLeast(spec, "--warmup", warmup, 0);
        CommandChecks.requireAtLeast(spec, "--limit", limit, 1);
        PrintStream out = System.out;
        List<Text> texts = texts(tasks != null ? tasks : defaultTasks(), out);
        Path dir = Files.createTempDirectory("ensemble-sessions-bench");
        out.println("starting a fresh broker in " + dir);
        try (LocalKafka kafka = LocalKafka.start(dir.resolve("kafka"), 0)) {
            kafka.waitUntilReady(Duration.ofSeconds(120));
            Map<String, Object> client = new HashMap<>(kafka.clientProperties());
            try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
                    KafkaClients.merge(client, Map.of("bootstrap.servers", kafka.bootstrapServers())))) {
                TopicAdmin.ensureTopics(admin, 2, (short) 1);
            }
            Generation g = Generations.serving(kafka.bootstrapServers(), client);
            long t0 = System.nanoTime();
            Set<String> vocabulary = write(kafka.bootstrapServers(), client, g, texts);
            out.printf("wrote %,d session views with %,d prompts in %.1f s%n", sessions, prompts, (System.nanoTime() - t0) / 1e9);

            Tokens tokens = Tokens.inMemory();
            tokens.register(TOKEN, new Principal(ACCOUNT, "person", "bench"));
            Gateway gateway = new Gateway(new Gateway.Settings(kafka.bootstrapServers(), "127.0.0.1", 0, dir.resolve("gateway"), 1,
                    tokens, Clock.systemUTC())).withClientProperties(client);
            try {
                long t1 = System.nanoTime();
                gateway.start();
                gateway.awaitReady(Duration.ofMinutes(5));
                Api api = new Api(gateway.port());
                List<String> cursors = awaitAll(api, out);
                out.printf("the gateway read and indexed them in %.1f s%n", (System.nanoTime() - t1) / 1e9);
                measure(api, cursors, new ArrayList<>(vocabulary), texts, out);
            } finally {
                gateway.stop();
            }
        }
        return 0;
    }

    /** Writes the account's session views to generation {@code g}'s view topic; the words of its prompts, for searches. */
    Set<String> write(String bootstrap, Map<String, Object> client, Generation g, List<Text> texts) throws Exception {
        AvroSerde<SessionView> serde = AvroSerde.of(SessionView.class);
        String topic = g.view(Topics.SESSIONS_VIEW).name();
        Set<String> words = new LinkedHashSet<>();
        Pattern word = Pattern.compile("\\b[a-z]{5,12}\\b");
        String[] agents = {"claude-code", "codex", "gemini-cli", "opencode"};
        int next = 0;
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(KafkaClients.merge(client, Map.of(
                "bootstrap.servers", bootstrap, "linger.ms", 20, "batch.size", 1 << 20, "max.request.size", 8 << 20,
                "compression.type", "lz4")), new StringSerializer(), new ByteArraySerializer())) {
            // views are partitioned by account, as the projector writes them (Keys.accountPartition)
            int partition = Keys.accountPartition(ACCOUNT, producer.partitionsFor(topic).size());
            for (int i = 0; i < sessions; i++) {
                int runs = prompts / sessions + (i < prompts % sessions ? 1 : 0);
                String id = String.format("bench-%05d", i);
                List<RunView> runViews = new ArrayList<>(runs);
                Set<String> files = new LinkedHashSet<>();
                Instant last = T0.plus(Duration.ofMinutes(i));
                for (int r = 0; r < runs; r++) {
                    Text t = texts.get(next++ % texts.size());
                    if (words.size() < 5_000) {
                        Matcher m = word.matcher(t.title().toLowerCase(Locale.ROOT));
                        while (m.find()) words.add(m.group());
                    }
                    for (String f : t.files()) {
                        if (files.size() < 200) files.add(f);
                    }
                    Instant claimed = last.minus(Duration.ofSeconds(runs - r));
                    runViews.add(RunView.newBuilder().setRunId(id + "-" + r).setTaskId(null).setTitle(cut(t.title(), 500))
                            .setComputerId(i % 3 == 0 ? "desk" : "laptop").setStatus("DONE").setClaimedAt(claimed)
                            .setStartedAt(claimed).setEndedAt(claimed.plusMillis(500)).setReportSummary(cut(t.report(), 2000))
                            .setTokens(1000L + r).setDurationMs(500L).build());
                }
                String computer = i % 3 == 0 ? "desk" : "laptop";
                SessionView v = SessionView.newBuilder().setSessionId(id).setAccount(ACCOUNT).setSpace("local:" + computer)
                        .setSequence(1L).setAgent(agents[i % agents.length]).setModel("model-" + (i % 5)).setComputerId(computer)
                        .setComputerIds(new ArrayList<>(List.of(computer))).setFolder("/work/project-" + (i % 40))
                        .setFolders(new ArrayList<>(List.of("/work/project-" + (i % 40)))).setKind("TERMINAL_CHAT")
                        .setAgentSessionId(java.util.UUID.nameUUIDFromBytes(id.getBytes(StandardCharsets.UTF_8)).toString())
                        .setStatus(SessionStatus.IDLE).setFilesChanged(new ArrayList<>(files)).setCreatedAt(runViews.get(0).getClaimedAt())
                        .setLastActiveAt(last).setRuns(runViews).setTasks(new ArrayList<>())
                        .setFirstTaskTitle(runViews.get(0).getTitle()).setLatestTaskTitle(runViews.get(runs - 1).getTitle())
                        .setLatestReportSummary(runViews.get(runs - 1).getReportSummary()).build();
                producer.send(new ProducerRecord<>(topic, partition, Keys.of(ACCOUNT, id), serde.serializer().serialize(topic, v)));
            }
            producer.flush();
        }
        return words;
    }

    /** Waits until the whole list is served (every session, following next); the cursors of its pages. */
    List<String> awaitAll(Api api, PrintStream out) throws Exception {
        long until = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (true) {
            List<String> cursors = new ArrayList<>();
            int n = 0;
            String next = null;
            try {
                do {
                    JsonNode page = api.get("limit=" + limit + (next == null ? "" : "&cursor=" + next));
                    n += page.path("sessions").size();
                    next = page.path("next").isTextual() ? page.path("next").asText() : null;
                    if (next != null) cursors.add(next);
                } while (next != null);
            } catch (IllegalStateException e) {
                n = -1; // starting
            }
            if (n == sessions) {
                return cursors;
            }
            if (System.nanoTime() > until) {
                throw new IllegalStateException("the gateway lists " + n + " of " + sessions + " sessions after 5 minutes");
            }
            Thread.sleep(500);
        }
    }

    void measure(Api api, List<String> cursors, List<String> words, List<Text> texts, PrintStream out) throws Exception {
        Random random = new Random(42);
        Pattern pair = Pattern.compile("\\b([a-z]{4,}) ([a-z]{4,})\\b");
        List<String> phrases = new ArrayList<>();
        for (Text t : texts) {
            Matcher m = pair.matcher(t.title().toLowerCase(Locale.ROOT));
            if (m.find()) phrases.add(m.group(1) + " " + m.group(2));
            if (phrases.size() >= 2_000) break;
        }
        if (phrases.isEmpty()) phrases.add(words.get(0) + " " + words.get(1));
        Map<String, IntFunction<String>> kinds = new java.util.LinkedHashMap<>();
        kinds.put("list: first page", i -> "limit=" + limit);
        kinds.put("list: a page further on (cursor)", i -> "limit=" + limit + "&cursor=" + cursors.get(random.nextInt(cursors.size())));
        kinds.put("list: first page, agent=codex", i -> "limit=" + limit + "&agent=codex");
        kinds.put("search: one word", i -> "limit=" + limit + "&q=" + enc(words.get(random.nextInt(words.size()))));
        kinds.put("search: two words", i -> "limit=" + limit + "&q=" + enc(words.get(random.nextInt(words.size())) + " "
                + words.get(random.nextInt(words.size()))));
        kinds.put("search: a phrase", i -> "limit=" + limit + "&q=" + enc("\"" + phrases.get(random.nextInt(phrases.size())) + "\""));
        out.println();
        out.printf("%,d sessions, %,d prompts, one account; pages of %d; %,d requests of each kind after %,d unmeasured, one at a time%n",
                sessions, prompts, limit, requests, warmup);
        out.println();
        out.println("| request | p50 ms | p90 ms | p99 ms | max ms | sessions a page (mean) | CPU ms a request (whole JVM) |");
        out.println("|---|---:|---:|---:|---:|---:|---:|");
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        for (Map.Entry<String, IntFunction<String>> k : kinds.entrySet()) {
            for (int i = 0; i < warmup; i++) {
                api.get(k.getValue().apply(i));
            }
            long[] nanos = new long[requests];
            long found = 0;
            long cpu = os.getProcessCpuTime();
            for (int i = 0; i < requests; i++) {
                String query = k.getValue().apply(i);
                long t = System.nanoTime();
                JsonNode page = api.get(query);
                nanos[i] = System.nanoTime() - t;
                found += page.path("sessions").size();
            }
            cpu = os.getProcessCpuTime() - cpu; // the gateway's and the client's work, and whatever else this JVM did meanwhile
            Arrays.sort(nanos);
            out.printf("| %s | %.2f | %.2f | %.2f | %.2f | %.1f | %.2f |%n", k.getKey(), pct(nanos, 50), pct(nanos, 90), pct(nanos, 99),
                    nanos[nanos.length - 1] / 1e6, (double) found / requests, cpu / 1e6 / requests);
        }
        out.printf("(%d cores; load average %.1f at the end)%n", Runtime.getRuntime().availableProcessors(),
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    static double pct(long[] sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }

    /** The gateway's list endpoint with the bench account's token; one keep-alive connection. */
    static final class Api {
        private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        private final String base;

        Api(int port) {
            this.base = "http://127.0.0.1:" + port + "/api/agent/sessions?";
        }

        /** The answer of a 200; an IllegalStateException otherwise. */
        JsonNode get(String query) throws Exception {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + query)).header("Authorization", "Bearer " + TOKEN)
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException(query + " answered " + r.statusCode() + ": " + r.body());
            }
            return DataDir.JSON.readTree(r.body());
        }
    }

    /** The tasks' titles, descriptions and files; generated texts when the file is absent. */
    static List<Text> texts(Path file, PrintStream out) throws Exception {
        List<Text> texts = new ArrayList<>();
        if (Files.isRegularFile(file)) {
            try (var lines = Files.lines(file)) {
                lines.forEach(l -> {
                    try {
                        JsonNode t = DataDir.JSON.readTree(l);
                        List<String> files = new ArrayList<>();
                        t.path("files").forEach(f -> {
                            if (files.size() < 10) files.add(f.asText());
                        });
                        String description = t.path("description").asText("");
                        texts.add(new Text(t.path("title").asText(), description.isBlank() ? t.path("title").asText() : description, files));
                    } catch (Exception e) {
                        throw new IllegalArgumentException("a line of " + file + " is not a task: " + e.getMessage(), e);
                    }
                });
            }
            out.printf("prompt texts: the %,d task titles of %s%n", texts.size(), file);
            return texts;
        }
        Random random = new Random(7);
        String[] syllables = {"ka", "fe", "ro", "lin", "tor", "sa", "mi", "ble", "con", "ver", "pa", "dex"};
        List<String> words = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            StringBuilder w = new StringBuilder();
            for (int s = 2 + random.nextInt(3); s > 0; s--) w.append(syllables[random.nextInt(syllables.length)]);
            words.add(w.toString());
        }
        for (int i = 0; i < 10_000; i++) {
            StringBuilder title = new StringBuilder();
            for (int n = 6 + random.nextInt(10); n > 0; n--) title.append(words.get(random.nextInt(words.size()))).append(' ');
            texts.add(new Text(title.toString().strip(), "Done: " + title.toString().strip(), List.of("src/" + words.get(i % words.size()) + ".java")));
        }
        out.printf("prompt texts: generated (%s is absent)%n", file);
        return texts;
    }

    static Path defaultTasks() {
        Path beside = Path.of("../shared/data/kafka-history/tasks.jsonl").toAbsolutePath().normalize();
        Path above = Path.of("../../shared/data/kafka-history/tasks.jsonl").toAbsolutePath().normalize();
        return Files.isRegularFile(beside) || !Files.isRegularFile(above) ? beside : above;
    }

    static String cut(String s, int max) {
        return s == null || s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}

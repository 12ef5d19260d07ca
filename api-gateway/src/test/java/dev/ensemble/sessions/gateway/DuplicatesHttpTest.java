package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrent duplicates over HTTP (issue 14, item 4): eight clients post overlapping batches (the same eventIds) for
 * three accounts at the same time, each through either of two gateway instances; afterwards the event log holds each
 * eventId exactly once, and exactly one post of each was answered as its append (every other one: duplicate).
 */
class DuplicatesHttpTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final List<String> ACCOUNTS = List.of("acct-ana", "acct-bo", "acct-cy");
    static final int EVENTS_PER_ACCOUNT = 60;
    static final int CLIENTS = 8;
    static final int BATCHES_PER_CLIENT = 12;
    static final int BATCH = 25;
    static KafkaTestCluster cluster;
    static final List<Gateway> gateways = new ArrayList<>();
    static final Tokens tokens = Tokens.inMemory();
    static Path dir;
    static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void start() throws Exception {
        cluster = KafkaTestCluster.start();
        try (Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
        }
        for (String account : ACCOUNTS) {
            tokens.register(token(account), new Principal(account, "service", "web"));
        }
        dir = Files.createTempDirectory("gw-dup");
        for (int i = 0; i < 2; i++) {
            gateways.add(new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, dir.resolve("gateway-" + i), 1,
                    tokens, Clock.systemUTC())).start());
        }
        for (Gateway g : gateways) {
            g.awaitReady(Duration.ofSeconds(120));
        }
    }

    @AfterAll
    static void stop() {
        gateways.forEach(Gateway::stop);
        cluster.close();
    }

    static String token(String account) {
        return "token-" + account;
    }

    static String eventId(int account, int n) {
        return String.format("d0000000-0000-4000-8000-%06d%06d", account, n);
    }

    static String event(int account, int n) {
        return "{\"eventId\":\"" + eventId(account, n) + "\",\"type\":\"TaskChanged\",\"account\":\"" + ACCOUNTS.get(account)
                + "\",\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"person:ana\","
                + "\"payload\":{\"taskId\":\"task-" + n + "\",\"status\":\"OPEN\",\"pinned\":false}}";
    }

    @Test
    void eightClientsPostingOverlappingBatchesThroughTwoInstancesLeaveEachEventIdInTheLogOnce() throws Exception {
        Map<String, AtomicInteger> appendedAnswers = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> duplicateAnswers = new ConcurrentHashMap<>();
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger retries = new AtomicInteger();
        java.util.Set<String> posted = ConcurrentHashMap.newKeySet();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        List<Future<?>> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            int client = c;
            clients.add(pool.submit(() -> {
                Random random = new Random(client);
                go.await();
                for (int b = 0; b < BATCHES_PER_CLIENT; b++) {
                    // every client posts the same batches in the same order, through alternating instances: the
                    // same eventIds arrive at both instances and on several threads of each at once
                    int account = b % ACCOUNTS.size();
                    List<Integer> ns = new ArrayList<>();
                    for (int n = 0; n < EVENTS_PER_ACCOUNT; n++) {
                        ns.add(n);
                    }
                    Collections.shuffle(ns, new Random(b)); // overlapping: each batch a different mix of the same ids
                    List<String> batch = new ArrayList<>();
                    for (int n : ns.subList(0, BATCH)) {
                        batch.add(event(account, n));
                        posted.add(eventId(account, n));
                    }
                    if (random.nextBoolean()) {
                        batch.add(batch.get(0)); // and a copy inside the batch
                    }
                    Gateway via = gateways.get((client + b) % gateways.size());
                    // as a client does: what is answered "post it again" (503, or rejected while the partitions move
                    // between the instances) is posted again, a few times
                    for (int attempt = 0; attempt < 5 && !batch.isEmpty(); attempt++) {
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + via.port() + "/api/events"))
                                .header("Authorization", "Bearer " + token(ACCOUNTS.get(account)))
                                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(120))
                                .POST(HttpRequest.BodyPublishers.ofString("[" + String.join(",", batch) + "]")).build(),
                                HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() == 503) {
                            retries.incrementAndGet();
                            Thread.sleep(500);
                            continue;
                        }
                        if (r.statusCode() != 200) {
                            problems.add("client " + client + " batch " + b + ": " + r.statusCode() + " " + r.body());
                            break;
                        }
                        List<String> again = new ArrayList<>();
                        JsonNode results = JSON.readTree(r.body()).get("results");
                        for (int i = 0; i < results.size(); i++) {
                            JsonNode result = results.get(i);
                            String id = result.get("eventId").asText();
                            if (!"accepted".equals(result.path("status").asText())) {
                                assertThat(result.path("reason").asText()).as(result.toString()).contains("post it again");
                                again.add(batch.get(i));
                            } else if (result.path("duplicate").asBoolean(false)) {
                                duplicateAnswers.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                            } else {
                                appendedAnswers.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                            }
                        }
                        retries.addAndGet(again.isEmpty() ? 0 : 1);
                        batch = again;
                    }
                    if (!batch.isEmpty()) {
                        problems.add("client " + client + " batch " + b + ": not accepted after 5 posts: " + batch.size() + " events");
                    }
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : clients) {
            f.get();
        }
        pool.shutdown();
        assertThat(problems).as("every post answered, every event accepted (" + retries + " posted again)").isEmpty();

        Map<String, Integer> appendedOnce = new TreeMap<>();
        appendedAnswers.forEach((id, n) -> appendedOnce.put(id, n.get()));
        assertThat(appendedOnce.values()).as("no two posts of an eventId both appended it").containsOnly(1);
        assertThat(appendedOnce.keySet()).as("each eventId appended by one post (a commit not confirmed in time would be"
                + " answered duplicate when posted again; none is expected here)").isEqualTo(posted);
        assertThat(duplicateAnswers).as("the others were told it was a duplicate").isNotEmpty();

        Map<String, Integer> inLog = readLog();
        assertThat(inLog.keySet()).as("every posted eventId is in the log").isEqualTo(posted);
        Map<String, Integer> twice = new TreeMap<>();
        inLog.forEach((id, n) -> {
            if (n != 1) {
                twice.put(id, n);
            }
        });
        assertThat(twice).as("eventIds in the log more than once").isEmpty();
    }

    /**
     * An instance that stops closes its port before its read side leaves the group, and until the others' next
     * assignment their read sides still name it as the holder of its accounts (for up to the session timeout when it
     * died without leaving). A post for such an account that comes in meanwhile waits for the partitions to move and is
     * appended; it is not answered 503 at once because the holder refuses the connection.
     */
    @Test
    void postsForTheAccountsOfAnInstanceThatIsStoppingAreTakenByTheOthers() throws Exception {
        List<String> accounts = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            accounts.add("acct-moved-" + i);
            tokens.register(token(accounts.get(i)), new Principal(accounts.get(i), "service", "web"));
        }
        Gateway third = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, dir.resolve("gateway-third"), 1,
                tokens, Clock.systemUTC())).start();
        int port = third.port();
        String at = "127.0.0.1:" + port;
        List<String> held = new ArrayList<>();
        ExecutorService stopping = Executors.newSingleThreadExecutor();
        try {
            long until = System.currentTimeMillis() + 120_000;
            while (held.isEmpty() && System.currentTimeMillis() < until) {
                for (String a : accounts) {
                    if (gateways.stream().allMatch(g -> g.ownerOf(a).filter(at::equals).isPresent())) {
                        held.add(a);
                    }
                }
                Thread.sleep(100);
            }
            assertThat(held).as("the third instance holds some of the accounts").isNotEmpty();
            Future<?> stopped = stopping.submit(third::stop);
            // its port is closed first; its read side is still in the group for a while after
            while (!refused(port)) {
                Thread.sleep(5);
            }
            for (Gateway via : gateways) {
                for (String account : held) {
                    String id = String.format("d1000000-0000-4000-8000-%06d%06d", accounts.indexOf(account), gateways.indexOf(via));
                    String event = "{\"eventId\":\"" + id + "\",\"type\":\"TaskChanged\",\"account\":\"" + account
                            + "\",\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"person:ana\","
                            + "\"payload\":{\"taskId\":\"task-1\",\"status\":\"OPEN\",\"pinned\":false}}";
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + via.port() + "/api/events"))
                            .header("Authorization", "Bearer " + token(account)).header("Content-Type", "application/json")
                            .timeout(Duration.ofSeconds(120)).POST(HttpRequest.BodyPublishers.ofString(event)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).as(account + " via instance " + gateways.indexOf(via) + ": " + r.body()).isEqualTo(200);
                }
            }
            stopped.get();
        } finally {
            third.stop();
            stopping.shutdown();
        }
        for (Gateway g : gateways) {
            g.awaitReady(Duration.ofSeconds(120));
        }
    }

    /** Whether nothing listens on the port any more. */
    static boolean refused(int port) {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            return false;
        } catch (java.io.IOException e) {
            return true;
        }
    }

    /** Every committed record of {@link #ACCOUNTS}' in sessions.events: eventId → how many times. */
    static Map<String, Integer> readLog() {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<String, Integer> out = new TreeMap<>();
        var events = Topics.eventSerde().deserializer();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = consumer.partitionsFor(Topics.EVENTS.name()).stream()
                    .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            long until = System.currentTimeMillis() + 60_000;
            while (parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp)) && System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (ACCOUNTS.contains(r.key())) {
                        Event e = events.deserialize(r.topic(), r.value());
                        out.merge(e.getEventId(), 1, Integer::sum);
                    }
                }
            }
        }
        return out;
    }
}

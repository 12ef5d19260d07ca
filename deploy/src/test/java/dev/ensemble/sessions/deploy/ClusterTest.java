package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.gateway.Principal;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scale-out on a real cluster (DESIGN.md §8, issue 18): three in-process KRaft brokers (and a controller node of their
 * own) with {@code deploy/compose/kafka.env}'s replication settings (replication factor 3, min ISR 2, the offsets and
 * transaction state too), two projector and two gateway instances as JVMs of their own ({@code run projector},
 * {@code run gateway}) with {@code deploy/compose/services.env}'s settings (standby replicas 1), the same files the
 * compose file reads. One shared cluster, small event counts, three phases:
 * <ol>
 *   <li>routing: accounts on every partition, read through either gateway, give the same answer, and each gateway
 *       holds some of them (both owners answer);</li>
 *   <li>{@code kill -9} of one projector and one gateway while events are posted: the others take over; reads of the
 *       killed gateway's accounts answer 503 with Retry-After at most, for a measured time;</li>
 *   <li>one broker stopped while events are posted: the services go on.</li>
 * </ol>
 * At the end every event a gateway accepted (200, counted in {@code accepted}) is in the event log and its session
 * in the views.
 */
class ClusterTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The compose folder (the test runs in the deploy module's folder). */
    static final Path COMPOSE = Path.of("compose");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    @Timeout(value = 25, unit = TimeUnit.MINUTES)
    void twoInstancesOfEachStatefulServiceOnThreeBrokers(@TempDir Path dir) throws Exception {
        long t0 = System.nanoTime();
        Map<String, String> brokerSettings = settingsOf(EnvFile.read(COMPOSE.resolve("kafka.env")));
        Map<String, String> serviceEnvironment = EnvFile.read(COMPOSE.resolve("services.env"));
        int partitions = Integer.parseInt(serviceEnvironment.get("ENSEMBLE_PARTITIONS"));
        try (KafkaTestCluster cluster = KafkaTestCluster.start(1, 3, brokerSettings)) {
            log("3 brokers up in %d s", seconds(t0));
            // two accounts on each partition of the event log, one writer and one reader token each
            Path tokensFile = dir.resolve("tokens.json");
            Tokens tokens = Tokens.load(tokensFile);
            List<String> accounts = accountsOnEveryPartition(partitions, 2);
            for (String a : accounts) {
                tokens.register("w-" + a, new Principal(a, "service", "web"));
                tokens.register("r-" + a, new Principal(a, "admin", "ana"));
            }
            Map<String, String> env = new HashMap<>(serviceEnvironment);
            env.put("KAFKA_BOOTSTRAP_SERVERS", cluster.bootstrapServers());
            int[] ports = {freePort(), freePort()};
            List<Process> processes = new ArrayList<>();
            try {
                Process p1 = service(dir, env, processes, "projector-1", "projector");
                Process p2 = service(dir, env, processes, "projector-2", "projector");
                Process g1 = service(dir, env, processes, "gateway-1", "gateway", "--host", "127.0.0.1", "--port", "" + ports[0],
                        "--application-server", "127.0.0.1:" + ports[0], "--tokens", tokensFile.toString());
                Process g2 = service(dir, env, processes, "gateway-2", "gateway", "--host", "127.0.0.1", "--port", "" + ports[1],
                        "--application-server", "127.0.0.1:" + ports[1], "--tokens", tokensFile.toString());
                List<String> names = List.of("projector-1", "projector-2", "gateway-1", "gateway-2");
                for (int i = 0; i < names.size(); i++) {
                    awaitReady(processes.get(i), dir.resolve(names.get(i) + ".log"), t0);
                }
                log("2 projectors and 2 gateways ready at %d s", seconds(t0));
                try (Admin admin = cluster.admin()) {
                    assertReplicated(admin, Topics.EVENTS.name(), partitions);
                    assertReplicated(admin, Topics.SESSIONS_VIEW.name(), partitions);
                }

                // 1. routing: every account's session read through either gateway is the same; each gateway holds some
                Traffic traffic = new Traffic(accounts, ports);
                for (String a : accounts) {
                    traffic.postUntilAccepted(a, "route-" + a, ports[accounts.indexOf(a) % 2]);
                }
                Map<Integer, List<String>> held = new LinkedHashMap<>();
                for (String a : accounts) {
                    JsonNode via1 = awaitSession(ports[0], a, "route-" + a);
                    JsonNode via2 = awaitSession(ports[1], a, "route-" + a);
                    assertThat(via2).as("account %s read through each gateway", a).isEqualTo(via1);
                    int holder = holderOf(ports, a, "route-" + a);
                    held.computeIfAbsent(holder, k -> new ArrayList<>()).add(a);
                }
                log("accounts held by gateway on port %d: %s; on port %d: %s", ports[0], held.get(ports[0]), ports[1], held.get(ports[1]));
                assertThat(held.keySet()).as("both gateways hold some accounts: %s", held).containsExactlyInAnyOrder(ports[0], ports[1]);

                // 2. kill -9 of one projector and one gateway while events are posted through both gateways
                String heldBy2 = held.get(ports[1]).get(0);
                traffic.start();
                Thread.sleep(3_000);
                long killed = System.nanoTime();
                p2.destroyForcibly(); // SIGKILL
                g2.destroyForcibly();
                traffic.gatewayGone(ports[1]);
                log("killed projector-2 and gateway-2 (-9) after %d accepted events", traffic.accepted.size());
                ReadWindow window = readsUntilAnswered(ports[0], heldBy2, killed);
                log("reads of %s (held by the killed gateway) through the other: %s", heldBy2, window);
                assertThat(window.otherStatuses).as("answers other than 200 and 503: %s", window.otherStatuses).isEmpty();
                assertThat(window.unavailableWithoutRetryAfter).as("503s without Retry-After").isZero();
                int acceptedAtKill = traffic.accepted.size();
                awaitMoreAccepted(traffic, acceptedAtKill + 10, Duration.ofMinutes(3));
                log("after the kill: %d events accepted, %d in all", traffic.accepted.size() - acceptedAtKill, traffic.accepted.size());

                // 3. one broker stopped while events are posted
                int broker = cluster.brokerIds().get(0);
                long stopping = System.nanoTime();
                cluster.stopBroker(broker);
                log("broker %d stopped in %d ms", broker, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopping));
                int acceptedAtStop = traffic.accepted.size();
                awaitMoreAccepted(traffic, acceptedAtStop + 10, Duration.ofMinutes(3));
                traffic.stop();
                log("after the broker stopped: %d events accepted; %d in all; %d posts refused (503) and posted again",
                        traffic.accepted.size() - acceptedAtStop, traffic.accepted.size(), traffic.refused.get());
                assertThat(p1.isAlive()).as("projector-1 runs").isTrue();
                assertThat(g1.isAlive()).as("gateway-1 runs").isTrue();

                // nothing accepted is lost: every accepted event in the log, every one's session in the views
                Set<String> inLog = eventIdsInLog(cluster.bootstrapServers());
                Set<String> missing = new HashSet<>(traffic.accepted.keySet());
                missing.removeAll(inLog);
                assertThat(missing).as("accepted events missing from the event log").isEmpty();
                Map<String, Set<String>> runsByAccount = new HashMap<>();
                traffic.accepted.values().forEach(r -> runsByAccount.computeIfAbsent(r.account, k -> new HashSet<>()).add(r.runId));
                for (var e : runsByAccount.entrySet()) {
                    awaitSessions(ports[0], e.getKey(), e.getValue());
                }
                log("all %d accepted events are in the log and their sessions readable; %d s in all", traffic.accepted.size(), seconds(t0));
            } finally {
                for (Process p : processes) {
                    p.destroyForcibly();
                }
            }
        }
    }

    /**
     * Waits until the service prints its ready line: up to 10 minutes from {@code since} (four JVMs and three brokers
     * start together on a machine that may be busy; two instances of a Streams service with standbys may rebalance
     * more than once before both run).
     */
    private static void awaitReady(Process p, Path log, long since) throws Exception {
        while (!Files.readString(log).contains(RunCommand.READY)) {
            assertThat(p.isAlive()).as("ended before it was ready:%n%s", Files.readString(log)).isTrue();
            assertThat(seconds(since)).as("not ready within 10 minutes:%n%s", Files.readString(log)).isLessThan(600);
            Thread.sleep(200);
        }
    }

    /** The broker settings of a {@code KAFKA_*} env file: {@code KAFKA_MIN_INSYNC_REPLICAS} is {@code min.insync.replicas}. */
    static Map<String, String> settingsOf(Map<String, String> variables) {
        return KafkaEnvironment.settings(variables);
    }

    /** {@code perPartition} accounts on each of the event log's partitions, in partition order. */
    static List<String> accountsOnEveryPartition(int partitions, int perPartition) {
        Map<Integer, List<String>> by = new java.util.TreeMap<>();
        for (int i = 0; by.size() < partitions || by.values().stream().anyMatch(l -> l.size() < perPartition); i++) {
            String a = "acct-cluster-" + i;
            List<String> l = by.computeIfAbsent(Keys.accountPartition(a, partitions), k -> new ArrayList<>());
            if (l.size() < perPartition) {
                l.add(a);
            }
        }
        return by.values().stream().flatMap(List::stream).toList();
    }

    private static Process service(Path dir, Map<String, String> env, List<Process> processes, String name, String... args)
            throws Exception {
        Map<String, String> e = new HashMap<>(env);
        e.put("ENSEMBLE_STATE_DIR", dir.resolve("state/" + name).toString());
        Process p = ServicesAloneTest.start(dir.resolve(name + ".log"), e, args);
        processes.add(p);
        return p;
    }

    private static void assertReplicated(Admin admin, String topic, int partitions) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        assertThat(d.partitions()).as("%s partitions", topic).hasSize(partitions);
        assertThat(d.partitions()).as("%s: 3 replicas each", topic).allMatch(p -> p.replicas().size() == 3);
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        String minIsr = admin.describeConfigs(List.of(r)).all().get().get(r).get("min.insync.replicas").value();
        assertThat(minIsr).as("%s min.insync.replicas", topic).isEqualTo("2");
        for (String internal : List.of("__transaction_state", "__consumer_offsets")) {
            TopicDescription t = admin.describeTopics(List.of(internal)).allTopicNames().get().get(internal);
            assertThat(t.partitions()).as("%s: 3 replicas each", internal).allMatch(p -> p.replicas().size() == 3);
        }
    }

    /** The session {@code id} of {@code account} read through the gateway at {@code port}, once it is there (2 min). */
    private static JsonNode awaitSession(int port, String account, String id) throws Exception {
        long until = System.currentTimeMillis() + 120_000;
        HttpResponse<String> last = null;
        while (System.currentTimeMillis() < until) {
            last = send(port, "GET", "/api/agent/sessions/" + id, "r-" + account, null, false);
            if (last.statusCode() == 200) {
                return JSON.readTree(last.body());
            }
            Thread.sleep(300);
        }
        throw new AssertionError("session " + id + " of " + account + " not readable through port " + port + ": "
                + (last == null ? "no answer" : last.statusCode() + " " + last.body()));
    }

    /** The port of the gateway that holds {@code account}: the one that answers the read without forwarding it. */
    private static int holderOf(int[] ports, String account, String id) throws Exception {
        List<Integer> holders = new ArrayList<>();
        for (int port : ports) {
            HttpResponse<String> r = send(port, "GET", "/api/agent/sessions/" + id, "r-" + account, null, true);
            assertThat(r.statusCode()).as("local read of %s on %d: %s", account, port, r.body()).isIn(200, 404);
            if (r.statusCode() == 200) {
                holders.add(port);
            }
        }
        assertThat(holders).as("the gateways holding %s", account).hasSize(1);
        return holders.get(0);
    }

    /** How the reads of an account went from {@code since} until one answered 200. */
    record ReadWindow(long firstOkMs, long last503Ms, int answers503, int unavailableWithoutRetryAfter, List<Integer> otherStatuses) {
        @Override
        public String toString() {
            // a read forwarded to the dead holder waits inside the gateway (up to 10 s) for the account to move
            return "first 200 at " + firstOkMs + " ms after the kill; " + (answers503 == 0 ? "no 503 before it"
                    : answers503 + " answers 503 before it (the last at " + last503Ms + " ms), "
                    + (unavailableWithoutRetryAfter == 0 ? "all" : "not all") + " with Retry-After");
        }
    }

    private static ReadWindow readsUntilAnswered(int port, String account, long since) throws Exception {
        int n503 = 0;
        int withoutRetry = 0;
        long last503 = -1;
        List<Integer> other = new ArrayList<>();
        long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (System.nanoTime() < until) {
            HttpResponse<String> r = send(port, "GET", "/api/agent/sessions?limit=1", "r-" + account, null, false);
            long at = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
            if (r.statusCode() == 200) { // answered from the taken-over stores: the account's sessions, not an empty list
                assertThat(JSON.readTree(r.body()).path("sessions")).as("the first 200 for %s after the kill: %s", account, r.body())
                        .isNotEmpty();
                return new ReadWindow(at, last503, n503, withoutRetry, other);
            }
            if (r.statusCode() == 503) {
                n503++;
                last503 = at;
                if (r.headers().firstValue("Retry-After").isEmpty()) {
                    withoutRetry++;
                    log("503 without Retry-After at %d ms: %s", at, r.body());
                }
            } else {
                other.add(r.statusCode());
            }
            Thread.sleep(250);
        }
        throw new AssertionError("reads of " + account + " not answered within 3 minutes of the kill");
    }

    private static void awaitMoreAccepted(Traffic traffic, int count, Duration within) throws InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        while (traffic.accepted.size() < count) {
            assertThat(System.nanoTime()).as("%d accepted events within %s (now %d; errors %s)", count, within,
                    traffic.accepted.size(), traffic.errors).isLessThan(until);
            Thread.sleep(200);
        }
    }

    /** Every session id of {@code runs} readable in {@code account}'s list through the gateway at {@code port} (2 min). */
    private static void awaitSessions(int port, String account, Set<String> runs) throws Exception {
        long until = System.currentTimeMillis() + 120_000;
        Set<String> missing = runs;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = send(port, "GET", "/api/agent/sessions?limit=500", "r-" + account, null, false);
            if (r.statusCode() == 200) {
                Set<String> have = new HashSet<>();
                JSON.readTree(r.body()).path("sessions").forEach(s -> have.add(s.path("id").asText()));
                missing = runs.stream().filter(id -> !have.contains(id)).collect(Collectors.toSet());
                if (missing.isEmpty()) {
                    return;
                }
            }
            Thread.sleep(500);
        }
        throw new AssertionError("sessions of accepted events missing in " + account + ": " + missing);
    }

    private static Set<String> eventIdsInLog(String bootstrap) {
        Set<String> ids = new HashSet<>();
        try (KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", bootstrap,
                "isolation.level", "read_committed"), Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer())) {
            List<TopicPartition> tps = c.partitionsFor(Topics.EVENTS.name()).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long until = System.currentTimeMillis() + 60_000;
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp)) && System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, Event> r : c.poll(Duration.ofMillis(500))) {
                    ids.add(r.value().getEventId().toString());
                }
            }
        }
        return ids;
    }

    /** A posted event the gateway accepted. */
    record Accepted(String account, String runId) {
    }

    /**
     * Posts one new session's RunClaimed event at a time, round robin over the accounts and the gateways still running,
     * each until a gateway accepts it (the same event id again after a refusal: the intake takes it once).
     */
    static final class Traffic {
        final Map<String, Accepted> accepted = new ConcurrentHashMap<>();
        final AtomicInteger refused = new AtomicInteger();
        final List<String> errors = new CopyOnWriteArrayList<>();
        private final List<String> accounts;
        private final List<Integer> ports = new CopyOnWriteArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean();
        private Thread thread;

        Traffic(List<String> accounts, int[] ports) {
            this.accounts = accounts;
            for (int p : ports) this.ports.add(p);
        }

        void start() {
            running.set(true);
            thread = new Thread(() -> {
                int i = 0;
                while (running.get()) {
                    String account = accounts.get(i % accounts.size());
                    try {
                        postUntilAccepted(account, "job-" + account + "-" + i, ports.get(i % ports.size()));
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        errors.add(e.toString());
                    }
                    i++;
                }
            }, "cluster-test-traffic");
            thread.start();
        }

        void gatewayGone(int port) {
            ports.remove(Integer.valueOf(port));
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(120_000);
        }

        /** Posts the RunClaimed of session {@code runId} until one of the running gateways accepts it (first {@code port}). */
        void postUntilAccepted(String account, String runId, int port) throws Exception {
            String eventId = UUID.randomUUID().toString();
            String body = "[{\"eventId\":\"" + eventId + "\",\"type\":\"RunClaimed\",\"account\":\"" + account
                    + "\",\"space\":\"web:space-1\",\"occurredAt\":\"" + Instant.now().truncatedTo(ChronoUnit.MILLIS)
                    + "\",\"source\":\"service:web\",\"payload\":{\"runId\":\"" + runId + "\",\"taskId\":\"task-" + runId
                    + "\",\"computerId\":\"desk-1\",\"agent\":\"claude-code\",\"folder\":\"/tmp/cluster\","
                    + "\"task\":{\"title\":\"Scale out " + runId + "\"}}}]";
            long until = System.currentTimeMillis() + 180_000;
            int target = port;
            while (System.currentTimeMillis() < until) {
                try {
                    HttpResponse<String> r = send(target, "POST", "/api/events", "w-" + account, body, false);
                    // accepted (or a duplicate: taken by an earlier post whose answer was lost)
                    if (r.statusCode() == 200 && JSON.readTree(r.body()).path("accepted").asInt() == 1) {
                        accepted.put(eventId, new Accepted(account, runId));
                        return;
                    }
                    if (r.statusCode() != 503) {
                        throw new AssertionError("post of " + runId + ": " + r.statusCode() + " " + r.body());
                    }
                    refused.incrementAndGet();
                } catch (IOException e) {
                    refused.incrementAndGet(); // a gateway killed while answering: post again
                }
                List<Integer> now = ports;
                target = now.get((now.indexOf(target) + 1 + now.size()) % now.size());
                Thread.sleep(500);
            }
            throw new AssertionError("post of " + runId + " not accepted within 3 minutes");
        }
    }

    static HttpResponse<String> send(int port, String method, String path, String token, String body, boolean local)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(120))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (local) {
            b.header("X-Ensemble-Forwarded", "cluster-test"); // answered by this instance, never forwarded
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static long seconds(long since) {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - since);
    }

    private static void log(String format, Object... args) {
        System.out.printf("[cluster] " + format + "%n", args);
    }
}

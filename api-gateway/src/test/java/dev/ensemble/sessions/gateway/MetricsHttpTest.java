package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.schema.testing.PrometheusText;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
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
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /metrics} over HTTP on a real in-process broker (issue 19, item 4): only the scrape token opens it; the
 * scrape is the Prometheus text format (read by {@link PrometheusText}, strictly); the JVM's, the read side's Kafka
 * Streams', the gateway producer's and the HTTP requests' series are there; the counters of events accepted, refused and
 * dead-lettered by type, and of requests by route and status, move when events are posted.
 */
class MetricsHttpTest {
    static KafkaTestCluster cluster;
    static Gateway gateway;
    static final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    static final String SCRAPE = "scrape-token-for-the-test";
    static final String ANA = "token-ana";
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        cluster = KafkaTestCluster.start();
        try (Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
        }
        Path dir = Files.createTempDirectory("gw-metrics");
        Tokens tokens = Tokens.inMemory();
        tokens.register(ANA, new Principal("acct-ana", "person", "ana"));
        gateway = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, dir.resolve("gateway"), 1,
                tokens, Clock.systemUTC())).withMetrics(registry, SCRAPE).start();
        gateway.awaitReady(Duration.ofSeconds(120));
    }

    @AfterAll
    static void stop() {
        gateway.stop();
        cluster.close();
    }

    static HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path)).GET();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> post(String token, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static PrometheusText scrape() throws Exception {
        HttpResponse<String> r = get("/metrics", SCRAPE);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain; version=0.0.4");
        return PrometheusText.parse(r.body());
    }

    static String taskChanged(String account) {
        return "{\"eventId\":\"" + UUID.randomUUID() + "\",\"type\":\"TaskChanged\",\"account\":\"" + account
                + "\",\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"person:ana\","
                + "\"payload\":{\"taskId\":\"task-1\",\"status\":\"OPEN\",\"pinned\":false}}";
    }

    @Test
    void onlyTheScrapeTokenOpensMetrics() throws Exception {
        HttpResponse<String> none = get("/metrics", null);
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.body()).contains("\"error\":\"unauthorized\"").contains("metrics-token");
        assertThat(get("/metrics", ANA).statusCode()).as("an API token does not open /metrics").isEqualTo(401);
        assertThat(get("/metrics", SCRAPE + "x").statusCode()).isEqualTo(401);
        assertThat(get("/metrics", SCRAPE).statusCode()).isEqualTo(200);
        assertThat(gateway.metricsToken()).isEqualTo(SCRAPE);
        assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/metrics"))
                .header("Authorization", "bearer " + SCRAPE).GET().build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                .as("the scheme in any case, as the API takes it").isEqualTo(200);
        HttpResponse<String> head = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/metrics"))
                .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(head.statusCode()).as("HEAD without the scrape token").isEqualTo(401);
        assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/metrics"))
                .header("Authorization", "Bearer " + SCRAPE).method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).as("HEAD with it").isEqualTo(200);
    }

    @Test
    void theScrapeHasTheJvmKafkaAndHttpSeries() throws Exception {
        assertThat(get("/api/agent/sessions/no-such-session", ANA).statusCode()).isEqualTo(404);
        PrometheusText m = scrape();
        assertThat(m.type("jvm_memory_used_bytes")).isEqualTo("gauge");
        assertThat(m.value("jvm_memory_used_bytes", Map.of("area", "heap"))).isPositive();
        // the GC pause timer appears with the first collection; the allocation counter is there from the start
        assertThat(m.names()).contains("jvm_gc_memory_allocated_bytes_total", "jvm_threads_live_threads", "process_uptime_seconds");
        // the read side's Kafka Streams metrics and its clients', and the intake producer's
        assertThat(m.names()).anyMatch(n -> n.startsWith("kafka_stream_thread_"));
        assertThat(m.series("kafka_stream_thread_process_total")).isNotEmpty()
                .allMatch(s -> "gateway".equals(s.labels().get("service")));
        assertThat(m.names()).anyMatch(n -> n.startsWith("kafka_consumer_"));
        assertThat(m.series("kafka_producer_record_send_total")).anyMatch(s -> s.labels().get("client_id") != null
                && s.labels().get("client_id").startsWith("ensemble-gateway-intake"));
        // requests by route template (not the path) and status
        assertThat(m.value("http_server_requests_seconds_count",
                Map.of("method", "GET", "route", "/api/agent/sessions/{id}", "status", "404"))).isGreaterThanOrEqualTo(1);
        assertThat(m.series("http_server_requests_seconds_count")).noneMatch(s -> s.labels().get("route").contains("no-such-session"));
    }

    @Test
    void postedEventsMoveTheCounters() throws Exception {
        PrometheusText before = scrape();
        Map<String, String> accepted = Map.of("type", "TaskChanged");
        Map<String, String> invalid = Map.of("type", "TaskChanged", "error", "invalid");
        Map<String, String> forbidden = Map.of("type", "TaskChanged", "error", "forbidden");
        Map<String, String> dead = Map.of("type", "TaskChanged", "service", "gateway");
        Map<String, String> posted = Map.of("method", "POST", "route", "/api/events", "status", "200");

        // two good events, one whose occurredAt is not a time (invalid: dead-lettered), one for another account (forbidden)
        String bad = taskChanged("acct-ana").replace("2026-11-02T09:00:00Z", "not-a-time");
        HttpResponse<String> r = post(ANA, "[" + taskChanged("acct-ana") + "," + taskChanged("acct-ana") + "," + bad + ","
                + taskChanged("acct-bo") + "]");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).contains("\"accepted\":2", "\"rejected\":2");

        PrometheusText after = scrape();
        assertThat(after.type("ensemble_events_accepted_total")).isEqualTo("counter");
        assertThat(after.value("ensemble_events_accepted_total", accepted) - before.valueOr("ensemble_events_accepted_total", accepted, 0))
                .isEqualTo(2.0);
        assertThat(after.value("ensemble_events_refused_total", invalid) - before.valueOr("ensemble_events_refused_total", invalid, 0))
                .isEqualTo(1.0);
        assertThat(after.value("ensemble_events_refused_total", forbidden) - before.valueOr("ensemble_events_refused_total", forbidden, 0))
                .isEqualTo(1.0);
        assertThat(after.value("ensemble_events_dead_lettered_total", dead) - before.valueOr("ensemble_events_dead_lettered_total", dead, 0))
                .isEqualTo(1.0);
        assertThat(after.value("http_server_requests_seconds_count", posted) - before.valueOr("http_server_requests_seconds_count", posted, 0))
                .isEqualTo(1.0);
        // the accepted ones went through a partition's transactional producer, the dead letter through the intake producer
        double appended = after.series("kafka_producer_record_send_total").stream()
                .filter(s -> s.labels().getOrDefault("client_id", "").startsWith(OnceAppender.TRANSACTIONAL_ID_PREFIX))
                .mapToDouble(PrometheusText.Sample::value).sum();
        assertThat(appended).as("appended by the partitions' producers").isGreaterThanOrEqualTo(1.0);
        assertThat(after.value("kafka_producer_record_send_total", Map.of("client_id", "ensemble-gateway-intake", "service", "gateway")))
                .as("the dead letter").isGreaterThanOrEqualTo(1.0);
        // the session-events feed reads them (on its own thread: soon after)
        double consumed = 0;
        for (long until = System.currentTimeMillis() + 30_000; consumed < 2 && System.currentTimeMillis() < until; Thread.sleep(200)) {
            consumed = scrape().series("kafka_consumer_fetch_manager_records_consumed_total").stream()
                    .filter(s -> s.labels().getOrDefault("client_id", "").startsWith("ensemble-gateway-session-events"))
                    .mapToDouble(PrometheusText.Sample::value).sum();
        }
        assertThat(consumed).as("records the session-events feed read").isGreaterThanOrEqualTo(2.0);

        // an event of a type the guide does not know is counted as unknown, not under the name it gave
        HttpResponse<String> odd = post(ANA, taskChanged("acct-ana").replace("\"TaskChanged\"", "\"NoSuchType\""));
        assertThat(odd.statusCode()).isEqualTo(400);
        PrometheusText last = scrape();
        assertThat(last.value("ensemble_events_refused_total", Map.of("type", "unknown", "error", "invalid"))).isGreaterThanOrEqualTo(1.0);
        assertThat(last.series("ensemble_events_refused_total")).noneMatch(s -> s.labels().get("type").equals("NoSuchType"));
    }
}

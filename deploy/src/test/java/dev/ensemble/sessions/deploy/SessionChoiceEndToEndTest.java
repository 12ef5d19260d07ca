package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionChoiceOutcome;
import dev.ensemble.sessions.events.SessionChoiceRecorded;
import dev.ensemble.sessions.gateway.Gateway;
import dev.ensemble.sessions.gateway.Principal;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.schema.testing.SharedData;
import dev.ensemble.sessions.choice.ConfigWatcher;
import dev.ensemble.sessions.choice.service.ChoiceService;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
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
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A session choice made over HTTP against the running system (issue "Session choice", Done when): the
 * contract's session is continued for a task that names its task, the decision is recorded on the event log,
 * and when the run ends its outcome says whether the agent really resumed.
 */
class SessionChoiceEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-02T12:00:00Z"), ZoneOffset.UTC);
    static KafkaTestCluster cluster;
    static Projector projector;
    static ChoiceService choice;
    static Gateway gateway;
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        cluster = KafkaTestCluster.start();
        try (Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
        }
        Path dir = Files.createTempDirectory("e2e");
        projector = new Projector(cluster.bootstrapServers(), dir.resolve("projector"), 1, Map.of("commit.interval.ms", 100));
        projector.start();
        choice = new ChoiceService(new ChoiceService.Settings(cluster.bootstrapServers(), dir.resolve("choice"), 1, "127.0.0.1", 0,
                new ConfigWatcher(null, CLOCK, ConfigWatcher.DEFAULT_INTERVAL, m -> { }), CLOCK)).start();
        Tokens tokens = Tokens.inMemory();
        tokens.register("t-ana", new Principal("acct-ana", "person", "ana"));
        gateway = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, dir.resolve("gateway"), 1, tokens,
                CLOCK, choice.url(), choice.secret())).start();
        gateway.awaitReady(Duration.ofSeconds(60));
        choice.awaitReady(Duration.ofSeconds(60));
    }

    @AfterAll
    static void stop() {
        gateway.stop();
        choice.stop();
        projector.stop();
        cluster.close();
    }

    static HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
                .header("Authorization", "Bearer t-ana").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Posts events as a computer does: a 503 (the gateway still starting, with Retry-After) is posted again, which is
     * safe since posting is idempotent by eventId; anything else is returned.
     */
    static HttpResponse<String> postEvents(String body) throws Exception {
        long until = System.currentTimeMillis() + 60_000;
        HttpResponse<String> r = post("/api/events", body);
        while (r.statusCode() == 503 && System.currentTimeMillis() < until) {
            System.out.println("posted again after 503: " + r.body());
            Thread.sleep(500);
            r = post("/api/events", body);
        }
        return r;
    }

    static String claim(String eventId, String runId, String continueFrom, String title, String linked) {
        return "{\"eventId\":\"" + eventId + "\",\"type\":\"RunClaimed\",\"account\":\"acct-ana\",\"space\":\"web:space-1\","
                + "\"occurredAt\":\"2026-11-02T12:00:00Z\",\"source\":\"computer:laptop-ana\",\"payload\":{\"runId\":\"" + runId + "\","
                + "\"taskId\":\"task-9\",\"computerId\":\"laptop-ana\",\"agent\":\"claude-code\",\"kind\":\"TASK_RUN\","
                + "\"project\":{\"id\":\"proj-rank\",\"name\":\"Ranking\"},"
                + (continueFrom == null ? "" : "\"continueFromJobId\":\"" + continueFrom + "\",")
                + "\"task\":{\"title\":\"" + title + "\",\"labels\":[],\"linkedTaskIds\":[" + linked + "]}}}";
    }

    @Test
    void aTaskThatNamesTheSessionsTaskContinuesItAndItsOutcomeIsRecorded() throws Exception {
        List<String> lines = Files.readAllLines(SharedData.require("contract/events-example.jsonl")).stream()
                .filter(l -> !l.isBlank() && !l.contains("SessionDeletionRequested")).toList();
        HttpResponse<String> posted = postEvents("[" + String.join(",", lines) + "]");
        assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);

        String request = claim("c0000000-0000-0000-0000-000000000001", "job-201", null, "Add paging to the ranking API", "\"task-7\"");
        JsonNode decision = null;
        long until = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = post("/api/session-choice", request);
            if (r.statusCode() == 200) {
                decision = JSON.readTree(r.body());
                // the choice service's view catches up with the contract's second run
                if ("job-102".equals(decision.path("continueFromJobId").asText())) {
                    break;
                }
            }
            Thread.sleep(200);
        }
        assertThat(decision).as("a decision").isNotNull();
        assertThat(decision.get("decision").asText()).as(decision.toString()).isEqualTo("CONTINUE");
        assertThat(decision.get("band").asText()).isEqualTo("CONFIDENT");
        assertThat(decision.get("sessionId").asText()).isEqualTo("job-101");
        assertThat(decision.get("continueFromJobId").asText()).isEqualTo("job-102");
        assertThat(decision.get("reason").asText()).contains("Build the ranking API");
        assertThat(decision.get("candidates")).hasSize(1);
        assertThat(decision.get("candidates").get(0).get("signals").get("link").asBoolean()).isTrue();
        assertThat(decision.get("configHash").asText()).isNotBlank();

        // the computer runs it in that session: same agent session id, so the agent really resumed
        String run = claim("c0000000-0000-0000-0000-000000000002", "job-201", "job-102", "Add paging to the ranking API", "\"task-7\"");
        String engine = "{\"eventId\":\"c0000000-0000-0000-0000-000000000003\",\"type\":\"EngineEvent\",\"account\":\"acct-ana\","
                + "\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T12:00:05Z\",\"source\":\"computer:laptop-ana\",\"payload\":"
                + "{\"runId\":\"job-201\",\"agentSessionId\":\"5b1e0f4a-8c3d-4b7e-a1f2-3c4d5e6f7a80\",\"contextUsed\":70000,\"contextSize\":200000}}";
        String done = "{\"eventId\":\"c0000000-0000-0000-0000-000000000004\",\"type\":\"RunStatusChanged\",\"account\":\"acct-ana\","
                + "\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T12:20:00Z\",\"source\":\"computer:laptop-ana\",\"payload\":"
                + "{\"runId\":\"job-201\",\"status\":\"DONE\",\"tokens\":5000,\"durationMs\":1200000}}";
        HttpResponse<String> reported = postEvents("[" + run + "," + engine + "," + done + "]");
        assertThat(reported.statusCode()).as(reported.body()).isEqualTo(200);

        List<Event> events = new ArrayList<>();
        try (KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                "group.id", "e2e", "auto.offset.reset", "earliest", "isolation.level", "read_committed"),
                Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer())) {
            c.subscribe(List.of(Topics.EVENTS.name()));
            long end = System.currentTimeMillis() + 60_000;
            while (System.currentTimeMillis() < end && events.stream().noneMatch(e -> e.getPayload() instanceof SessionChoiceOutcome)) {
                for (ConsumerRecord<String, Event> r : c.poll(Duration.ofMillis(200))) {
                    events.add(r.value());
                }
            }
        }
        List<SessionChoiceRecorded> records = events.stream().filter(e -> e.getPayload() instanceof SessionChoiceRecorded)
                .map(e -> (SessionChoiceRecorded) e.getPayload()).collect(Collectors.toList());
        assertThat(records).isNotEmpty();
        assertThat(records.get(records.size() - 1).getSessionId()).as("the decision acted on is the newest").isEqualTo("job-101");
        SessionChoiceOutcome outcome = events.stream().filter(e -> e.getPayload() instanceof SessionChoiceOutcome)
                .map(e -> (SessionChoiceOutcome) e.getPayload()).findFirst().orElseThrow();
        assertThat(outcome.getRunId()).isEqualTo("job-201");
        assertThat(outcome.getSessionId()).isEqualTo("job-101");
        assertThat(outcome.getResumed()).isTrue();
        assertThat(outcome.getTokens()).isEqualTo(5000L);
    }

    @Test
    void theChoiceServiceAnswersOnlyItsGateway() throws Exception {
        // any process of the computer can reach its local port: without the gateway's secret it records nothing for anyone
        String forged = claim("c0000000-0000-0000-0000-000000000010", "job-y", null, "t", "").replace("\"account\":\"acct-ana\"", "\"account\":\"acct-bo\"");
        for (String authorization : new String[]{null, "Bearer wrong", "Bearer " + choice.secret() + "x"}) {
            HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(choice.url() + "/choice/decide"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(forged));
            if (authorization != null) r.header("Authorization", authorization);
            HttpResponse<String> answer = http.send(r.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(String.valueOf(authorization)).isEqualTo(401);
            assertThat(JSON.readTree(answer.body()).get("message").asText()).contains("only its gateway");
        }
        HttpResponse<String> config = http.send(HttpRequest.newBuilder(URI.create(choice.url() + "/choice/config"))
                .header("Authorization", "Bearer " + choice.secret()).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(config.statusCode()).as("with the secret").isEqualTo(200);
        assertThat(JSON.readTree(config.body()).has("weights")).isTrue();

        Tokens tokens = Tokens.inMemory();
        tokens.register("t-ana", new Principal("acct-ana", "person", "ana"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0,
                        Files.createTempDirectory("gw"), 1, tokens, CLOCK, choice.url(), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("secret");
        // a gateway with another secret: the person gets a 502 that is not about their token
        Gateway other = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, Files.createTempDirectory("gw"), 1,
                tokens, CLOCK, choice.url(), "not-the-secret")).start();
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + other.port() + "/api/session-choice"))
                    .header("Authorization", "Bearer t-ana").header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(claim("c0000000-0000-0000-0000-000000000011", "job-z", null, "t", "")))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(JSON.readTree(r.body()).get("error").asText()).isEqualTo("bad_gateway");
        } finally {
            other.stop();
        }
    }

    @Test
    void anInvalidClaimIsRefusedNamingTheField() throws Exception {
        HttpResponse<String> r = post("/api/session-choice", claim("c0000000-0000-0000-0000-000000000010", "job-y", null, "t", "")
                .replaceFirst("\"occurredAt\":\"[^\"]*\"", "\"occurredAt\":\"yesterday\""));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).get("field").asText()).as(r.body()).isEqualTo("occurredAt");
    }

    @Test
    void aChoiceForAnotherAccountIsRefused() throws Exception {
        HttpResponse<String> r = post("/api/session-choice", claim("c0000000-0000-0000-0000-000000000009", "job-x", null, "t", "")
                .replace("\"account\":\"acct-ana\"", "\"account\":\"acct-bo\""));
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(r.body()).get("message").asText()).contains("your own account");
    }
}

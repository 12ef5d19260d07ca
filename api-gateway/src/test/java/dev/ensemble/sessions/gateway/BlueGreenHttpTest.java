package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.SessionDeletionSkipped;
import dev.ensemble.sessions.projector.ProjectorGenerations;
import dev.ensemble.sessions.projector.RetirementRules;
import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rebuild without downtime (docs/operations.md "Generations"; issue 15 item 3), on a real broker and over HTTP: while
 * a second projector generation replays the log beside the serving one and the gateway switches to its views, the
 * session list is polled: every answer is a 200 and the same as before the rebuild, and after it. The new generation
 * appends none of the deletion decisions it replays (the log holds as many as before), then decides the next deletion
 * alone; the old generation's view topics are gone.
 */
class BlueGreenHttpTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final String ANA = "t-ana";
    static final String LAPTOP = "t-laptop";
    static int seq;
    int port;

    @Test
    void theSessionListAnswersTheSameThroughoutARebuild(@TempDir Path dir) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            String bootstrap = cluster.bootstrapServers();
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
            List<String> steps = new CopyOnWriteArrayList<>();
            try (ProjectorGenerations projector = new ProjectorGenerations(bootstrap, dir.resolve("projector"), 1,
                    Map.of("commit.interval.ms", 100), RetirementRules.Config.defaults(), List.of("gateway"), steps::add).start()) {
                Tokens tokens = Tokens.inMemory();
                tokens.register(ANA, new Principal("acct-ana", "person", "ana"));
                tokens.register(LAPTOP, new Principal("acct-ana", "computer", "laptop"));
                Gateway gateway = new Gateway(new Gateway.Settings(bootstrap, "127.0.0.1", 0, dir.resolve("gateway"), 1, tokens,
                        Clock.systemUTC())).start();
                try {
                    gateway.awaitReady(Duration.ofSeconds(120));
                    port = gateway.port();
                    List<String> events = new ArrayList<>(List.of(event("ComputerStatus", "{\"computerId\":\"laptop\",\"online\":true,"
                            + "\"capabilities\":{\"sessionDelete\":1}}")));
                    for (int i = 1; i <= 20; i++) {
                        events.add(event("RunClaimed", "{\"runId\":\"a" + i + "\",\"taskId\":\"task-a" + i + "\",\"computerId\":\"laptop\","
                                + "\"agent\":\"claude-code\",\"task\":{\"title\":\"Task a" + i + "\"}}"));
                        events.add(event("RunStatusChanged", "{\"runId\":\"a" + i + "\",\"status\":\"DONE\"}"));
                    }
                    assertThat(send("POST", "/api/events", LAPTOP, "[" + String.join(",", events) + "]").statusCode()).isEqualTo(200);
                    await("/api/agent/sessions", j -> j.path("sessions").size() == 20);
                    deleteAndConfirm("a1");
                    JsonNode before = await("/api/agent/sessions", j -> j.path("sessions").toString().contains("\"deleted\":true"));
                    int decisionsBefore = decisions(bootstrap).size();
                    assertThat(decisionsBefore).as("accepted and deleted").isEqualTo(2);

                    AtomicBoolean polling = new AtomicBoolean(true);
                    List<String> wrong = new CopyOnWriteArrayList<>();
                    List<Integer> polls = new CopyOnWriteArrayList<>();
                    Thread poller = new Thread(() -> {
                        while (polling.get()) {
                            try {
                                HttpResponse<String> r = send("GET", "/api/agent/sessions", ANA, null);
                                polls.add(r.statusCode());
                                if (r.statusCode() != 200 || !JSON.readTree(r.body()).equals(before)) {
                                    wrong.add(r.statusCode() + " " + r.body());
                                }
                                Thread.sleep(20);
                            } catch (Exception e) {
                                wrong.add(e.toString());
                            }
                        }
                    });
                    poller.start();
                    Generations.markBuilding(bootstrap, new Generation(2));
                    long until = System.currentTimeMillis() + 300_000;
                    while (!(gateway.viewsGeneration().number() == 2 && !admin.listTopics().names().get().contains(Topics.SESSIONS_VIEW.name()))
                            && System.currentTimeMillis() < until) {
                        Thread.sleep(200);
                    }
                    Thread.sleep(1000);
                    polling.set(false);
                    poller.join();
                    assertThat(gateway.viewsGeneration()).as("the gateway reads generation 2; steps: " + steps).isEqualTo(new Generation(2));
                    assertThat(Generations.serving(bootstrap)).isEqualTo(new Generation(2));
                    assertThat(admin.listTopics().names().get()).as("generation 1's views are removed")
                            .doesNotContain(Topics.SESSIONS_VIEW.name(), Topics.RETIREMENT_VIEW.name())
                            .contains(new Generation(2).view(Topics.SESSIONS_VIEW).name());
                    assertThat(polls.size()).as("polled throughout").isGreaterThan(20);
                    assertThat(wrong).as("answers other than the one before the rebuild, of " + polls.size()).isEmpty();
                    assertThat(JSON.readTree(send("GET", "/api/agent/sessions", ANA, null).body())).isEqualTo(before);
                    assertThat(decisions(bootstrap)).as("the replay appended no decision again").hasSize(decisionsBefore);

                    // the new generation decides the next deletion, once
                    deleteAndConfirm("a2");
                    Thread.sleep(2000);
                    assertThat(decisions(bootstrap)).as("a2's acceptance and deletion, once each").hasSize(decisionsBefore + 2);
                } finally {
                    gateway.stop();
                }
            }
        }
    }

    /** A person deletes the session, the laptop confirms, and the session shows deleted. */
    private void deleteAndConfirm(String session) throws Exception {
        HttpResponse<String> r = send("DELETE", "/api/agent/sessions/" + session, ANA, null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        String requestId = JSON.readTree(r.body()).get("requestId").asText();
        await("/api/audit/deletions?sessionId=" + session, j -> j.path("deletions").size() == 1
                && "ACCEPTED".equals(j.get("deletions").get(0).path("decision").asText()));
        String answer = event("SessionDeletedOnComputer", "{\"sessionId\":\"" + session + "\",\"requestId\":\"" + requestId
                + "\",\"computerId\":\"laptop\",\"ok\":true,\"removedPaths\":[]}");
        assertThat(send("POST", "/api/events", LAPTOP, answer).statusCode()).isEqualTo(200);
        await("/api/agent/sessions/" + session, j -> j.path("deleted").asBoolean());
    }

    /** The projector's decisions in the log (SessionDeletionAccepted, SessionDeletionSkipped, SessionDeleted). */
    private static List<Event> decisions(String bootstrap) {
        List<Event> out = new ArrayList<>();
        try (KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", bootstrap, "isolation.level", "read_committed"),
                Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer())) {
            List<TopicPartition> tps = c.partitionsFor(Topics.EVENTS.name()).stream().map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long until = System.currentTimeMillis() + 30_000;
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp)) && System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, Event> r : c.poll(Duration.ofMillis(200))) {
                    Object p = r.value() == null ? null : r.value().getPayload();
                    if (p instanceof SessionDeletionAccepted || p instanceof SessionDeletionSkipped || p instanceof SessionDeleted) {
                        out.add(r.value());
                    }
                }
            }
        }
        return out;
    }

    static String event(String type, String payload) {
        return "{\"eventId\":\"e0000000-0000-0000-0000-" + String.format("%012d", ++seq) + "\",\"type\":\"" + type
                + "\",\"account\":\"acct-ana\",\"space\":\"web:space-1\",\"occurredAt\":\"" + Instant.now().minusSeconds(600)
                + "\",\"source\":\"computer:laptop\",\"payload\":" + payload + "}";
    }

    HttpResponse<String> send(String method, String path, String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    JsonNode await(String path, Predicate<JsonNode> ready) throws Exception {
        long until = System.currentTimeMillis() + 120_000;
        JsonNode last = null;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = send("GET", path, ANA, null);
            if (r.statusCode() == 200) {
                last = JSON.readTree(r.body());
                if (ready.test(last)) {
                    return last;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError(path + " never became ready; last: " + last);
    }
}

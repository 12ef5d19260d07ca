package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.commands.CleanupCommand;
import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deletion endpoints over HTTP against the projector on a real broker (guide §6): DELETE refused with 409
 * naming the computer to connect or update, a node's own sessions only and only confirmed, the audit, the
 * sweep command, and who may post which deletion event.
 */
class DeletionHttpTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static KafkaTestCluster cluster;
    static Projector projector;
    static Gateway gateway;
    static final HttpClient http = HttpClient.newHttpClient();
    static final String ANA = "t-ana";
    static final String NODE = "t-node-n1";
    static final String ADMIN = "t-admin";
    static final String LAPTOP = "t-laptop";
    static final String WEB = "t-web";

    @BeforeAll
    static void start() throws Exception {
        cluster = KafkaTestCluster.start();
        try (Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
        }
        Path dir = Files.createTempDirectory("gw-del");
        projector = new Projector(cluster.bootstrapServers(), dir.resolve("projector"), 1, Map.of("commit.interval.ms", 100));
        projector.start();
        Tokens tokens = Tokens.inMemory();
        tokens.register(ANA, new Principal("acct-ana", "person", "ana"));
        tokens.register(NODE, new Principal("acct-ana", "node", "n1"));
        tokens.register(ADMIN, new Principal("acct-ana", "admin", "ana"));
        tokens.register(LAPTOP, new Principal("acct-ana", "computer", "laptop"));
        tokens.register(WEB, new Principal("acct-ana", "service", "web"));
        gateway = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, dir.resolve("gateway"), 1,
                tokens, Clock.systemUTC())).start();
        gateway.awaitReady(Duration.ofSeconds(60));

        String t = "2026-11-02T09:0";
        List<String> events = new ArrayList<>(List.of(
                computer("laptop", true, 1), computer("desk", true, 0), computer("old-pc", false, 1),
                claim("a1", "laptop", null), done("a1"),
                claim("b1", "laptop", null), done("b1"), claim("b2", "desk", "b1"), done("b2"),
                claim("c1", "old-pc", null), done("c1"),
                claimNode("n1", "node:n1"), done("n1"),
                claimNode("x1", "node:n2"), done("x1")));
        HttpResponse<String> r = post("/api/events", WEB, "[" + String.join(",", events) + "]");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).get("rejected").asInt()).as(r.body()).isZero();
        for (String id : List.of("a1", "b1", "c1", "n1", "x1")) {
            await("/api/agent/sessions/" + id, ANA, j -> "idle".equals(j.path("status").asText()));
        }
    }

    static int seq;

    static String event(String type, String source, String payload) {
        return "{\"eventId\":\"d0000000-0000-0000-0000-" + String.format("%012d", ++seq) + "\",\"type\":\"" + type
                + "\",\"account\":\"acct-ana\",\"space\":\"web:space-1\",\"occurredAt\":\"" + Instant.now().minusSeconds(600)
                + "\",\"source\":\"" + source + "\",\"payload\":" + payload + "}";
    }

    static String computer(String id, boolean online, int sessionDelete) {
        return event("ComputerStatus", "computer:" + id, "{\"computerId\":\"" + id + "\",\"online\":" + online
                + ",\"capabilities\":{\"sessionDelete\":" + sessionDelete + "}}");
    }

    static String claim(String run, String computer, String continueFrom) {
        return event("RunClaimed", "computer:" + computer, "{\"runId\":\"" + run + "\",\"taskId\":\"task-" + run + "\",\"computerId\":\""
                + computer + "\",\"agent\":\"claude-code\",\"continueFromJobId\":" + (continueFrom == null ? "null" : "\"" + continueFrom + "\"")
                + ",\"task\":{\"title\":\"Task " + run + "\"}}");
    }

    static String claimNode(String run, String sourceRef) {
        return event("RunClaimed", "computer:laptop", "{\"runId\":\"" + run + "\",\"taskId\":\"task-" + run
                + "\",\"computerId\":\"laptop\",\"agent\":\"claude-code\",\"sourceRef\":\"" + sourceRef + "\",\"task\":{\"title\":\"Node task\"}}");
    }

    static String done(String run) {
        return event("RunStatusChanged", "computer:laptop", "{\"runId\":\"" + run + "\",\"status\":\"DONE\"}");
    }

    @AfterAll
    static void stop() {
        gateway.stop();
        projector.stop();
        cluster.close();
    }

    static HttpResponse<String> send(String method, String path, String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> post(String path, String token, String body) throws Exception {
        return send("POST", path, token, body);
    }

    static HttpResponse<String> delete(String path, String token, String body) throws Exception {
        return send("DELETE", path, token, body);
    }

    static JsonNode await(String path, String token, Predicate<JsonNode> ready) throws Exception {
        long until = System.currentTimeMillis() + 60_000;
        JsonNode last = null;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = send("GET", path, token, null);
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

    @Test
    void aDeletionIsRefusedNamingTheComputerToUpdateOrConnect() throws Exception {
        await("/api/agent/sessions/b1", ANA, j -> j.path("runs").asInt() == 2);
        HttpResponse<String> old = delete("/api/agent/sessions/b1", ANA, null);
        assertThat(old.statusCode()).as(old.body()).isEqualTo(409);
        JsonNode o = JSON.readTree(old.body());
        assertThat(o.get("error").asText()).isEqualTo("computer_unavailable");
        assertThat(o.get("computer").asText()).isEqualTo("desk");
        assertThat(o.get("action").asText()).isEqualTo("update");
        assertThat(o.get("message").asText()).contains("desk").contains("update it");

        HttpResponse<String> offline = delete("/api/agent/sessions/c1", ANA, null);
        assertThat(offline.statusCode()).isEqualTo(409);
        assertThat(JSON.readTree(offline.body()).get("computer").asText()).isEqualTo("old-pc");
        assertThat(JSON.readTree(offline.body()).get("action").asText()).isEqualTo("connect");
        assertThat(JSON.readTree(send("GET", "/api/agent/sessions/c1", ANA, null).body()).get("deleting").asBoolean())
                .as("nothing is hidden").isFalse();
        assertThat(delete("/api/agent/sessions/no-such", ANA, null).statusCode()).isEqualTo(404);
        assertThat(delete("/api/agent/sessions/a1", LAPTOP, null).statusCode()).as("a computer does not delete sessions").isEqualTo(403);
    }

    /** A deletion is not guessed from a body it cannot read: a field of the wrong type or an unknown one is a 400 naming it. */
    @Test
    void aDeletionWithABodyOfTheWrongShapeIsRefusedNamingTheField() throws Exception {
        await("/api/agent/sessions/c1", ANA, j -> j.path("runs").asInt() >= 1);
        java.util.Map<String, String> fieldOf = new java.util.LinkedHashMap<>();
        fieldOf.put("{\"runIds\":\"x\"}", "runIds");
        fieldOf.put("{\"runIds\":[1,2]}", "runIds[0]");
        fieldOf.put("{\"runIds\":[\"c1\",\"\"]}", "runIds[1]");
        fieldOf.put("{\"confirmedBy\":5}", "confirmedBy");
        fieldOf.put("{\"reason\":[\"x\"]}", "reason");
        fieldOf.put("{\"confirmedby\":\"ana\"}", "confirmedby");
        for (var bad : fieldOf.entrySet()) {
            HttpResponse<String> r = delete("/api/agent/sessions/c1", ANA, bad.getKey());
            assertThat(r.statusCode()).as(bad.getKey() + " → " + r.body()).isEqualTo(400);
            JsonNode o = JSON.readTree(r.body());
            assertThat(o.get("field").asText()).as(bad.getKey()).isEqualTo(bad.getValue());
            assertThat(o.get("message").asText()).as(bad.getKey()).startsWith(bad.getValue() + ": ");
        }
        HttpResponse<String> twice = delete("/api/agent/sessions/c1", ANA, "{\"reason\":\"a\",\"reason\":\"b\"}");
        assertThat(twice.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(twice.body()).get("message").asText()).contains("duplicate field 'reason'");
        assertThat(JSON.readTree(send("GET", "/api/agent/sessions/c1", ANA, null).body()).get("deleting").asBoolean())
                .as("nothing is hidden").isFalse();
        assertThat(JSON.readTree(send("GET", "/api/audit/deletions?sessionId=c1", ANA, null).body()).get("deletions"))
                .as("nothing was requested").isEmpty();
    }

    @Test
    void aPersonsDeletionGoesThroughTheGuardAndTheComputersAnswerAndTheAuditKeepsIt() throws Exception {
        HttpResponse<String> r = delete("/api/agent/sessions/a1", ANA, null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        String requestId = JSON.readTree(r.body()).get("requestId").asText();
        assertThat(JSON.readTree(r.body()).get("runIds")).hasSize(1);
        JsonNode audit = await("/api/audit/deletions?sessionId=a1", ANA, j -> j.get("deletions").size() == 1).get("deletions").get(0);
        assertThat(audit.get("requestId").asText()).isEqualTo(requestId);
        assertThat(audit.get("requestedBy").asText()).isEqualTo("person");
        assertThat(audit.get("requesterId").asText()).isEqualTo("ana");
        assertThat(audit.get("decision").asText()).isEqualTo("ACCEPTED");
        assertThat(audit.get("computersAsked").get(0).asText()).isEqualTo("laptop");
        assertThat(audit.get("guard").get("sessionRunIds").get(0).asText()).isEqualTo("a1");
        await("/api/agent/sessions/a1", ANA, j -> j.get("deleting").asBoolean());

        // only the laptop itself reports what it deleted; nobody posts a decision
        String answer = event("SessionDeletedOnComputer", "computer:laptop", "{\"sessionId\":\"a1\",\"requestId\":\"" + requestId
                + "\",\"computerId\":\"laptop\",\"ok\":true,\"removedPaths\":[\"/home/ana/.claude/projects/x/a1.jsonl\"]}");
        JsonNode byPerson = JSON.readTree(post("/api/events", ANA, answer).body());
        assertThat(byPerson.get("results").get(0).get("reason").asText()).startsWith("forbidden: only computer 'laptop'");
        String forged = event("SessionDeleted", "service:projector", "{\"sessionId\":\"c1\",\"requestId\":\"x\"}");
        assertThat(JSON.readTree(post("/api/events", WEB, forged).body()).get("results").get(0).get("reason").asText())
                .contains("made only by the projector's guard");
        String config = event("ChoiceConfigChanged", "service:choice-config", "{\"version\":\"x\",\"hash\":\"h\",\"json\":\"{}\"}");
        assertThat(JSON.readTree(post("/api/events", WEB, config).body()).get("results").get(0).get("reason").asText())
                .as("the config is not changed through the event intake").contains("changes only through its file");
        assertThat(post("/api/events", LAPTOP, answer).statusCode()).isEqualTo(200);

        JsonNode done = await("/api/audit/deletions?sessionId=a1", ANA, j -> "DELETED".equals(j.get("deletions").get(0).get("status").asText()))
                .get("deletions").get(0);
        assertThat(done.get("answers").get(0).get("ok").asBoolean()).isTrue();
        assertThat(done.get("answers").get(0).get("removedPaths").get(0).asText()).endsWith("a1.jsonl");
        assertThat(done.get("deletedAt").asText()).isNotBlank();
        await("/api/agent/sessions/a1", ANA, j -> j.get("deleted").asBoolean());
        HttpResponse<String> twice = delete("/api/agent/sessions/a1", ANA, null);
        assertThat(twice.statusCode()).isEqualTo(409);
        assertThat(JSON.readTree(twice.body()).get("error").asText()).isEqualTo("already_deleted");
    }

    @Test
    void aNodeDeletesOnlyItsOwnSessionsAndOnlyWithItsOwnersConfirmation() throws Exception {
        HttpResponse<String> other = delete("/api/agent/sessions/x1", NODE, "{\"confirmedBy\":\"ana\"}");
        assertThat(other.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(other.body()).get("error").asText()).isEqualTo("not_own_session");
        HttpResponse<String> unconfirmed = delete("/api/agent/sessions/n1", NODE, null);
        assertThat(unconfirmed.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(unconfirmed.body()).get("error").asText()).isEqualTo("confirmation_required");
        HttpResponse<String> ok = delete("/api/agent/sessions/n1", NODE, "{\"confirmedBy\":\"ana\"}");
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(202);
        JsonNode audits = await("/api/audit/deletions", NODE, j -> j.get("deletions").size() >= 1
                && "ACCEPTED".equals(j.get("deletions").get(0).path("decision").asText()));
        for (JsonNode a : audits.get("deletions")) {
            assertThat(a.get("sessionSourceRef").asText()).as("a node sees its own sessions' audit only").isEqualTo("node:n1");
        }
        JsonNode mine = audits.get("deletions").get(0);
        assertThat(mine.get("requestedBy").asText()).isEqualTo("node");
        assertThat(mine.get("confirmedBy").asText()).isEqualTo("ana");
        // a node cannot pass for a person through the event intake
        String asPerson = event("SessionDeletionRequested", "node:n1", "{\"sessionId\":\"x1\",\"requestedBy\":\"person\",\"requesterId\":\"n1\","
                + "\"reason\":\"person\",\"runIds\":[\"x1\"]}");
        assertThat(JSON.readTree(post("/api/events", NODE, asPerson).body()).get("results").get(0).get("reason").asText())
                .startsWith("forbidden: a node asks for a deletion only as itself");
    }

    @Test
    void theAuditFiltersBySessionReasonAndTime() throws Exception {
        assertThat(delete("/api/agent/sessions/x1", ANA, "{\"reason\":\"tidy up\"}").statusCode()).isEqualTo(202);
        await("/api/audit/deletions?reason=tidy%20up", ANA, j -> j.get("deletions").size() == 1);
        assertThat(JSON.readTree(send("GET", "/api/audit/deletions?since=2999-01-01T00:00:00Z", ANA, null).body()).get("deletions")).isEmpty();
        HttpResponse<String> bad = send("GET", "/api/audit/deletions?since=yesterday", ANA, null);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(bad.body()).get("message").asText()).contains("ISO-8601");
    }

    @Test
    void onlyTheAdminRunsASweepAndItReachesEveryPartition() throws Exception {
        assertThat(post("/api/cleanup/sweep", ANA, null).statusCode()).isEqualTo(403);
        HttpResponse<String> all = post("/api/cleanup/sweep", ADMIN, null);
        assertThat(all.statusCode()).as(all.body()).isEqualTo(202);
        assertThat(JSON.readTree(all.body()).get("account").asText()).isEqualTo("*");
        HttpResponse<String> one = post("/api/cleanup/sweep", ADMIN, "{\"account\":\"acct-ana\"}");
        assertThat(one.statusCode()).isEqualTo(202);
        List<ConsumerRecord<String, CleanupCommand>> got = new ArrayList<>();
        try (KafkaConsumer<String, CleanupCommand> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                "group.id", "gw-commands", "auto.offset.reset", "earliest"), Topics.CLEANUP_COMMANDS.keySerde().deserializer(),
                Topics.CLEANUP_COMMANDS.valueSerde().deserializer())) {
            c.subscribe(List.of(Topics.CLEANUP_COMMANDS.name()));
            long until = System.currentTimeMillis() + 30_000;
            while (got.size() < 4 && System.currentTimeMillis() < until) {
                c.poll(Duration.ofMillis(200)).forEach(got::add);
            }
        }
        assertThat(got).filteredOn(x -> x.key().equals("*")).extracting(ConsumerRecord::partition).containsExactlyInAnyOrder(0, 1, 2);
        assertThat(got).filteredOn(x -> x.key().equals("acct-ana")).extracting(x -> x.value().getAccount()).containsExactly("acct-ana");
        assertThat(got.get(0).value().getRequestedBy()).isEqualTo("admin:ana");
    }
}

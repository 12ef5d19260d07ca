package dev.ensemble.sessions.cleanup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.ComputerAgent;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.agent.ImportProgress;
import dev.ensemble.sessions.gateway.Gateway;
import dev.ensemble.sessions.gateway.Principal;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * End to end on a real broker, with every service of the system (guide §6): a session whose task was deleted
 * more than 10 minutes ago is retired; an operator's sweep asks for its deletion; the projector's guard
 * accepts it; the computer agent removes the agent's transcript (a copy of a real Claude Code session and its
 * sub-agent, from {@code ../shared/data/agent-stores}) from disk and answers; the session is deleted; every
 * other file is untouched; and the audit says who asked, why, what the guard saw and what the computer did.
 */
class CleanupEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String ACCOUNT = "acct-e2e";
    static final String COMPUTER = "laptop-e2e";
    static final String SID = "4c2ddfdc-b619-4525-8d03-1950fb1b0257";
    static final String ADMIN = "t-admin";
    static final String WEB = "t-web";
    static KafkaTestCluster cluster;
    final HttpClient http = HttpClient.newHttpClient();
    int port;

    @BeforeAll
    static void broker() {
        cluster = KafkaTestCluster.start();
        try (Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
        }
    }

    @AfterAll
    static void stopBroker() {
        cluster.close();
    }

    @Test
    void aRetiredSessionsTranscriptIsRemovedByTheComputerAndTheAuditSaysWhy(@TempDir Path dir) throws Exception {
        Path real = SharedData.require("data/agent-stores/claude/projects/-tmp-private/" + SID + ".jsonl");
        Path stores = SharedData.path("data/agent-stores");
        Path claude = dir.resolve("claude/projects");
        Path codex = dir.resolve("codex/sessions");
        copyTree(stores.resolve("claude/projects"), claude);
        copyTree(stores.resolve("codex/sessions"), codex);
        Path transcript = claude.resolve("-tmp-private/" + SID + ".jsonl");
        Path subAgent = claude.resolve("-tmp-private/agent-36541525.jsonl");
        assertThat(Files.readAllBytes(transcript)).isEqualTo(Files.readAllBytes(real));
        Map<Path, String> before = hashes(dir.resolve("claude"), dir.resolve("codex"));

        String bootstrap = cluster.bootstrapServers();
        Map<String, Object> fast = Map.of("commit.interval.ms", 100);
        Tokens tokens = Tokens.inMemory();
        tokens.register(ADMIN, new Principal(ACCOUNT, "admin", "ana"));
        tokens.register(WEB, new Principal(ACCOUNT, "service", "web"));
        ImportConfig computer = new ImportConfig(ACCOUNT, COMPUTER, Clock.systemUTC(), dir.resolve("agent/import-state.json"));
        try (Projector projector = new Projector(bootstrap, dir.resolve("projector"), 1, fast);
             CleanupService cleanup = new CleanupService(bootstrap, dir.resolve("cleanup"), 1,
                     CleanupConfig.defaults().withSweepInterval(Duration.ofHours(1)), fast);
             Gateway gateway = new Gateway(new Gateway.Settings(bootstrap, "127.0.0.1", 0, dir.resolve("gateway"), 1, tokens,
                     Clock.systemUTC()))) {
            projector.start();
            cleanup.start();
            gateway.start();
            gateway.awaitReady(Duration.ofSeconds(60));
            port = gateway.port();
            ComputerAgent agent = new ComputerAgent(bootstrap, computer, List.of(claude), List.of(codex), Duration.ofSeconds(1),
                    ImportProgress.NONE);
            agent.start();
            try {
                // a task run of Ensemble's on this computer, in the agent session of the transcript; its task was
                // deleted 11 minutes ago, so Undo no longer finds it: every task of the session is retired
                Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
                String events = "[" + String.join(",",
                        event(1, now.minus(Duration.ofHours(3)), "RunClaimed", "{\"runId\":\"job-e2e\",\"taskId\":\"task-e2e\",\"computerId\":\""
                                + COMPUTER + "\",\"agent\":\"claude-code\",\"agentSessionId\":\"" + SID + "\",\"folder\":\"/tmp/private\","
                                + "\"task\":{\"title\":\"Tidy the analytics notebook\"}}"),
                        event(2, now.minus(Duration.ofHours(2)), "RunStatusChanged", "{\"runId\":\"job-e2e\",\"status\":\"DONE\"}"),
                        event(3, now.minus(Duration.ofMinutes(11)), "TaskChanged", "{\"taskId\":\"task-e2e\",\"status\":\"DELETED\",\"deletedAt\":\""
                                + now.minus(Duration.ofMinutes(11)) + "\"}")) + "]";
                HttpResponse<String> posted = send("POST", "/api/events", WEB, events);
                assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
                assertThat(JSON.readTree(posted.body()).get("accepted").asInt()).as(posted.body()).isEqualTo(3);

                // an operator runs a sweep (again, until the cleanup holds the session's retirement view)
                JsonNode audit = null;
                long until = System.currentTimeMillis() + 300_000; // generous: a loaded machine takes minutes
                while (System.currentTimeMillis() < until) {
                    JsonNode list = JSON.readTree(send("GET", "/api/audit/deletions?sessionId=job-e2e", ADMIN, null).body());
                    if (list.path("deletions").size() > 0) {
                        audit = list.get("deletions").get(0);
                        if ("DELETED".equals(audit.path("status").asText())) {
                            break;
                        }
                    } else {
                        assertThat(send("POST", "/api/cleanup/sweep", ADMIN, "{\"account\":\"" + ACCOUNT + "\"}").statusCode()).isEqualTo(202);
                    }
                    Thread.sleep(1000);
                }
                assertThat(audit).as("the audit of job-e2e's deletion").isNotNull();
                assertThat(audit.get("status").asText()).as(audit.toString()).isEqualTo("DELETED");

                // the audit says why and what happened
                assertThat(audit.get("requestedBy").asText()).isEqualTo("system");
                assertThat(audit.get("source").asText()).isEqualTo("service:cleanup");
                assertThat(audit.get("reason").asText()).isEqualTo("retired");
                assertThat(audit.get("decision").asText()).isEqualTo("ACCEPTED");
                assertThat(audit.get("sawRunIds").get(0).asText()).isEqualTo("job-e2e");
                JsonNode task = audit.get("guard").get("tasks").get(0);
                assertThat(task.get("status").asText()).isEqualTo("DELETED");
                assertThat(Instant.parse(task.get("retiredAt").asText())).isEqualTo(now.minus(Duration.ofMinutes(1)));
                assertThat(audit.get("guard").get("computers").get(0).get("online").asBoolean()).isTrue();
                assertThat(audit.get("computersAsked").get(0).asText()).isEqualTo(COMPUTER);
                assertThat(audit.get("agentSessionIds").get(0).asText()).isEqualTo(SID);
                JsonNode answer = audit.get("answers").get(0);
                assertThat(answer.get("computerId").asText()).isEqualTo(COMPUTER);
                assertThat(answer.get("ok").asBoolean()).isTrue();
                assertThat(JSON.convertValue(answer.get("removedPaths"), List.class))
                        .containsExactlyInAnyOrder(transcript.toAbsolutePath().toString(), subAgent.toAbsolutePath().toString());

                // the transcript and its sub-agent are gone; every other file is untouched
                assertThat(transcript).doesNotExist();
                assertThat(subAgent).doesNotExist();
                Map<Path, String> after = hashes(dir.resolve("claude"), dir.resolve("codex"));
                Map<Path, String> expected = new TreeMap<>(before);
                expected.remove(transcript);
                expected.remove(subAgent);
                assertThat(after).isEqualTo(expected);
                assertThat(after).isNotEmpty();

                JsonNode session = JSON.readTree(send("GET", "/api/agent/sessions/job-e2e", ADMIN, null).body());
                assertThat(session.get("deleted").asBoolean()).as(session.toString()).isTrue();
            } finally {
                agent.stop();
            }
        }
    }

    /**
     * Guide §6 through the whole path, as the held-out cases of issue 14 (item 8) put it: sessions whose only task was
     * deleted 11 and 40 minutes before the sweep (their run done, their only computer online and able to delete, its
     * status reported before the deletion, so the deletion is each session's newest fact) are asked for by the sweep,
     * as is one whose task is done longer than the completed window; one whose task was deleted a minute ago is not.
     * Events are posted over HTTP, the sweep asked for over HTTP, and the audit read over HTTP.
     */
    @Test
    void aSweepAsksForSessionsWhoseOnlyTaskWasDeletedTenMinutesAgoOrMore(@TempDir Path dir) throws Exception {
        String bootstrap = cluster.bootstrapServers();
        Map<String, Object> fast = Map.of("commit.interval.ms", 100);
        Tokens tokens = Tokens.inMemory();
        tokens.register(ADMIN, new Principal(ACCOUNT_8, "admin", "ana"));
        tokens.register(WEB, new Principal(ACCOUNT_8, "service", "web"));
        try (Projector projector = new Projector(bootstrap, dir.resolve("projector"), 1, fast);
             CleanupService cleanup = new CleanupService(bootstrap, dir.resolve("cleanup"), 1,
                     CleanupConfig.defaults().withSweepInterval(Duration.ofHours(1)), fast);
             Gateway gateway = new Gateway(new Gateway.Settings(bootstrap, "127.0.0.1", 0, dir.resolve("gateway"), 1, tokens,
                     Clock.systemUTC()))) {
            projector.start();
            cleanup.start();
            gateway.start();
            gateway.awaitReady(Duration.ofSeconds(60));
            port = gateway.port();
            Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            List<String> events = new java.util.ArrayList<>();
            events.add(event8(events.size(), now.minus(Duration.ofDays(10)), "ComputerStatus", "{\"computerId\":\"desk-8\",\"online\":true,"
                    + "\"capabilities\":{\"sessionDelete\":1}}"));
            Map<String, Duration> deletedAgo = Map.of("job-del-11", Duration.ofMinutes(11), "job-del-40", Duration.ofMinutes(40),
                    "job-del-1", Duration.ofMinutes(1));
            for (var c : new TreeMap<>(deletedAgo).entrySet()) {
                Instant deleted = now.minus(c.getValue());
                events.add(claim8(events.size(), c.getKey(), now.minus(Duration.ofHours(2))));
                events.add(event8(events.size(), now.minus(Duration.ofMinutes(100)), "RunStatusChanged",
                        "{\"runId\":\"" + c.getKey() + "\",\"status\":\"DONE\"}"));
                events.add(event8(events.size(), deleted, "TaskChanged", "{\"taskId\":\"task-" + c.getKey() + "\",\"status\":\"DELETED\","
                        + "\"deletedAt\":\"" + deleted + "\"}"));
            }
            // done longer than the completed window (7 days): retired too
            Instant completed = now.minus(Duration.ofDays(8));
            events.add(claim8(events.size(), "job-done-8d", completed.minus(Duration.ofHours(2))));
            events.add(event8(events.size(), completed.minus(Duration.ofHours(1)), "RunStatusChanged", "{\"runId\":\"job-done-8d\",\"status\":\"DONE\"}"));
            events.add(event8(events.size(), completed, "TaskChanged", "{\"taskId\":\"task-job-done-8d\",\"status\":\"DONE\","
                    + "\"completedAt\":\"" + completed + "\"}"));
            HttpResponse<String> posted = send("POST", "/api/events", WEB, "[" + String.join(",", events) + "]");
            assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
            assertThat(JSON.readTree(posted.body()).get("accepted").asInt()).as(posted.body()).isEqualTo(events.size());

            List<String> retired = List.of("job-del-11", "job-del-40", "job-done-8d");
            Map<String, JsonNode> audits = new TreeMap<>();
            long until = System.currentTimeMillis() + 300_000; // generous: a loaded machine takes minutes
            while (audits.size() < retired.size() && System.currentTimeMillis() < until) {
                assertThat(send("POST", "/api/cleanup/sweep", ADMIN, "{\"account\":\"" + ACCOUNT_8 + "\"}").statusCode()).isEqualTo(202);
                Thread.sleep(1000);
                for (JsonNode a : JSON.readTree(send("GET", "/api/audit/deletions", ADMIN, null).body()).path("deletions")) {
                    audits.put(a.get("sessionId").asText(), a);
                }
            }
            assertThat(audits).as("the sessions the sweep asked for").containsKeys(retired.toArray(String[]::new));
            for (String id : retired) {
                JsonNode a = audits.get(id);
                assertThat(a.get("requestedBy").asText()).as(a.toString()).isEqualTo("system");
                assertThat(a.get("source").asText()).isEqualTo("service:cleanup");
                assertThat(a.get("reason").asText()).isEqualTo("retired");
                assertThat(a.get("decision").asText()).as(a.toString()).isEqualTo("ACCEPTED");
                assertThat(a.get("computersAsked").get(0).asText()).isEqualTo("desk-8");
            }
            assertThat(Instant.parse(audits.get("job-del-11").get("guard").get("tasks").get(0).get("retiredAt").asText()))
                    .isEqualTo(now.minus(Duration.ofMinutes(1)));
            if (Instant.now().isBefore(now.plus(Duration.ofMinutes(8)))) { // still under 10 minutes since its deletion
                assertThat(audits).as("deleted a minute before the sweep: Undo still finds it").doesNotContainKey("job-del-1");
            }
        }
    }

    static final String ACCOUNT_8 = "acct-e2e-8";

    static String claim8(int n, String runId, Instant at) {
        return event8(n, at, "RunClaimed", "{\"runId\":\"" + runId + "\",\"taskId\":\"task-" + runId + "\",\"computerId\":\"desk-8\","
                + "\"agent\":\"claude-code\",\"agentSessionId\":\"agent-" + runId + "\",\"folder\":\"/tmp/" + runId + "\","
                + "\"task\":{\"title\":\"Task of " + runId + "\"}}");
    }

    static String event8(int n, Instant at, String type, String payload) {
        return "{\"eventId\":\"e2e80000-0000-0000-0000-" + String.format("%012d", n) + "\",\"type\":\"" + type + "\",\"account\":\""
                + ACCOUNT_8 + "\",\"space\":\"web:space-1\",\"occurredAt\":\"" + at + "\",\"source\":\"service:web\",\"payload\":" + payload + "}";
    }

    static int seq;

    static String event(int n, Instant at, String type, String payload) {
        return "{\"eventId\":\"e2e00000-0000-0000-0000-" + String.format("%012d", n) + "\",\"type\":\"" + type + "\",\"account\":\""
                + ACCOUNT + "\",\"space\":\"web:space-1\",\"occurredAt\":\"" + at + "\",\"source\":\"service:web\",\"payload\":" + payload + "}";
    }

    HttpResponse<String> send(String method, String path, String token, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    static void copyTree(Path from, Path to) throws Exception {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.write(target, Files.readAllBytes(p)); // a copy of the bytes only (the shared files are read-only)
                }
            }
        }
    }

    static Map<Path, String> hashes(Path... roots) throws Exception {
        Map<Path, String> out = new TreeMap<>();
        for (Path root : roots) {
            try (Stream<Path> s = Files.walk(root)) {
                for (Path p : s.filter(Files::isRegularFile).toList()) {
                    out.put(p, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
                }
            }
        }
        return out;
    }
}

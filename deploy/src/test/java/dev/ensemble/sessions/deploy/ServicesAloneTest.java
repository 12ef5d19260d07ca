package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.gateway.Principal;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The projector and the gateway each alone in a JVM of its own ({@code run projector}, {@code run gateway}), against a
 * real in-process broker, set partly by {@code KAFKA_*} and {@code ENSEMBLE_*} variables: events posted to the gateway
 * over HTTP come back as the session the projector built, and SIGTERM stops each with code 0.
 */
class ServicesAloneTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ACCOUNT = "acct-alone";
    private static final String WEB = "web-token-alone";
    private static final String READER = "reader-token-alone";

    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void theProjectorAndTheGatewayRunAsProcessesOfTheirOwn(@TempDir Path dir) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            Path tokens = dir.resolve("tokens.json");
            Tokens t = Tokens.load(tokens);
            t.register(WEB, new Principal(ACCOUNT, "service", "web"));
            t.register(READER, new Principal(ACCOUNT, "admin", "ana"));
            Path readyFile = dir.resolve("health/projector-ready");
            Files.createDirectories(readyFile.getParent());
            Files.writeString(readyFile, "left by an instance killed before");
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            // the projector: the cluster and its security from KAFKA_ variables, its state folder from ENSEMBLE_STATE_DIR
            Process projector = start(dir.resolve("projector.log"), Map.of("KAFKA_BOOTSTRAP_SERVERS", cluster.bootstrapServers(),
                    "KAFKA_SECURITY_PROTOCOL", "PLAINTEXT", "KAFKA_COMMIT_INTERVAL_MS", "100",
                    "ENSEMBLE_STATE_DIR", dir.resolve("state/projector").toString(), "ENSEMBLE_READY_FILE", readyFile.toString()),
                    "projector", "--standby-replicas", "0");
            // the gateway: the cluster by flag, its Streams threads from a KAFKA_ variable
            Process gateway = start(dir.resolve("gateway.log"), Map.of("KAFKA_NUM_STREAM_THREADS", "1",
                    "KAFKA_SECURITY_PROTOCOL", "PLAINTEXT"), "gateway", "--bootstrap-servers", cluster.bootstrapServers(),
                    "--host", "127.0.0.1", "--port", Integer.toString(port), "--application-server", "127.0.0.1:" + port,
                    "--tokens", tokens.toString(), "--state-dir", dir.resolve("state/gateway").toString(), "--threads", "1");
            try {
                long removedBy = System.currentTimeMillis() + 60_000;
                while (Files.exists(readyFile) && Files.readString(readyFile).startsWith("left")) { // removed at the start
                    assertThat(System.currentTimeMillis()).as("the old ready file is removed at the start").isLessThan(removedBy);
                    Thread.sleep(100);
                }
                awaitReady(projector, dir.resolve("projector.log"));
                awaitReady(gateway, dir.resolve("gateway.log"));
                assertThat(readyFile).as("--ready-file (ENSEMBLE_READY_FILE) written once ready").exists();
                assertThat(Files.readString(readyFile)).startsWith("projector ready: generation ");
                assertThat(Files.readString(dir.resolve("gateway.log"))).contains("(application.server 127.0.0.1:" + port + ")");
                HttpClient http = HttpClient.newHttpClient();
                Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
                String events = "[" + event(1, now.minusSeconds(60), "RunClaimed", "{\"runId\":\"job-alone\",\"taskId\":\"task-alone\","
                        + "\"computerId\":\"desk-alone\",\"agent\":\"claude-code\",\"folder\":\"/tmp/alone\","
                        + "\"task\":{\"title\":\"Run each service alone\"}}") + ","
                        + event(2, now, "RunStatusChanged", "{\"runId\":\"job-alone\",\"status\":\"DONE\"}") + "]";
                HttpResponse<String> posted = send(http, port, "POST", "/api/events", WEB, events);
                assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
                assertThat(JSON.readTree(posted.body()).get("accepted").asInt()).as(posted.body()).isEqualTo(2);

                JsonNode session = null;
                HttpResponse<String> last = null;
                long until = System.currentTimeMillis() + 180_000;
                while (System.currentTimeMillis() < until) {
                    last = send(http, port, "GET", "/api/agent/sessions/job-alone", READER, null);
                    if (last.statusCode() == 200 && JSON.readTree(last.body()).path("runList").path(0).path("status").asText().equals("done")) {
                        session = JSON.readTree(last.body());
                        break;
                    }
                    Thread.sleep(500);
                }
                assertThat(session).as("the session the projector built, read through the gateway (last answer %s %s)",
                        last == null ? "none" : last.statusCode(), last == null ? "" : last.body()).isNotNull();
                assertThat(session.path("id").asText()).isEqualTo("job-alone");
                assertThat(session.toString()).contains("Run each service alone").contains("desk-alone");

                for (Process p : List.of(gateway, projector)) {
                    p.destroy(); // SIGTERM
                }
                for (var e : Map.of("gateway", gateway, "projector", projector).entrySet()) {
                    Path log = dir.resolve(e.getKey() + ".log");
                    assertThat(e.getValue().waitFor(120, TimeUnit.SECONDS)).as("%s stopped in time", e.getKey()).isTrue();
                    assertThat(e.getValue().exitValue()).as(Files.readString(log)).isZero();
                    assertThat(Files.readString(log)).contains(e.getKey() + " stopped.");
                }
                assertThat(readyFile).as("the ready file is removed when the projector stops").doesNotExist();
            } finally {
                projector.destroyForcibly();
                gateway.destroyForcibly();
            }
        }
    }

    /** {@code ensemble-sessions run <args>} in a JVM of its own with these environment variables (and no other KAFKA_ or ENSEMBLE_ one). */
    static Process start(Path log, Map<String, String> environment, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m", "-cp", System.getProperty("java.class.path"), EnsembleSessions.class.getName(), "run"));
        command.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        b.environment().keySet().removeIf(k -> k.startsWith("KAFKA_") || k.startsWith("ENSEMBLE_"));
        b.environment().putAll(environment);
        return b.start();
    }

    static void awaitReady(Process p, Path log) throws Exception {
        long until = System.currentTimeMillis() + 240_000;
        while (!Files.readString(log).contains(RunCommand.READY)) {
            assertThat(p.isAlive()).as("ended before it was ready:%n%s", Files.readString(log)).isTrue();
            assertThat(System.currentTimeMillis()).as("not ready in time:%n%s", Files.readString(log)).isLessThan(until);
            Thread.sleep(200);
        }
    }

    static String event(int n, Instant at, String type, String payload) {
        return "{\"eventId\":\"a1000000-0000-0000-0000-" + String.format("%012d", n) + "\",\"type\":\"" + type + "\",\"account\":\""
                + ACCOUNT + "\",\"space\":\"web:space-1\",\"occurredAt\":\"" + at + "\",\"source\":\"service:web\",\"payload\":" + payload + "}";
    }

    static HttpResponse<String> send(HttpClient http, int port, String method, String path, String token, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
    }
}

package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ensemble-sessions assistant-turn} as an agent launcher runs it: the turn and the report as JSON lines on
 * standard input, against a stand-in for the gateway's {@code POST /api/assistant/turns} (the real endpoint is tested
 * with the gateway) and a real in-process broker for the {@code TurnEnded}.
 */
class AssistantTurnCommandTest {
    static final String S1 = "11111111-aaaa-4aaa-8aaa-000000000001";

    @Test
    void aTurnIsDecidedThenRecordedAndARefusedOneSaysWhy(@TempDir Path dir) throws Exception {
        List<JsonNode> asked = new CopyOnWriteArrayList<>();
        List<String> answers = new CopyOnWriteArrayList<>(List.of(
                "{\"action\":\"new\",\"reason\":\"first-turn\",\"history\":[],\"folder\":\"/w\"}",
                "{\"error\":\"an earlier ask of this page is not answered yet\",\"waitingFor\":\"ask-1\"}"));
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/api/assistant/turns", x -> {
            asked.add(DataDir.JSON.readTree(x.getRequestBody()));
            String a = answers.remove(0);
            byte[] body = a.getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(a.contains("waitingFor") ? 409 : 200, body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        server.start();
        Path data = dir.resolve("data");
        Path home = dir.resolve("home");
        InputStream stdin = System.in;
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            cluster.createTopics(1, Topics.EVENTS);
            new DataDir(data).writeEndpoints("http://127.0.0.1:" + server.getAddress().getPort(), cluster.bootstrapServers());
            Files.writeString(data.resolve("computer-token"), "tok-computer\n");
            Files.writeString(data.resolve("computer-id"), "laptop\n");

            System.setIn(new ByteArrayInputStream(("{\"turnId\":\"t1\",\"conversationKey\":\"chat-1\",\"kind\":\"chat\",\"agent\":\"claude-code\","
                    + "\"model\":\"sonnet\",\"instructionLines\":[\"be brief\"]}\n"
                    + "{\"answered\":true,\"agentSessionId\":\"" + S1 + "\",\"tokens\":900}\n").getBytes(StandardCharsets.UTF_8)));
            ChooseCommandTest.Run run = ChooseCommandTest.cli("assistant-turn", "--data-dir", data.toString(), "--account", "ana",
                    "--home", home.toString());
            assertThat(run.code()).as(run.err() + run.out()).isZero();
            String[] lines = run.out().split("\\R");
            assertThat(lines).hasSize(2);
            JsonNode decision = DataDir.JSON.readTree(lines[0]);
            assertThat(decision.path("action").asText()).isEqualTo("new");
            assertThat(decision.path("turnId").asText()).isEqualTo("t1");
            assertThat(decision.path("chatFolder").asText()).isEqualTo(data.toAbsolutePath().normalize().resolve("assistant/chat-1").toString());
            JsonNode ended = DataDir.JSON.readTree(lines[1]);
            assertThat(ended.path("answered").asBoolean()).isTrue();
            assertThat(ended.path("messages").asInt()).isEqualTo(1);
            assertThat(asked).hasSize(1);
            assertThat(asked.get(0).path("computerId").asText()).isEqualTo("laptop");
            assertThat(asked.get(0).path("entry").isNull()).isTrue();
            assertThat(Files.readString(data.resolve("assistant-sessions.json"))).contains(S1);

            try (KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                    "group.id", "t", "auto.offset.reset", "earliest"), Topics.EVENTS.keySerde().deserializer(),
                    Topics.EVENTS.valueSerde().deserializer())) {
                c.subscribe(List.of(Topics.EVENTS.name()));
                List<Event> got = new ArrayList<>();
                long until = System.currentTimeMillis() + 30_000;
                while (got.isEmpty() && System.currentTimeMillis() < until) {
                    c.poll(Duration.ofMillis(200)).forEach(r -> got.add(r.value()));
                }
                assertThat(got).singleElement().satisfies(e -> {
                    assertThat(e.getEventId()).isEqualTo(ended.path("eventId").asText());
                    assertThat(e.getAccount()).isEqualTo("ana");
                    assertThat(e.getPayload()).isInstanceOfSatisfying(TurnEnded.class, t -> {
                        assertThat(t.getAgentSessionId()).isEqualTo(S1);
                        assertThat(t.getTokens()).isEqualTo(900L);
                    });
                });
            }

            System.setIn(new ByteArrayInputStream(("{\"turnId\":\"ask-2\",\"conversationKey\":\"ask-doc-1\",\"kind\":\"ask\",\"agent\":\"claude-code\","
                    + "\"askId\":\"ask-2\"}\n").getBytes(StandardCharsets.UTF_8)));
            ChooseCommandTest.Run refused = ChooseCommandTest.cli("assistant-turn", "--data-dir", data.toString(), "--home", home.toString());
            assertThat(refused.code()).isEqualTo(1);
            JsonNode why = DataDir.JSON.readTree(refused.out());
            assertThat(why.path("status").asInt()).isEqualTo(409);
            assertThat(why.path("answer").path("waitingFor").asText()).isEqualTo("ask-1");

            System.setIn(new ByteArrayInputStream("{\"turnId\":\"t3\",\"conversationKey\":\"chat-1\",\"kind\":\"chat\"}\n"
                    .getBytes(StandardCharsets.UTF_8)));
            ChooseCommandTest.Run bad = ChooseCommandTest.cli("assistant-turn", "--data-dir", data.toString(), "--home", home.toString());
            assertThat(bad.code()).isEqualTo(1);
            assertThat(DataDir.JSON.readTree(bad.out()).path("error").asText()).isEqualTo("agent is required (a string)");
            assertThat(asked).as("bad input asks nothing").hasSize(2);

            // a data folder with no token (or any other failure before the turn): one JSON line, code 1, no stack trace
            Path empty = Files.createDirectories(data.resolveSibling("empty-data"));
            System.setIn(new ByteArrayInputStream(("{\"turnId\":\"t4\",\"conversationKey\":\"chat-1\",\"kind\":\"chat\",\"agent\":\"claude-code\"}\n")
                    .getBytes(StandardCharsets.UTF_8)));
            ChooseCommandTest.Run broken = ChooseCommandTest.cli("assistant-turn", "--data-dir", empty.toString(), "--home", home.toString(),
                    "--gateway", "http://127.0.0.1:1");
            assertThat(broken.code()).isEqualTo(1);
            assertThat(DataDir.JSON.readTree(broken.out()).path("error").asText()).startsWith("the turn could not be run: ");
            assertThat(asked).hasSize(2);
        } finally {
            System.setIn(stdin);
            server.stop(0);
        }
    }
}

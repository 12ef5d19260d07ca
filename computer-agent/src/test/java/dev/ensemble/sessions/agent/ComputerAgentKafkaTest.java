package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/** The computer agent against a real in-process Kafka broker: what it imports lands in the event log, keyed by account. */
class ComputerAgentKafkaTest {
    static KafkaTestCluster cluster;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start();
        cluster.createTopics(2, Topics.EVENTS);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void importsTheStoresKeepsImportingAndReportsTheComputerOnlineAndOffline() throws Exception {
        Stores stores = Stores.withFixtures(tmp.resolve("home"));
        // what one import of the same stores gives, imported apart with its own state
        Stores reference = Stores.withFixtures(tmp.resolve("reference"));
        List<String> expected = reference.importAll(reference.importer()).ids();
        ComputerAgent agent = new ComputerAgent(cluster.bootstrapServers(), stores.config(), List.of(stores.claude),
                List.of(stores.codex), Duration.ofMillis(200), ImportProgress.NONE);

        try (KafkaConsumer<String, Event> consumer = consumer()) {
            agent.start();
            List<ConsumerRecord<String, Event>> got = new ArrayList<>();
            pollUntil(consumer, got, records -> ids(records).containsAll(expected));

            assertThat(got).allSatisfy(r -> assertThat(r.key()).isEqualTo(Stores.ACCOUNT));
            assertThat(got.get(0).value().getPayload()).isInstanceOfSatisfying(ComputerStatus.class, s -> {
                assertThat(s.getComputerId()).isEqualTo(Stores.COMPUTER);
                assertThat(s.getOnline()).isTrue();
                assertThat(s.getCapabilities()).isEqualTo(Map.of("sessionDelete", 1, "assistantTurns", 3));
            });
            assertThat(ids(got).subList(1, got.size())).containsExactlyElementsOf(expected); // in order, once

            // a new prompt appended to a transcript is picked up by a later poll
            Path file = stores.claudeFile("-home-ana-my-app", ClaudeImportTest.A + ".jsonl");
            Files.writeString(file, "{\"type\":\"user\",\"sessionId\":\"" + ClaudeImportTest.A + "\",\"cwd\":\"/home/ana/my-app\","
                    + "\"uuid\":\"a-p3\",\"timestamp\":\"2026-02-01T09:30:00.000Z\",\"message\":{\"role\":\"user\","
                    + "\"content\":\"Ship it\"}}\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            pollUntil(consumer, got, records -> records.stream().anyMatch(r -> r.value().getPayload() instanceof RunClaimed c
                    && c.getRunId().equals("claude-code:" + ClaudeImportTest.A + ":a-p3")));

            agent.stop();
            pollUntil(consumer, got, records -> records.get(records.size() - 1).value().getPayload() instanceof ComputerStatus s
                    && !s.getOnline());
            assertThat(agent.isRunning()).isFalse();
            assertThat(agent.lastError()).isNull();
            assertThat(ids(got)).doesNotHaveDuplicates();
        } finally {
            agent.stop();
        }
    }

    private static KafkaConsumer<String, Event> consumer() {
        KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                "group.id", "computer-agent-test", "auto.offset.reset", "earliest"),
                Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer());
        c.subscribe(List.of(Topics.EVENTS.name()));
        return c;
    }

    private static void pollUntil(KafkaConsumer<String, Event> consumer, List<ConsumerRecord<String, Event>> got,
                                  Predicate<List<ConsumerRecord<String, Event>>> done) {
        long until = System.currentTimeMillis() + 30_000;
        while (!(got.size() > 0 && done.test(got)) && System.currentTimeMillis() < until) {
            consumer.poll(Duration.ofMillis(200)).forEach(got::add);
        }
        assertThat(got.size() > 0 && done.test(got)).as("events arrived in time: %s", ids(got).size()).isTrue();
    }

    private static List<String> ids(List<ConsumerRecord<String, Event>> records) {
        return records.stream().map(r -> r.value().getEventId()).toList();
    }
}

package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.schema.testing.SharedData;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The projector against a real in-process KRaft broker, exactly-once on. */
class ProjectorIntegrationTest {
    static KafkaTestCluster cluster;

    @BeforeAll
    static void startBroker() {
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
    void theContractExampleBecomesOneSessionAndBadRecordsGoToTheDeadLetterTopic(@TempDir Path state) throws Exception {
        List<String> lines = Files.readAllLines(SharedData.require("contract/events-example.jsonl"));
        try (Projector projector = new Projector(cluster.bootstrapServers(), state, 1, Map.of("commit.interval.ms", 100))) {
            projector.start();
            try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(Map.of("bootstrap.servers", cluster.bootstrapServers()),
                    new StringSerializer(), new ByteArraySerializer())) {
                p.send(new ProducerRecord<>(Topics.EVENTS.name(), "acct-ana", "not avro at all".getBytes())).get();
                for (String line : lines) {
                    if (line.isBlank()) {
                        continue;
                    }
                    Event e = EventJson.parse(line, Clock.systemUTC());
                    byte[] bytes = Topics.EVENTS.valueSerde().serializer().serialize(Topics.EVENTS.name(), e);
                    p.send(new ProducerRecord<>(Topics.EVENTS.name(), e.getAccount(), bytes)).get();
                    // a second delivery of every event changes nothing
                    p.send(new ProducerRecord<>(Topics.EVENTS.name(), e.getAccount(), bytes)).get();
                }
            }
            Map<String, SessionView> views = new HashMap<>();
            try (KafkaConsumer<String, SessionView> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                    "group.id", "it-views", "auto.offset.reset", "earliest", "isolation.level", "read_committed"),
                    Topics.SESSIONS_VIEW.keySerde().deserializer(), Topics.SESSIONS_VIEW.valueSerde().deserializer())) {
                c.subscribe(List.of(Topics.SESSIONS_VIEW.name()));
                long until = System.currentTimeMillis() + 60_000;
                while (System.currentTimeMillis() < until) {
                    for (ConsumerRecord<String, SessionView> r : c.poll(Duration.ofMillis(200))) {
                        views.put(r.key(), r.value());
                    }
                    SessionView s = views.get("acct-ana/job-101");
                    if (s != null && s.getRuns().size() == 2 && "DONE".equals(s.getRuns().get(1).getStatus())) {
                        break;
                    }
                }
            }
            assertThat(views).containsOnlyKeys("acct-ana/job-101");
            SessionView s = views.get("acct-ana/job-101");
            assertThat(s.getRuns()).extracting(RunView::getRunId).containsExactly("job-101", "job-102");
            assertThat(s.getAgentSessionId()).isEqualTo("5b1e0f4a-8c3d-4b7e-a1f2-3c4d5e6f7a80");
            assertThat(s.getFill()).isEqualTo(61000.0 / 200000.0);
            assertThat(s.getLatestReportSummary()).isEqualTo("The endpoint now returns total.");
            assertThat(s.getFilesChanged()).containsExactly("src/api/rank.ts", "src/search/rankResults.ts");
            assertThat(s.getProjectName()).isEqualTo("Ranking");
            assertThat(s.getStatus().name()).isEqualTo("IDLE");

            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                    "group.id", "it-dlq", "auto.offset.reset", "earliest", "isolation.level", "read_committed"),
                    new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                c.subscribe(List.of(Topics.DEAD_LETTER.name()));
                ConsumerRecord<byte[], byte[]> dead = null;
                long until = System.currentTimeMillis() + 30_000;
                while (dead == null && System.currentTimeMillis() < until) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        dead = r;
                    }
                }
                assertThat(dead).as("the undecodable record is in the dead-letter topic").isNotNull();
                assertThat(new String(dead.value())).isEqualTo("not avro at all");
                assertThat(new String(dead.headers().lastHeader("__streams.errors.message").value())).contains("cannot decode Event");
            }
        }
    }
}

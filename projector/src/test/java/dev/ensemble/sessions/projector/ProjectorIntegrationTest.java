package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.views.DeletionAudit;
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

            // the contract's last event asks to delete the retired session: the guard accepts it, and its decision
            // is appended to the log in the projector's own transaction, with the audit beside it
            DeletionAudit audit = null;
            boolean acceptedInLog = false;
            try (KafkaConsumer<String, DeletionAudit> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                    "group.id", "it-audit", "auto.offset.reset", "earliest", "isolation.level", "read_committed"),
                    Topics.DELETION_AUDIT.keySerde().deserializer(), Topics.DELETION_AUDIT.valueSerde().deserializer());
                 KafkaConsumer<String, Event> log = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                    "group.id", "it-log", "auto.offset.reset", "earliest", "isolation.level", "read_committed"),
                    Topics.EVENTS.keySerde().deserializer(), new org.apache.kafka.common.serialization.Deserializer<Event>() {
                        @Override
                        public Event deserialize(String topic, byte[] data) {
                            try {
                                return Topics.EVENTS.valueSerde().deserializer().deserialize(topic, data);
                            } catch (RuntimeException e) {
                                return null; // the garbage record written above
                            }
                        }
                    })) {
                c.subscribe(List.of(Topics.DELETION_AUDIT.name()));
                log.subscribe(List.of(Topics.EVENTS.name()));
                long until = System.currentTimeMillis() + 60_000;
                while ((audit == null || !acceptedInLog) && System.currentTimeMillis() < until) {
                    for (ConsumerRecord<String, DeletionAudit> r : c.poll(Duration.ofMillis(100))) {
                        audit = r.value();
                    }
                    for (ConsumerRecord<String, Event> r : log.poll(Duration.ofMillis(100))) {
                        acceptedInLog |= r.value() != null && r.value().getPayload() instanceof SessionDeletionAccepted
                                && "service:projector".equals(r.value().getSource());
                    }
                }
            }
            assertThat(audit).isNotNull();
            assertThat(audit.getRequestId()).isEqualTo("0b4f3c1e-2a51-4c3e-9d5f-000000000010");
            assertThat(audit.getDecision()).isEqualTo("ACCEPTED");
            assertThat(audit.getComputersAsked()).containsExactly("laptop-ana");
            assertThat(acceptedInLog).as("the decision is in the log").isTrue();

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

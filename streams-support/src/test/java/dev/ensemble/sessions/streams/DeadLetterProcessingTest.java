package dev.ensemble.sessions.streams;

import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DeadLetterProcessingExceptionHandler} with a real broker and exactly-once: a processor that throws (a bug)
 * after the processor before it stored its change must leave no trace of that record in its own state, the
 * processor before it must still apply the record, the record must reach the dead-letter topic with both failures
 * named, and the partition must go on. An invalid event
 * (refused before any change) is dead-lettered at once.
 */
class DeadLetterProcessingTest {
    private static final String IN = "dl-test-in";
    private static final String OUT = "dl-test-out";

    /**
     * Appends each value to its key's list, and
     * forwards the list under its own node name to the output; "upstream" also forwards each record to "downstream",
     * which has a bug on values starting with "bug".
     */
    static final class ListProcessor implements Processor<String, String, String, String> {
        private final String node;
        private ProcessorContext<String, String> context;
        private KeyValueStore<String, List<String>> lists;

        ListProcessor(String node) {
            this.node = node;
        }

        @Override
        public void init(ProcessorContext<String, String> context) {
            this.context = context;
            this.lists = context.getStateStore(node + "-lists");
        }

        @Override
        public void process(Record<String, String> record) {
            DeadLetterProcessingExceptionHandler.refuseIfFailedBefore(context, node);
            if (record.value().startsWith("invalid")) {
                throw new InvalidEventException(record.value(), "Test", "payload.value", "refused before any change");
            }
            List<String> list = lists.get(record.key());
            if (list == null) {
                list = new ArrayList<>();
            }
            list.add(record.value());
            if (node.equals("downstream") && record.value().startsWith("bug")) {
                throw new IllegalStateException("a bug in the rules at " + record.value());
            }
            lists.put(record.key(), list);
            if (node.equals("upstream")) {
                context.forward(record, "downstream");
            }
            context.forward(record.withKey(node).withValue(String.join(",", list)), "out");
        }
    }

    static Serde<List<String>> listSerde() {
        return Serdes.serdeFrom(
                (topic, l) -> l == null ? null : String.join("\n", l).getBytes(StandardCharsets.UTF_8),
                (topic, b) -> b == null ? null : new ArrayList<>(Arrays.asList(new String(b, StandardCharsets.UTF_8).split("\n"))));
    }

    @org.junit.jupiter.api.AfterEach
    void forget() {
        DeadLetterProcessingExceptionHandler.forgetFailures();
    }

    @Test
    void aRecordThatFailsHalfWayIsUndoneByATaskRestartThenDeadLetteredAndThePartitionGoesOn(@TempDir Path stateDir) throws Exception {
        try (KafkaTestCluster kafka = KafkaTestCluster.start()) {
            try (Admin admin = kafka.admin()) {
                admin.createTopics(List.of(new NewTopic(IN, 1, (short) 1), new NewTopic(OUT, 1, (short) 1),
                        new NewTopic(Topics.DEAD_LETTER.name(), 1, (short) 1))).all().get();
            }
            Topology t = new Topology();
            t.addSource("in", new StringDeserializer(), new StringDeserializer(), IN);
            t.addProcessor("upstream", () -> new ListProcessor("upstream"), "in");
            t.addProcessor("downstream", () -> new ListProcessor("downstream"), "upstream");
            t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("upstream-lists"), Serdes.String(), listSerde())
                    .withCachingEnabled(), "upstream");
            t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("downstream-lists"), Serdes.String(), listSerde())
                    .withCachingEnabled(), "downstream");
            t.addSink("out", OUT, new StringSerializer(), new StringSerializer(), "upstream", "downstream");
            String app = "dl-test-" + UUID.randomUUID();
            KafkaStreams streams = new KafkaStreams(t, StreamsDefaults.properties(app, kafka.bootstrapServers(), stateDir, 1,
                    // the replaced thread's consumer does not leave the group: its partition moves after this timeout
                    Map.of(org.apache.kafka.streams.StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000)));
            StreamsDefaults.start(streams, "dl-test");
            try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    kafka.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
                for (String v : List.of("a", "b", "bug-1", "invalid-1", "c")) {
                    p.send(new ProducerRecord<>(IN, "k", v)).get();
                }
            }
            Map<String, String> latest = new HashMap<>();
            List<ConsumerRecord<String, String>> dead = new ArrayList<>();
            long until = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    ConsumerConfig.GROUP_ID_CONFIG, "dl-test-reader"), new StringDeserializer(), new StringDeserializer())) {
                c.subscribe(List.of(OUT, Topics.DEAD_LETTER.name()));
                while (System.nanoTime() < until && !("a,b,c".equals(latest.get("downstream")) && dead.size() >= 2)) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        if (r.topic().equals(OUT)) {
                            latest.put(r.key(), r.value());
                        } else {
                            dead.add(r);
                        }
                    }
                }
            } finally {
                StreamsDefaults.close(streams, Duration.ofSeconds(30));
            }
            assertThat(latest.get("downstream")).as("the failed record left nothing in the held list").isEqualTo("a,b,c");
            assertThat(latest.get("upstream")).as("the processor before the bug still applied it").isEqualTo("a,b,bug-1,c");
            assertThat(dead).extracting(ConsumerRecord::value).containsExactlyInAnyOrder("bug-1", "invalid-1");
            ConsumerRecord<String, String> bug = dead.stream().filter(r -> r.value().equals("bug-1")).findFirst().orElseThrow();
            assertThat(header(bug, "__streams.errors.message"))
                    .contains("processing failed before in downstream").contains("a bug in the rules at bug-1");
            ConsumerRecord<String, String> invalid = dead.stream().filter(r -> r.value().equals("invalid-1")).findFirst().orElseThrow();
            assertThat(header(invalid, "__streams.errors.message")).contains("payload.value: refused before any change");
        }
    }

    private static String header(ConsumerRecord<?, ?> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? "" : new String(h.value(), StandardCharsets.UTF_8);
    }
}

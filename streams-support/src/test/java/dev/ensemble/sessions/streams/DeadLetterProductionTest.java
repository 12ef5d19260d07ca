package dev.ensemble.sessions.streams;

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
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DeadLetterProductionExceptionHandler} and {@link SizeCheckingClientSupplier} with a real broker and exactly-once:
 * an output larger than its topic's {@code max.message.bytes} and an output that cannot be serialized each go to the
 * dead-letter topic with the reason, the records after them are produced, and the stream thread is never replaced; a
 * record too large for a store's changelog fails the task instead.
 */
class DeadLetterProductionTest {
    private static final String IN = "dlp-test-in";
    private static final String OUT = "dlp-test-out";

    /** Forwards each value; "big-N" becomes N random letters (which do not compress). */
    static final class Expand implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(Record<String, String> record) {
            String v = record.value();
            if (v.startsWith("big-")) {
                Random r = new Random(1);
                StringBuilder b = new StringBuilder();
                for (int i = Integer.parseInt(v.substring(4)); i > 0; i--) {
                    b.append((char) ('a' + r.nextInt(26)));
                }
                v = b.toString();
            }
            context.forward(record.withValue(v));
        }
    }

    /** A serializer that cannot encode the value "unserializable". */
    static final class Picky implements Serializer<String> {
        @Override
        public byte[] serialize(String topic, String data) {
            if ("unserializable".equals(data)) {
                throw new IllegalArgumentException("cannot encode " + data);
            }
            return data.getBytes(StandardCharsets.UTF_8);
        }
    }

    @Test
    void tooLargeAndUnserializableOutputsAreDeadLetteredAndTheThreadGoesOn(@TempDir Path stateDir) throws Exception {
        try (KafkaTestCluster kafka = KafkaTestCluster.start()) {
            try (Admin admin = kafka.admin()) {
                admin.createTopics(List.of(new NewTopic(IN, 1, (short) 1),
                        new NewTopic(OUT, 1, (short) 1).configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "10000")),
                        new NewTopic(Topics.DEAD_LETTER.name(), 1, (short) 1))).all().get();
            }
            Topology t = new Topology();
            t.addSource("in", new StringDeserializer(), new StringDeserializer(), IN);
            t.addProcessor("expand", Expand::new, "in");
            t.addSink("out", OUT, new StringSerializer(), new Picky(), "expand");
            KafkaStreams streams = new KafkaStreams(t, StreamsDefaults.properties("dlp-test-" + UUID.randomUUID(),
                    kafka.bootstrapServers(), stateDir, 1, Map.of("commit.interval.ms", 100)));
            List<String> out = new ArrayList<>();
            List<ConsumerRecord<String, String>> dead = new ArrayList<>();
            List<String> threads = new ArrayList<>();
            StreamsDefaults.start(streams, "dlp-test");
            try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    kafka.bootstrapServers()), new StringSerializer(), new StringSerializer());
                 KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                         kafka.bootstrapServers(), ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                         ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.GROUP_ID_CONFIG, "dlp-test-reader"),
                         new StringDeserializer(), new StringDeserializer())) {
                for (String v : List.of("a", "big-50000", "b", "unserializable", "c")) {
                    p.send(new ProducerRecord<>(IN, "k-" + v, v)).get();
                }
                c.subscribe(List.of(OUT, Topics.DEAD_LETTER.name()));
                long until = System.nanoTime() + Duration.ofSeconds(90).toNanos();
                while (System.nanoTime() < until && !(out.contains("c") && dead.size() >= 2)) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        if (r.topic().equals(OUT)) {
                            out.add(r.value());
                        } else {
                            dead.add(r);
                        }
                    }
                    streams.metadataForLocalThreads().stream().map(ThreadMetadata::threadName).forEach(threads::add);
                }
            } finally {
                StreamsDefaults.close(streams, Duration.ofSeconds(30));
            }
            assertThat(out).containsExactly("a", "b", "c");
            assertThat(dead).extracting(ConsumerRecord::key).containsExactly("k-big-50000", "k-unserializable");
            ConsumerRecord<String, String> big = dead.get(0);
            assertThat(header(big, "__streams.errors.exception")).isEqualTo(RecordTooLargeException.class.getName());
            assertThat(header(big, "__streams.errors.message")).contains(OUT).contains("10000 bytes");
            assertThat(header(big, "ensemble.error.output-topic")).isEqualTo(OUT);
            assertThat(big.value()).as("the value, 50,000 bytes, is kept").hasSize(50_000);
            assertThat(big.headers().lastHeader("__streams.errors.topic").value()).asString(StandardCharsets.UTF_8).isEqualTo(IN);
            ConsumerRecord<String, String> unserializable = dead.get(1);
            assertThat(header(unserializable, "__streams.errors.message")).isEqualTo("cannot encode unserializable");
            assertThat(header(unserializable, "ensemble.error.origin")).isEqualTo("VALUE");
            assertThat(unserializable.value()).isNull();
            assertThat(threads).as("the stream thread was never replaced").isNotEmpty().allSatisfy(n -> assertThat(n).endsWith("-StreamThread-1"));
        }
    }

    /** Keeps each value in store "kept" ("big-N" as N random letters). */
    static final class Keep implements Processor<String, String, Void, Void> {
        private org.apache.kafka.streams.state.KeyValueStore<String, String> store;

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            store = context.getStateStore("kept");
        }

        @Override
        public void process(Record<String, String> record) {
            String v = record.value();
            store.put(record.key(), v.startsWith("big-") ? "x".repeat(Integer.parseInt(v.substring(4))) : v);
        }
    }

    @Test
    void aTooLargeRecordForAChangelogFailsTheTaskInsteadOfLeavingTheStoreAndItsChangelogApart(@TempDir Path stateDir) throws Exception {
        String app = "dlp-store-" + UUID.randomUUID();
        String changelog = app + "-kept-changelog";
        try (KafkaTestCluster kafka = KafkaTestCluster.start()) {
            try (Admin admin = kafka.admin()) {
                admin.createTopics(List.of(new NewTopic(IN, 1, (short) 1), new NewTopic(Topics.DEAD_LETTER.name(), 1, (short) 1),
                        new NewTopic(changelog, 1, (short) 1).configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, "compact",
                                TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "10000")))).all().get(); // made before, with a small limit
            }
            Topology t = new Topology();
            t.addSource("in", new StringDeserializer(), new StringDeserializer(), IN);
            t.addProcessor("keep", Keep::new, "in");
            t.addStateStore(org.apache.kafka.streams.state.Stores.keyValueStoreBuilder(
                    org.apache.kafka.streams.state.Stores.persistentKeyValueStore("kept"),
                    org.apache.kafka.common.serialization.Serdes.String(), org.apache.kafka.common.serialization.Serdes.String()), "keep");
            KafkaStreams streams = new KafkaStreams(t, StreamsDefaults.properties(app, kafka.bootstrapServers(), stateDir, 1,
                    Map.of("commit.interval.ms", 100)));
            List<String> threads = new ArrayList<>();
            List<ConsumerRecord<String, String>> dead = new ArrayList<>();
            StreamsDefaults.start(streams, "dlp-store-test");
            try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    kafka.bootstrapServers()), new StringSerializer(), new StringSerializer());
                 KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                         kafka.bootstrapServers(), ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                         ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.GROUP_ID_CONFIG, "dlp-store-reader"),
                         new StringDeserializer(), new StringDeserializer())) {
                p.send(new ProducerRecord<>(IN, "k-big", "big-50000")).get();
                c.subscribe(List.of(Topics.DEAD_LETTER.name()));
                long until = System.nanoTime() + Duration.ofSeconds(90).toNanos();
                while (System.nanoTime() < until && threads.stream().allMatch(n -> n.endsWith("-StreamThread-1"))) {
                    c.poll(Duration.ofMillis(200)).forEach(dead::add);
                    streams.metadataForLocalThreads().stream().map(ThreadMetadata::threadName).forEach(threads::add);
                }
                c.poll(Duration.ofSeconds(1)).forEach(dead::add);
            } finally {
                StreamsDefaults.close(streams, Duration.ofSeconds(30));
            }
            assertThat(threads).as("the task failed: its stream thread was replaced").anySatisfy(n -> assertThat(n).doesNotEndWith("-StreamThread-1"));
            assertThat(dead).as("nothing dead-lettered: the store's change is not dropped from its changelog").isEmpty();
        }
    }

    private static String header(ConsumerRecord<?, ?> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}

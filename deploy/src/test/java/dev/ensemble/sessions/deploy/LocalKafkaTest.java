package dev.ensemble.sessions.deploy;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Exit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LocalKafkaTest {
    private static final Duration READY = Duration.ofSeconds(30);

    @Test
    void dataSurvivesARestartWithoutReformatting(@TempDir Path dir) throws Exception {
        String clusterId;
        Path meta = dir.resolve("kafka/metadata/meta.properties");
        String metaBefore;
        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            kafka.waitUntilReady(READY);
            assertThat(kafka.freshlyFormatted()).isTrue();
            assertThat(kafka.dataDir()).isEqualTo(dir.toAbsolutePath().resolve("kafka"));
            assertThat(meta).exists();
            assertThat(dir.resolve("kafka/logs/meta.properties")).exists();
            metaBefore = Files.readString(meta);
            clusterId = kafka.clusterId();
            assertThat(metaBefore).contains("cluster.id=" + clusterId, "node.id=1");
            try (Admin admin = admin(kafka)) {
                assertThat(admin.describeCluster().clusterId().get()).isEqualTo(clusterId);
                admin.createTopics(List.of(new NewTopic("events", 1, (short) 1)
                        .configs(Map.of(TopicConfig.RETENTION_MS_CONFIG, "-1")))).all().get();
            }
            try (KafkaProducer<String, String> producer = producer(kafka, Map.of())) {
                producer.send(new ProducerRecord<>("events", "session-1", "hello")).get();
            }
        }
        assertThat(dir.resolve("kafka/logs/events-0")).isDirectory();
        assertThat(dir.resolve("kafka/metadata/__cluster_metadata-0")).isDirectory();

        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            kafka.waitUntilReady(READY);
            assertThat(kafka.freshlyFormatted()).isFalse();
            assertThat(kafka.clusterId()).isEqualTo(clusterId);
            assertThat(Files.readString(meta)).isEqualTo(metaBefore);
            try (Admin admin = admin(kafka)) {
                assertThat(admin.describeCluster().clusterId().get()).isEqualTo(clusterId);
            }
            assertThat(readAll(kafka, "events", Map.of(), 1))
                    .extracting(ConsumerRecord::key, ConsumerRecord::value)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("session-1", "hello"));
        }
    }

    /**
     * The broker's listeners take only clients with the data folder's credentials: a plain client (no SASL) reads
     * nothing of a topic holding a record and its admin requests time out, on the client port and on the controller's;
     * a client with a wrong password is refused with an authentication error; one with the file's settings reads.
     */
    @Test
    void aClientWithoutTheDataFoldersCredentialsIsRefused(@TempDir Path dir) throws Exception {
        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            kafka.waitUntilReady(READY);
            Path file = dir.toAbsolutePath().resolve(LocalKafka.CLIENT_PROPERTIES);
            assertThat(kafka.clientPropertiesFile()).isEqualTo(file);
            assertThat(Files.readString(file)).contains("security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN",
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"ensemble\" password=\"");
            if (file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
            }
            try (Admin admin = admin(kafka)) {
                admin.createTopics(List.of(new NewTopic("secret", 1, (short) 1))).all().get();
            }
            try (KafkaProducer<String, String> producer = producer(kafka, Map.of())) {
                producer.send(new ProducerRecord<>("secret", "account-a", "a prompt")).get();
            }

            Map<String, Object> quick = Map.of(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000,
                    AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000);
            for (String address : List.of(kafka.bootstrapServers(), LocalKafka.HOST + ":" + kafka.controllerPort())) {
                Map<String, Object> plain = new java.util.HashMap<>(quick);
                plain.put(address.equals(kafka.bootstrapServers()) ? AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG
                        : AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, address);
                try (Admin admin = Admin.create(plain)) {
                    assertThatThrownBy(() -> admin.describeCluster().nodes().get()).as("a plain admin client on " + address)
                            .hasCauseInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
                }
            }
            assertThat(readAll(kafka.bootstrapServers(), Map.of(), "secret", 1, Duration.ofSeconds(5)))
                    .as("what a plain consumer read").isEmpty();

            Map<String, Object> wrong = kafka.clientProperties();
            wrong.put("sasl.jaas.config", KafkaClientProperties.jaas("ensemble", "not-the-password"));
            assertThatThrownBy(() -> readAll(kafka.bootstrapServers(), wrong, "secret", 1, Duration.ofSeconds(10)))
                    .isInstanceOf(org.apache.kafka.common.errors.SaslAuthenticationException.class);

            Map<String, Object> fromFile = KafkaClientProperties.load(file);
            assertThat(readAll(kafka.bootstrapServers(), fromFile, "secret", 1, Duration.ofSeconds(15)))
                    .extracting(ConsumerRecord::value).containsExactly("a prompt");
        }
    }

    /**
     * The credentials stay the same across restarts; a data folder without the file (one an earlier version made, or
     * whose file was deleted) gets new ones at its next start, and its data is read with them.
     */
    @Test
    void aDataFolderWithoutTheCredentialsFileGetsNewOnesAndKeepsItsData(@TempDir Path dir) throws Exception {
        Path file = dir.toAbsolutePath().resolve(LocalKafka.CLIENT_PROPERTIES);
        String first;
        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            kafka.waitUntilReady(READY);
            first = Files.readString(file);
            try (Admin admin = admin(kafka)) {
                admin.createTopics(List.of(new NewTopic("kept", 1, (short) 1))).all().get();
            }
            try (KafkaProducer<String, String> producer = producer(kafka, Map.of())) {
                producer.send(new ProducerRecord<>("kept", "k", "v")).get();
            }
        }
        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            kafka.waitUntilReady(READY);
            assertThat(Files.readString(file)).as("the same credentials after a restart").isEqualTo(first);
        }
        Files.delete(file);
        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            kafka.waitUntilReady(READY);
            assertThat(Files.readString(file)).as("new credentials").isNotEqualTo(first)
                    .contains("sasl.mechanism=PLAIN");
            assertThat(readAll(kafka, "kept", Map.of(), 1)).extracting(ConsumerRecord::value).containsExactly("v");
        }
        Files.writeString(file, "security.protocol=SASL_PLAINTEXT\n");
        assertThatThrownBy(() -> LocalKafka.start(dir, 0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(file.toString()).hasMessageContaining("delete it");
    }

    @Test
    void exactlyOnceTransactionsCommitOnOneBroker(@TempDir Path dir) throws Exception {
        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            assertThat(kafka.port()).isPositive();
            assertThat(kafka.bootstrapServers()).isEqualTo("127.0.0.1:" + kafka.port());
            kafka.waitUntilReady(READY);
            try (Admin admin = admin(kafka)) {
                admin.createTopics(List.of(new NewTopic("tx", 1, (short) 1))).all().get();
            }
            try (KafkaProducer<String, String> producer = producer(kafka, Map.of(
                    ProducerConfig.TRANSACTIONAL_ID_CONFIG, "local-kafka-test",
                    ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000))) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("tx", "k", "committed"));
                producer.commitTransaction();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("tx", "k", "aborted"));
                producer.abortTransaction();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("tx", "k", "committed-too"));
                producer.commitTransaction();
            }
            assertThat(readAll(kafka, "tx", Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), 2))
                    .extracting(ConsumerRecord::value)
                    .containsExactly("committed", "committed-too");

            // Kafka cannot end the JVM while a LocalKafka is open
            assertThatThrownBy(() -> Exit.halt(1, "test")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("halt");
            assertThat(kafka.failure()).hasValueSatisfying(f -> assertThat(f).contains("halt", "test"));
        }
    }

    @Test
    void aTakenPortFallsBackToAFreeOne(@TempDir Path dir) throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            try (LocalKafka kafka = LocalKafka.start(dir, taken.getLocalPort())) {
                assertThat(kafka.port()).isNotEqualTo(taken.getLocalPort()).isPositive();
                kafka.waitUntilReady(READY);
                try (Admin admin = admin(kafka)) {
                    assertThat(admin.describeCluster().nodes().get()).hasSize(1);
                }
            }
        }
    }

    /**
     * A restart on the same storage keeps the broker's address: asked for any port, or for a taken one, it takes the port
     * of its last start again (a killed {@code up} restarted with open transactions needs its old address to work).
     */
    @Test
    void aRestartTakesThePortOfTheLastStartAgain(@TempDir Path dir) throws Exception {
        int first;
        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            kafka.waitUntilReady(READY);
            first = kafka.port();
        }
        assertThat(dir.resolve("kafka/" + LocalKafka.PORT_FILE)).hasContent(first + "\n");
        try (LocalKafka kafka = LocalKafka.start(dir, 0)) {
            assertThat(kafka.port()).as("any port: the last one again").isEqualTo(first);
            kafka.waitUntilReady(READY);
        }
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            try (LocalKafka kafka = LocalKafka.start(dir, taken.getLocalPort())) {
                assertThat(kafka.port()).as("a taken port: the last one again").isEqualTo(first);
                kafka.waitUntilReady(READY);
            }
        }
        assertThat(LocalKafka.preferredPort(0, 0)).as("no last start: as asked").isZero();
        assertThat(LocalKafka.preferredPort(first, first)).isEqualTo(first);
        try (ServerSocket free = new ServerSocket()) { // a free port asked for explicitly wins over the last one
            free.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            int asked = free.getLocalPort();
            free.close();
            assertThat(LocalKafka.preferredPort(asked, first)).isEqualTo(asked);
        }
        Files.writeString(dir.resolve("kafka/" + LocalKafka.PORT_FILE), "not a port");
        assertThat(LocalKafka.readLastPort(dir.resolve("kafka"))).as("an unreadable record: any port").isZero();
    }

    @Test
    void aPortTakenBetweenChoosingAndBindingIsRetriedOnAnother(@TempDir Path dir) throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
            // the first choice is a port that is already bound, as if another process took it in between
            try (LocalKafka kafka = LocalKafka.start(dir, 0,
                    requested -> calls.getAndIncrement() == 0 ? taken.getLocalPort() : LocalKafka.choosePort(requested))) {
                assertThat(calls).hasValue(2);
                assertThat(kafka.port()).isNotEqualTo(taken.getLocalPort());
                kafka.waitUntilReady(READY);
                assertThat(kafka.failure()).isEmpty();
            }
        }
    }

    @Test
    void aSecondBrokerOnTheSameFolderIsRefusedAndTheFirstKeepsRunning(@TempDir Path dir) {
        try (LocalKafka first = LocalKafka.start(dir, 0)) {
            first.waitUntilReady(READY);
            assertThatThrownBy(() -> LocalKafka.start(dir, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is in use by another local Kafka broker");
            first.waitUntilReady(READY);
            assertThat(first.failure()).isEmpty();
        }
        // the lock is released on close
        try (LocalKafka again = LocalKafka.start(dir, 0)) {
            again.waitUntilReady(READY);
        }
    }

    @Test
    void rejectsABadPortAndForeignStorage(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> LocalKafka.start(dir, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LocalKafka.start(dir, 70_000)).isInstanceOf(IllegalArgumentException.class);
        Files.createDirectories(dir.resolve("kafka/metadata"));
        Files.writeString(dir.resolve("kafka/metadata/meta.properties"), "version=1\nnode.id=7\ncluster.id=abc\n");
        assertThatThrownBy(() -> LocalKafka.start(dir, 0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("node.id 7");
    }

    private static Admin admin(LocalKafka kafka) {
        Map<String, Object> config = kafka.clientProperties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        return Admin.create(config);
    }

    private static KafkaProducer<String, String> producer(LocalKafka kafka, Map<String, Object> extra) {
        Map<String, Object> config = kafka.clientProperties();
        config.putAll(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true));
        config.putAll(extra);
        return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }

    private static List<ConsumerRecord<String, String>> readAll(LocalKafka kafka, String topic,
                                                                Map<String, Object> extra, int expected) {
        Map<String, Object> config = kafka.clientProperties();
        config.putAll(extra);
        return readAll(kafka.bootstrapServers(), config, topic, expected, Duration.ofSeconds(15));
    }

    /** What a consumer with {@code config} (no group) reads of partition 0 of {@code topic} from its beginning, until {@code expected} or {@code wait}. */
    private static List<ConsumerRecord<String, String>> readAll(String bootstrap, Map<String, Object> extra, String topic, int expected,
                                                                Duration wait) {
        Map<String, Object> config = new java.util.HashMap<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false));
        config.putAll(extra);
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + wait.toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }
}

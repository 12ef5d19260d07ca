package dev.ensemble.sessions.deploy;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.ConfigurationSource;
import org.apache.logging.log4j.core.config.xml.XmlConfiguration;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The launcher's console logging: deploy's log4j2.xml is the one Log4j loads, with Kafka at WARN. */
class LoggingConfigTest {
    private static final ClassLoader LOADER = LoggingConfigTest.class.getClassLoader();

    @Test
    void componentPropertiesPinOurXmlSoNoOtherLog4j2FileWins() throws Exception {
        Properties p = new Properties();
        try (InputStream in = LOADER.getResourceAsStream("log4j2.component.properties")) {
            assertThat(in).isNotNull();
            p.load(in);
        }
        assertThat(p.getProperty("log4j2.configurationFile")).isEqualTo("classpath:log4j2.xml");
    }

    private static org.apache.logging.log4j.core.LogEvent warning(String logger, String message) {
        return event(logger, Level.WARN, message, null);
    }

    private static org.apache.logging.log4j.core.LogEvent event(String logger, Level level, String message, Throwable thrown) {
        return org.apache.logging.log4j.core.impl.Log4jLogEvent.newBuilder().setLoggerName(logger).setLevel(level)
                .setMessage(new org.apache.logging.log4j.message.SimpleMessage(message)).setThrown(thrown).build();
    }

    @Test
    void kafkaLogsAtWarnAndTheLauncherAtInfo() {
        ConfigurationSource source = ConfigurationSource.fromResource("log4j2.xml", LOADER);
        assertThat(source).isNotNull();
        assertThat(source.getLocation()).doesNotContain(".jar!"); // deploy's own file, not a dependency's
        LoggerContext context = new LoggerContext("log4j2-xml-check");
        try {
            Configuration config = new XmlConfiguration(context, source);
            config.initialize();
            assertThat(config.getLoggerConfig("org.apache.kafka.clients.admin.AdminClientConfig").getLevel())
                    .isEqualTo(Level.WARN);
            assertThat(config.getLoggerConfig("org.apache.kafka.streams.KafkaStreams").getLevel()).isEqualTo(Level.WARN);
            assertThat(config.getLoggerConfig("kafka.server.BrokerServer").getLevel()).isEqualTo(Level.WARN);
            assertThat(config.getLoggerConfig("state.change.logger").getLevel()).isEqualTo(Level.WARN);
            assertThat(config.getLoggerConfig("kafka.server.DefaultAutoTopicCreationManager").getLevel())
                    .as("its TOPIC_ALREADY_EXISTS warnings are noise").isEqualTo(Level.ERROR);
            assertThat(config.getLoggerConfig("dev.ensemble.sessions.deploy.LocalKafka").getLevel()).isEqualTo(Level.INFO);
            var streamsConfig = config.getLoggerConfig("org.apache.kafka.streams.StreamsConfig");
            assertThat(streamsConfig.getLevel()).isEqualTo(Level.WARN);
            assertThat(streamsConfig.isFiltered(warning("org.apache.kafka.streams.StreamsConfig", "Processing exception handler is not "
                    + "enabled for the GlobalThread. It's recommended to set `processing.exception.handler.global.enabled` to true")))
                    .as("Streams' warning about its own topology config is dropped").isTrue();
            assertThat(streamsConfig.isFiltered(warning("org.apache.kafka.streams.StreamsConfig", "some other warning")))
                    .as("its other warnings are kept").isFalse();
            var controller = config.getLoggerConfig("org.apache.kafka.controller.QuorumController");
            assertThat(controller.isFiltered(warning("org.apache.kafka.controller.QuorumController", "[QuorumController id=1] "
                    + "Performing controller activation. The metadata log appears to be empty. Appending 6 bootstrap record(s)"))).isTrue();
            assertThat(controller.isFiltered(warning("org.apache.kafka.controller.QuorumController",
                    "[QuorumController id=1] Performing controller activation."))).isTrue();
            assertThat(controller.isFiltered(warning("org.apache.kafka.controller.QuorumController",
                    "[QuorumController id=1] Renouncing the leadership due to a metadata log event"))).isFalse();
            assertThat(controller.isFiltered(warning("org.apache.kafka.controller.QuorumController", "[QuorumController id=1] "
                    + "Performing controller activation. Aborting in-progress metadata transaction at offset 42.")))
                    .as("an activation after an unclean stop is kept").isFalse();
            var replicas = config.getLoggerConfig("kafka.server.ReplicaManager");
            String append = "[ReplicaManager broker=1] Error processing append operation on partition x91A3GXzTvGUmxjrma156g:sessions.view.retirement-0";
            assertThat(replicas.isFiltered(event("kafka.server.ReplicaManager", Level.ERROR, append,
                    new org.apache.kafka.common.errors.OutOfOrderSequenceException("Invalid sequence number for producer 5 at offset 10 in "
                            + "partition sessions.view.retirement-0: 1 (incoming seq. number). Expected sequence 0 for transactions v2 "
                            + "idempotent producer with no existing state.")))).as("the refusal the producer retries").isTrue();
            assertThat(replicas.isFiltered(event("kafka.server.ReplicaManager", Level.ERROR, append,
                    new org.apache.kafka.common.errors.OutOfOrderSequenceException("Out of order sequence number for producer 5 at "
                            + "offset 10 in partition p-0: 7 (incoming seq. number), 3 (current end sequence number)"))))
                    .as("another sequence error is kept").isFalse();
            assertThat(replicas.isFiltered(event("kafka.server.ReplicaManager", Level.ERROR, append, new IllegalStateException("disk"))))
                    .as("another append error is kept").isFalse();
            var sender = config.getLoggerConfig("org.apache.kafka.clients.producer.internals.Sender");
            String retrying = "[Producer clientId=p, transactionalId=t] Got error produce response with correlation id 63 on "
                    + "topic-partition sessions.view.sessions-0, retrying (2147483646 attempts left). Error: ";
            assertThat(sender.isFiltered(warning("org.apache.kafka.clients.producer.internals.Sender", retrying + "CONCURRENT_TRANSACTIONS"))).isTrue();
            assertThat(sender.isFiltered(warning("org.apache.kafka.clients.producer.internals.Sender", retrying + "OUT_OF_ORDER_SEQUENCE_NUMBER"))).isTrue();
            assertThat(sender.isFiltered(warning("org.apache.kafka.clients.producer.internals.Sender", retrying + "NOT_LEADER_OR_FOLLOWER")))
                    .as("other retries are kept").isFalse();
            var network = config.getLoggerConfig("org.apache.kafka.clients.NetworkClient");
            assertThat(network.isFiltered(warning("org.apache.kafka.clients.NetworkClient", "[NodeToControllerChannelManager id=1 "
                    + "name=registration] Attempting to close NetworkClient that has already been closed."))).isTrue();
            assertThat(network.isFiltered(warning("org.apache.kafka.clients.NetworkClient",
                    "[Producer clientId=p] Connection to node 1 (/127.0.0.1:9092) could not be established."))).isFalse();
            assertThat(config.getRootLogger().getLevel()).isEqualTo(Level.INFO);
        } finally {
            context.stop();
        }
    }
}

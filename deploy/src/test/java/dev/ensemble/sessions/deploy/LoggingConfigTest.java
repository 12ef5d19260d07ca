package dev.ensemble.sessions.deploy;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.ConfigurationSource;
import org.apache.logging.log4j.core.config.xml.XmlConfiguration;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.List;
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

    private static org.apache.logging.log4j.core.LogEvent event(String logger, Level level, String message, Throwable thrown) {
        return org.apache.logging.log4j.core.impl.Log4jLogEvent.newBuilder().setLoggerName(logger).setLevel(level)
                .setMessage(new org.apache.logging.log4j.message.SimpleMessage(message)).setThrown(thrown).build();
    }

    private static org.apache.logging.log4j.core.LogEvent warn(String logger, String message) {
        return event(logger, Level.WARN, message, null);
    }

    /** A console line: whether the launcher's config drops it, its logger, message and exception (ERROR when it has one). */
    private record Line(boolean dropped, String logger, String message, Throwable thrown) {
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
            assertThat(config.getLoggerConfig("org.apache.kafka.streams.StreamsConfig").getLevel()).isEqualTo(Level.WARN);
            String append = "[ReplicaManager broker=1] Error processing append operation on partition x91A3GXzTvGUmxjrma156g:sessions.view.retirement-0";
            String retrying = "[Producer clientId=p, transactionalId=t] Got error produce response with correlation id 63 on "
                    + "topic-partition sessions.view.sessions-0, retrying (2147483646 attempts left). Error: ";
            String sender = "org.apache.kafka.clients.producer.internals.Sender";
            String internals = "org.apache.kafka.streams.processor.internals.";
            var corrupted = new org.apache.kafka.streams.errors.TaskCorruptedException(
                    java.util.Set.of(new org.apache.kafka.streams.processor.TaskId(0, 0)));
            String corruptedName = corrupted.getClass().getName();
            // what the console drops (true) and a neighbour of each that it keeps (false)
            List<Line> lines = List.of(
                    new Line(true, "org.apache.kafka.streams.StreamsConfig", "Processing exception handler is not enabled for the "
                            + "GlobalThread. It's recommended to set `processing.exception.handler.global.enabled` to true", null),
                    new Line(false, "org.apache.kafka.streams.StreamsConfig", "some other warning", null),
                    new Line(true, "org.apache.kafka.controller.QuorumController", "[QuorumController id=1] Performing controller "
                            + "activation. The metadata log appears to be empty. Appending 6 bootstrap record(s)", null),
                    new Line(true, "org.apache.kafka.controller.QuorumController", "[QuorumController id=1] Performing controller activation.", null),
                    new Line(false, "org.apache.kafka.controller.QuorumController",
                            "[QuorumController id=1] Renouncing the leadership due to a metadata log event", null),
                    new Line(false, "org.apache.kafka.controller.QuorumController", "[QuorumController id=1] Performing controller "
                            + "activation. Aborting in-progress metadata transaction at offset 42.", null),
                    new Line(true, "kafka.server.ReplicaManager", append, new org.apache.kafka.common.errors.OutOfOrderSequenceException(
                            "Invalid sequence number for producer 5 at offset 10 in partition sessions.view.retirement-0: 1 (incoming seq. "
                                    + "number). Expected sequence 0 for transactions v2 idempotent producer with no existing state.")),
                    new Line(true, "kafka.server.ReplicaManager", append, new org.apache.kafka.common.errors.OutOfOrderSequenceException(
                            "Out of order sequence number for producer 5 at offset 54 in partition ensemble-gateway-gateway-sessions-changelog-0: "
                                    + "2 (incoming seq. number), 0 (current end sequence number)")),
                    new Line(false, "kafka.server.ReplicaManager", append, new org.apache.kafka.common.errors.OutOfOrderSequenceException(
                            "Out of order sequence number for producer 5 at offset 10 in partition p-0: 3 (incoming seq. number), 3 "
                                    + "(current end sequence number)")),
                    new Line(false, "kafka.server.ReplicaManager", append, new org.apache.kafka.common.errors.OutOfOrderSequenceException(
                            "Out of order sequence number for producer 5 at offset 10 in partition p-0: 1 (incoming seq. number), 3 "
                                    + "(current end sequence number)")),
                    new Line(false, "kafka.server.ReplicaManager", append, new IllegalStateException("disk")),
                    new Line(true, sender, retrying + "CONCURRENT_TRANSACTIONS", null),
                    new Line(true, sender, retrying + "OUT_OF_ORDER_SEQUENCE_NUMBER", null),
                    new Line(false, sender, retrying + "NOT_LEADER_OR_FOLLOWER", null),
                    new Line(true, "org.apache.kafka.clients.NetworkClient", "[NodeToControllerChannelManager id=1 name=registration] "
                            + "Attempting to close NetworkClient that has already been closed.", null),
                    new Line(false, "org.apache.kafka.clients.NetworkClient",
                            "[Producer clientId=p] Connection to node 1 (/127.0.0.1:9092) could not be established.", null),
                    // Streams' recovery of tasks without a checkpoint after an unclean stop, and neighbours it keeps
                    new Line(true, internals + "ProcessorStateManager", "stream-client [ensemble-projector-86ab] State store session-chains did "
                            + "not find checkpoint offsets while stores are not empty, since under EOS it has the risk of getting uncommitted "
                            + "data in stores we have to treat it as a task corruption error", null),
                    new Line(false, internals + "ProcessorStateManager", "stream-thread [t] task [0_0] Failed to write offset checkpoint file", null),
                    new Line(true, internals + "StateDirectory", "Failed to register startup state stores for task 0_0: Tasks [0_0] are "
                            + "corrupted and hence need to be re-initialized", null),
                    new Line(false, internals + "StateDirectory", "Failed to register startup state stores for task 0_0: disk full", null),
                    new Line(true, internals + "TaskManager", "stream-thread [t] Encounter corrupted task 0_0, will group it with other "
                            + "corrupted tasks and handle together", corrupted),
                    new Line(true, internals + "TaskManager", "stream-thread [t] Get exceptions for the following tasks: {0_0=" + corruptedName
                            + ": Tasks [0_0] are corrupted and hence need to be re-initialized, 0_1=" + corruptedName + ": Tasks [0_1] are "
                            + "corrupted and hence need to be re-initialized}", null),
                    new Line(false, internals + "TaskManager", "stream-thread [t] Get exceptions for the following tasks: {0_0=" + corruptedName
                            + ": Tasks [0_0] are corrupted, 0_1=org.apache.kafka.streams.errors.StreamsException: boom}", null),
                    new Line(false, internals + "TaskManager", "stream-thread [t] Get exceptions for the following tasks: {0_0=" + corruptedName
                            + ": Tasks [0_0] are corrupted, t__0_1=org.apache.kafka.streams.errors.StreamsException: boom}", null),
                    new Line(true, internals + "StreamThread", "stream-thread [t] Detected the states of tasks [0_1, 0_0] are corrupted. Will "
                            + "close the task as dirty and re-create and bootstrap from scratch.", corrupted),
                    new Line(false, internals + "StreamThread", "stream-thread [t] Detected the states of tasks [0_1, 0_0] are corrupted. Will "
                            + "close the task as dirty and re-create and bootstrap from scratch.", new IllegalStateException("other")),
                    new Line(false, internals + "StreamThread", "stream-thread [t] Encountered the following exception during processing", null));
            for (Line l : lines) {
                var event = event(l.logger(), l.thrown() == null ? Level.WARN : Level.ERROR, l.message(), l.thrown());
                assertThat(config.getLoggerConfig(l.logger()).isFiltered(event)).as("%s: %s (%s)", l.logger(), l.message(), l.thrown())
                        .isEqualTo(l.dropped());
            }
            assertThat(config.getRootLogger().getLevel()).isEqualTo(Level.INFO);

            // the transaction coordinator's tries to reach the broker's own listener while it starts: the first kept,
            // the burst after it dropped; another client's connection warnings, and the coordinator's errors, all kept
            String coordinator = "[TransactionCoordinator id=1] Connection to node 1 (localhost/127.0.0.1:9092) could not be "
                    + "established. Node may not be available.";
            var network = config.getLoggerConfig("org.apache.kafka.clients.NetworkClient");
            assertThat(network.isFiltered(warn("org.apache.kafka.clients.NetworkClient", coordinator))).as("the first").isFalse();
            for (int i = 0; i < 20; i++) {
                assertThat(network.isFiltered(warn("org.apache.kafka.clients.NetworkClient", coordinator))).as("try %d", i).isTrue();
                assertThat(network.isFiltered(warn("org.apache.kafka.clients.NetworkClient",
                        "[Producer clientId=p] Connection to node 1 (/127.0.0.1:9092) could not be established."))).isFalse();
            }
            assertThat(network.isFiltered(event("org.apache.kafka.clients.NetworkClient", Level.ERROR, coordinator, null))).as("an ERROR is never rate-limited").isFalse();
        } finally {
            context.stop();
        }
    }
}

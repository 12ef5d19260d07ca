package dev.ensemble.sessions.deploy;

import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.impl.Log4jLogEvent;
import org.apache.logging.log4j.message.SimpleMessage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console's filters of known, harmless Kafka lines, through the launcher's own {@code log4j2.xml}: each drops
 * exactly its lines, and a line that only looks alike (another request, another exception, another logger) stays.
 */
class ConsoleNoiseFiltersTest {
    private static LoggerContext context;
    private static Configuration config;

    @BeforeAll
    static void loadTheLaunchersConfiguration() throws Exception {
        context = new LoggerContext("console-noise-test");
        context.setConfigLocation(ConsoleNoiseFiltersTest.class.getResource("/log4j2.xml").toURI());
        config = context.getConfiguration();
        assertThat(config.getName()).as("the launcher's configuration, not the tests'").doesNotContain("test");
    }

    @AfterAll
    static void stop() {
        context.stop();
    }

    /** Whether the launcher's configuration lets {@code event} reach the console. */
    private static boolean shown(LogEvent event) {
        var logger = config.getLoggerConfig(event.getLoggerName());
        return event.getLevel().isMoreSpecificThan(logger.getLevel()) && !logger.isFiltered(event);
    }

    private static LogEvent event(String logger, Level level, String message, Throwable thrown) {
        return Log4jLogEvent.newBuilder().setLoggerName(logger).setLevel(level).setMessage(new SimpleMessage(message))
                .setThrown(thrown).build();
    }

    private static final String REGISTRATION = "Unexpected error handling request RequestHeader(apiKey=CONTROLLER_REGISTRATION, "
            + "apiVersion=0, clientId=1, correlationId=0, headerVersion=2) -- ControllerRegistrationRequestData(controllerId=1, "
            + "incarnationId=UygbnD26QRWhwURHK-v5DA, zkMigrationReady=false) with context RequestContext(…)";

    @Test
    void theControllerRegistrationRefusedWhileTheControllerBecomesActiveIsDroppedAndNothingElse() {
        NotControllerException notYet = new NotControllerException("The active controller appears to be node 1.");
        assertThat(shown(event("kafka.server.ControllerApis", Level.ERROR, REGISTRATION, new CompletionException(notYet)))).isFalse();
        assertThat(shown(event("kafka.server.ControllerApis", Level.ERROR, REGISTRATION, notYet))).isFalse();
        // as the embedded broker logs it (Kafka 4.3.1, seen at a restart after a clean stop): after its log context
        assertThat(shown(event("kafka.server.ControllerApis", Level.ERROR, "[ControllerApis nodeId=1] " + REGISTRATION,
                new CompletionException(notYet)))).as("with the log context").isFalse();
        assertThat(shown(event("kafka.server.ControllerApis", Level.ERROR, "[ControllerApis nodeId=1] "
                + REGISTRATION.replace("CONTROLLER_REGISTRATION", "BROKER_REGISTRATION"), notYet))).as("another request, with the log context").isTrue();

        assertThat(shown(event("kafka.server.ControllerApis", Level.ERROR, REGISTRATION,
                new CompletionException(new InvalidRequestException("bad listener"))))).as("another exception").isTrue();
        assertThat(shown(event("kafka.server.ControllerApis", Level.ERROR,
                REGISTRATION.replace("CONTROLLER_REGISTRATION", "BROKER_REGISTRATION"), notYet))).as("another request").isTrue();
        assertThat(shown(event("kafka.server.KafkaApis", Level.ERROR, REGISTRATION, notYet))).as("another logger").isTrue();
    }

    @Test
    void aClientWithoutTheBrokersSaslSettingsIsShownOnceAndAnotherNetworkErrorEachTime() {
        String selector = "org.apache.kafka.common.network.Selector";
        // as the embedded broker logs it when a client without its SASL settings connects (seen with Kafka 4.3.1)
        String refused = "[SocketServer listenerType=BROKER, nodeId=1] Unexpected error from /127.0.0.1 "
                + "(channelId=127.0.0.1:19777-127.0.0.1:3404%d-0-26); closing connection";
        var why = new org.apache.kafka.common.errors.InvalidRequestException("Unexpected Kafka request of type METADATA during SASL handshake.");
        assertThat(shown(event(selector, Level.WARN, String.format(refused, 0), why))).as("the first").isTrue();
        for (int i = 1; i < 6; i++) {
            assertThat(shown(event(selector, Level.WARN, String.format(refused, i), why))).as("the next ones, at once").isFalse();
        }
        for (int i = 0; i < 3; i++) {
            assertThat(shown(event(selector, Level.WARN, String.format(refused, i),
                    new IllegalStateException("a request the broker could not handle " + i))))
                    .as("another unexpected error of the network layer, each time").isTrue();
        }
    }

    @Test
    void aRetriedAppendIsDroppedAndAnotherOutOfOrderSequenceStays() {
        String append = "[ReplicaManager broker=1] Error processing append operation on partition events-0";
        assertThat(shown(event("kafka.server.ReplicaManager", Level.ERROR, append, new OutOfOrderSequenceException(
                "Invalid sequence number for new epoch: Expected sequence 0 for transactions v2 idempotent producer with no existing state"))))
                .isFalse();
        assertThat(shown(event("kafka.server.ReplicaManager", Level.ERROR, append, new OutOfOrderSequenceException(
                "Out of order sequence number for producer 7 at offset 12 in partition events-0: 5 (incoming seq. number), 2 (current end sequence number)"))))
                .as("a gap: the batches before it were refused and come again").isFalse();
        assertThat(shown(event("kafka.server.ReplicaManager", Level.ERROR, append, new OutOfOrderSequenceException(
                "Out of order sequence number for producer 7 at offset 12 in partition events-0: 2 (incoming seq. number), 5 (current end sequence number)"))))
                .as("a batch behind the end: not the retried append").isTrue();
        assertThat(shown(event("org.apache.kafka.clients.producer.internals.Sender", Level.WARN,
                "[Producer clientId=p] Got error produce response with correlation id 9 on topic-partition events-0, retrying (2147483646 attempts left). Error: CONCURRENT_TRANSACTIONS",
                null))).isFalse();
        assertThat(shown(event("org.apache.kafka.clients.producer.internals.Sender", Level.WARN,
                "[Producer clientId=p] Got error produce response with correlation id 9 on topic-partition events-0, retrying (2147483646 attempts left). Error: NOT_LEADER_OR_FOLLOWER",
                null))).as("another error the producer retries").isTrue();
    }

    @Test
    void theRecoveryOfCorruptedTasksIsDroppedAndAnyOtherTaskErrorStays() {
        String taskManager = "org.apache.kafka.streams.processor.internals.TaskManager";
        assertThat(shown(event(taskManager, Level.ERROR, "stream-thread [t] Get exceptions for the following tasks: "
                + "{0_1=org.apache.kafka.streams.errors.TaskCorruptedException: Tasks [0_1] are corrupted}", null))).isFalse();
        assertThat(shown(event(taskManager, Level.ERROR, "stream-thread [t] Get exceptions for the following tasks: "
                + "{0_1=org.apache.kafka.streams.errors.TaskCorruptedException: Tasks [0_1] are corrupted, "
                + "0_2=org.apache.kafka.streams.errors.StreamsException: disk full}", null))).as("another exception among them").isTrue();
        assertThat(shown(event("org.apache.kafka.streams.processor.internals.ProcessorStateManager", Level.WARN,
                "task [0_1] State store runs did not find checkpoint offsets while stores are not empty, since under EOS it has "
                        + "the risk of getting uncommitted data in stores we have to treat it as a task corruption error", null))).isFalse();
        assertThat(shown(event("org.apache.kafka.streams.processor.internals.StreamThread", Level.WARN,
                "stream-thread [t] Detected the states of tasks [0_1] are corrupted. Will close the task as dirty and re-create",
                null))).isFalse();
        assertThat(shown(event("org.apache.kafka.streams.processor.internals.StreamThread", Level.ERROR,
                "stream-thread [t] Failed to process stream task 0_1", new IllegalStateException("boom")))).isTrue();
    }
}

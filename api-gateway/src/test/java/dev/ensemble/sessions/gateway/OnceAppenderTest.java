package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link OnceAppender} on a real broker, where an append fails: no copy is told it is in the log. */
class OnceAppenderTest {
    /** What the log holds: nothing yet. */
    static final OnceAppender.LogReading EMPTY_LOG = new OnceAppender.LogReading() {
        @Override
        public Long content(String account, String eventId) {
            return null;
        }

        @Override
        public boolean awaitLogEnd(Duration timeout) {
            return true;
        }
    };

    @Test
    void whenTheAppendFailsTheOtherCopiesOfItsEventIdsArePostAgainNotDuplicateOrConflict() throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            try (Admin admin = cluster.admin()) {
                TopicAdmin.ensureTopics(admin, 1, (short) 1);
            }
            // every record is over the producer's request size: the transaction of the group fails
            OnceAppender appender = new OnceAppender(cluster.bootstrapServers(), Map.of(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 64),
                    () -> 1, EMPTY_LOG, Duration.ofSeconds(30));
            try {
                byte[] value = new byte[512];
                List<OnceAppender.Outcome> outcomes = appender.append("acct-ana", List.of(
                        new OnceAppender.Item("e-1", value, 1L),
                        new OnceAppender.Item("e-1", value, 1L),   // the same event again
                        new OnceAppender.Item("e-1", value, 2L))); // another under its eventId
                assertThat(outcomes).hasSize(3).allSatisfy(o -> {
                    assertThat(o.appended()).isFalse();
                    assertThat(o.duplicate()).as("not in the log: not a duplicate").isFalse();
                    assertThat(o.conflict()).as("nothing in the log to conflict with").isFalse();
                    assertThat(o.reason()).contains("post it again");
                });
            } finally {
                appender.close();
            }
        }
    }
}

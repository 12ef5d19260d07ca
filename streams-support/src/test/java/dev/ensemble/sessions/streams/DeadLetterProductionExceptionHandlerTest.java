package dev.ensemble.sessions.streams;

import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler.Result;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The answers of {@link DeadLetterProductionExceptionHandler} to a refused record (the broker test shows their effect). */
class DeadLetterProductionExceptionHandlerTest {
    private static final ErrorHandlerContext CONTEXT = new ErrorHandlerContext() {
        public String topic() { return "sessions.events"; }
        public int partition() { return 0; }
        public long offset() { return 7; }
        public Headers headers() { return new RecordHeaders(); }
        public String processorNodeId() { return "session-chains"; }
        public TaskId taskId() { return new TaskId(0, 0); }
        public long timestamp() { return 0L; }
        public byte[] sourceRawKey() { return new byte[0]; }
        public byte[] sourceRawValue() { return new byte[0]; }
    };

    private static DeadLetterProductionExceptionHandler handler() {
        DeadLetterProductionExceptionHandler h = new DeadLetterProductionExceptionHandler();
        h.configure(Map.of(StreamsConfig.APPLICATION_ID_CONFIG, "ensemble-projector",
                StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, Topics.DEAD_LETTER.name()));
        return h;
    }

    private static ProducerRecord<byte[], byte[]> to(String topic) {
        return new ProducerRecord<>(topic, new byte[]{'k'}, new byte[100]);
    }

    @Test
    void aTooLargeViewIsDeadLetteredAndProcessingGoesOn() {
        var r = handler().handleError(CONTEXT, to("sessions.view.sessions"), new RecordTooLargeException("too large"));
        assertThat(r.result()).isEqualTo(Result.RESUME);
        assertThat(r.deadLetterQueueRecords()).singleElement().satisfies(d -> assertThat(d.topic()).isEqualTo(Topics.DEAD_LETTER.name()));
    }

    @Test
    void aTooLargeRecordForAnInternalTopicOfTheApplicationFailsTheTask() {
        var h = handler();
        for (String topic : new String[]{"ensemble-projector-session-chains-changelog", "ensemble-projector-by-account-repartition"}) {
            var r = h.handleError(CONTEXT, to(topic), new RecordTooLargeException("too large"));
            assertThat(r.result()).as(topic).isEqualTo(Result.FAIL);
            assertThat(r.deadLetterQueueRecords()).as(topic).isEmpty();
        }
        assertThat(h.handleError(CONTEXT, to("other-app-store-changelog"), new RecordTooLargeException("too large")).result())
                .as("another application's topic is an output like any other").isEqualTo(Result.RESUME);
    }

    @Test
    void theInternalTopicsStreamsCreatesTakeRecordsAsLargeAsAView() {
        var p = StreamsDefaults.properties("app", "dummy:9092", Path.of("/tmp"), 1, Map.of());
        assertThat(p.get(StreamsConfig.topicPrefix(TopicConfig.MAX_MESSAGE_BYTES_CONFIG))).isEqualTo(Topics.LARGE_RECORD_BYTES);
    }
}

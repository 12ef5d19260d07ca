package dev.ensemble.sessions.streams;

import dev.ensemble.sessions.schema.InvalidEventException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler.Result;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.UncheckedIOException;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The answers of {@link DeadLetterProcessingExceptionHandler}, attempt by attempt (the broker test shows their effect). */
class DeadLetterProcessingExceptionHandlerTest {
    private static ErrorHandlerContext at(String node, long offset) {
        return new ErrorHandlerContext() {
            public String topic() { return "sessions.events"; }
            public int partition() { return 0; }
            public long offset() { return offset; }
            public Headers headers() { return new RecordHeaders(); }
            public String processorNodeId() { return node; }
            public TaskId taskId() { return new TaskId(0, 0); }
            public long timestamp() { return 0L; }
            public byte[] sourceRawKey() { return new byte[0]; }
            public byte[] sourceRawValue() { return new byte[0]; }
        };
    }

    private static DeadLetterProcessingExceptionHandler handler() {
        DeadLetterProcessingExceptionHandler h = new DeadLetterProcessingExceptionHandler();
        h.configure(Map.of(StreamsConfig.APPLICATION_ID_CONFIG, "handler-test"));
        return h;
    }

    private static final Record<String, String> RECORD = new Record<>("k", "v", 0L);

    @AfterEach
    void forget() {
        DeadLetterProcessingExceptionHandler.forgetFailures();
    }

    @Test
    void aBugFailsTheTaskOnceThenTheRecordIsDeadLetteredForThatProcessorOnly() {
        var h = handler();
        assertThat(h.handleError(at("corpus-stats", 7), RECORD, new IllegalStateException("bug")).result()).isEqualTo(Result.FAIL);
        assertThat(h.handleError(at("corpus-stats", 7), RECORD, new IllegalStateException("bug")).result()).isEqualTo(Result.RESUME);
        assertThat(h.handleError(at("session-chains", 7), RECORD, new IllegalStateException("bug")).result())
                .as("another processor failing on the same record is its own first failure").isEqualTo(Result.FAIL);
        assertThat(h.handleError(at("corpus-stats", 8), RECORD, new IllegalStateException("bug")).result())
                .as("the next record").isEqualTo(Result.FAIL);
    }

    @Test
    void aFailureOfTheEnvironmentIsTriedAgainAsOftenAsItTakes() {
        var h = handler();
        for (int attempt = 0; attempt < 3; attempt++) {
            assertThat(h.handleError(at("event-intake", 3), RECORD, new ProcessorStateException("disk full")).result())
                    .isEqualTo(Result.FAIL);
            assertThat(h.handleError(at("event-intake", 4), RECORD,
                    new RuntimeException(new UncheckedIOException(new java.io.IOException("no space")))).result()).isEqualTo(Result.FAIL);
        }
        assertThat(h.handleError(at("event-intake", 3), RECORD, new IllegalStateException("bug")).result())
                .as("nothing was remembered for it").isEqualTo(Result.FAIL);
    }

    @Test
    void badInputAndPunctuationsContinue() {
        var h = handler();
        assertThat(h.handleError(at("event-intake", 5), RECORD, new InvalidEventException("e1", "RunClaimed", "runId", "blank")).result())
                .isEqualTo(Result.RESUME);
        assertThat(h.handleError(at("session-chains", -1), null, new IllegalStateException("in a punctuation")).result())
                .isEqualTo(Result.RESUME);
    }

    /** Each dead letter is counted by the record's event type and the application that wrote it; a retried record is not one. */
    @Test
    void eachDeadLetterIsCountedByEventTypeInTheRegistryTheApplicationWasGiven() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        DeadLetterProcessingExceptionHandler h = new DeadLetterProcessingExceptionHandler();
        java.util.Properties p = StreamsDefaults.properties("ensemble-projector", "dummy:9092", java.nio.file.Path.of("/tmp"), 1, Map.of());
        ServiceMeters.withRegistry(p, registry);
        Map<String, Object> configs = new java.util.HashMap<>();
        p.forEach((k, v) -> configs.put(k.toString(), v));
        h.configure(configs);
        dev.ensemble.sessions.events.Event event = dev.ensemble.sessions.schema.SamplesAccess.one();
        String type = dev.ensemble.sessions.schema.EventTypes.typeOf(event);

        assertThat(h.handleError(at("event-intake", 5), new Record<>("k", event, 0L),
                new InvalidEventException("e1", type, "runId", "blank")).deadLetterQueueRecords()).hasSize(1);
        assertThat(h.handleError(at("event-intake", 6), RECORD, new InvalidEventException("e2", "RunClaimed", "runId", "blank"))
                .deadLetterQueueRecords()).hasSize(1);
        assertThat(h.handleError(at("event-intake", 7), RECORD, new ProcessorStateException("disk full")).result())
                .as("a failure of the environment is tried again, not dead-lettered").isEqualTo(Result.FAIL);

        assertThat(registry.get(ServiceMeters.DEAD_LETTERED).tags("type", type, "service", "ensemble-projector").counter().count()).isEqualTo(1.0);
        assertThat(registry.get(ServiceMeters.DEAD_LETTERED).tags("type", "unknown", "service", "ensemble-projector").counter().count())
                .as("a value that is not an event").isEqualTo(1.0);
        assertThat(registry.get(ServiceMeters.DEAD_LETTERED).counters()).hasSize(2);
    }

    @Test
    void withoutARegistryNothingIsCountedAndTheAnswersAreTheSame() {
        assertThat(ServiceMeters.of(Map.of())).isSameAs(ServiceMeters.NONE);
        assertThat(handler().handleError(at("event-intake", 5), RECORD, new InvalidEventException("e1", "RunClaimed", "runId", "blank"))
                .result()).isEqualTo(Result.RESUME);
    }
}

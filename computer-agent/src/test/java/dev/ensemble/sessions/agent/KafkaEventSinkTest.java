package dev.ensemble.sessions.agent;

import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KafkaEventSinkTest {
    @Test
    void aSendThatFailsIsThrownByFlushOnceSoTheImporterKeepsNoProgressAndCanTryAgain() {
        EventFactory events = new EventFactory(new ImportConfig("ana", "c1", new Stores.SettableClock(Stores.NOW), Path.of("s.json")));
        // nothing listens on port 1: the producer gives up on metadata after max.block.ms
        try (KafkaEventSink sink = new KafkaEventSink("127.0.0.1:1", Map.of("max.block.ms", 300,
                "reconnect.backoff.max.ms", 100))) {
            sink.accept(events.computerStatus(true, Map.of()));

            assertThatThrownBy(sink::flush).isInstanceOf(KafkaException.class)
                    .hasMessageContaining("could not be written to sessions.events");

            // reported once: the importer sends again from its recorded progress, and only a new failure throws again
            assertThatCode(sink::flush).doesNotThrowAnyException();
            sink.accept(events.computerStatus(true, Map.of()));
            assertThatThrownBy(sink::flush).isInstanceOf(KafkaException.class);
        }
    }
}

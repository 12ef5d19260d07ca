package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link EventContent#fingerprint} without the shared contract file (which {@code ContractJsonTest} adds). */
class EventContentTest {
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-30T00:00:00Z"), ZoneOffset.UTC);

    static Event status(String capabilities, String recordedAt) {
        return EventJson.parse("{\"eventId\":\"e-1\",\"type\":\"ComputerStatus\",\"account\":\"a\",\"space\":\"s\","
                + "\"occurredAt\":\"2026-11-02T09:00:00Z\"," + (recordedAt == null ? "" : "\"recordedAt\":\"" + recordedAt + "\",")
                + "\"source\":\"computer:c\",\"payload\":{\"computerId\":\"c\",\"online\":true,\"capabilities\":" + capabilities + "}}", CLOCK);
    }

    @Test
    void theSameEventInAnyMapOrderAndAtAnyRecordedAtThroughTheLogIsOneContentAndAnotherEventAnother() {
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        Event first = status("{\"a\":1,\"b\":2,\"c\":3}", null);
        long f = EventContent.fingerprint(first);
        assertThat(EventContent.fingerprint(status("{\"c\":3,\"b\":2,\"a\":1}", "2026-11-02T10:00:00Z"))).as("map order, recordedAt").isEqualTo(f);
        assertThat(EventContent.fingerprint(serde.decode(serde.encode(first)))).as("read back from the log").isEqualTo(f);
        assertThat(EventContent.fingerprint(status("{\"a\":1,\"b\":2,\"c\":4}", null))).as("a map value").isNotEqualTo(f);
        assertThat(EventContent.fingerprint(status("{\"a\":1,\"b\":2}", null))).as("a map entry fewer").isNotEqualTo(f);
        assertThat(EventContent.fingerprint(status("{}", null))).as("an empty map").isNotEqualTo(f);
        assertThat(EventContent.fingerprint(first)).as("again on the same thread (its buffer reused)").isEqualTo(f);
    }

    @Test
    void minusZeroAndZeroAreOneNumber() {
        java.util.function.Function<String, Event> decision = score -> EventJson.parse("{\"eventId\":\"e-2\","
                + "\"type\":\"SessionChoiceRecorded\",\"account\":\"a\",\"space\":\"s\",\"occurredAt\":\"2026-11-02T09:00:00Z\","
                + "\"source\":\"service:choice\",\"payload\":{\"runId\":\"r\",\"agent\":\"claude-code\",\"computerId\":\"c\","
                + "\"decision\":\"NEW\",\"band\":\"NONE\",\"score\":" + score + ",\"reason\":\"x\","
                + "\"configVersion\":\"v\",\"configHash\":\"h\",\"candidates\":[]}}", CLOCK);
        assertThat(EventContent.fingerprint(decision.apply("-0.0"))).isEqualTo(EventContent.fingerprint(decision.apply("0")));
        assertThat(EventContent.fingerprint(decision.apply("0.5"))).isEqualTo(EventContent.fingerprint(decision.apply("5e-1")));
        assertThat(EventContent.fingerprint(decision.apply("0.5"))).isNotEqualTo(EventContent.fingerprint(decision.apply("0")));
    }
}

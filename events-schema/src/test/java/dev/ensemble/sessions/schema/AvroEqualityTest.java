package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunStatusChanged;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link AvroEquality} agrees with comparing the binary encodings, on records with Instants, unions, arrays and maps. */
class AvroEqualityTest {
    private static final AvroSerde<Event> SERDE = AvroSerde.of(Event.class);

    /** The samples, a decoded copy of each, and copies with one value changed at each level. */
    private static List<Event> values() {
        List<Event> out = new ArrayList<>();
        for (Event e : Samples.all()) {
            out.add(e);
            out.add(SERDE.decode(SERDE.encode(e))); // equal value, other objects (and String vs decoded strings)
            Event later = SERDE.decode(SERDE.encode(e));
            later.setOccurredAt(e.getOccurredAt().plusMillis(1)); // an Instant at the top
            out.add(later);
        }
        Event done = Samples.all().get(2);
        Event otherFiles = SERDE.decode(SERDE.encode(done));
        ((RunStatusChanged) otherFiles.getPayload()).setFilesChanged(List.of("b.java")); // an array element in a union branch
        out.add(otherFiles);
        Event noSummary = SERDE.decode(SERDE.encode(done));
        ((RunStatusChanged) noSummary.getPayload()).setReportSummary(null); // a union's branch
        out.add(noSummary);
        Event computer = Samples.all().get(3);
        Event otherCapability = SERDE.decode(SERDE.encode(computer));
        ((dev.ensemble.sessions.events.ComputerStatus) otherCapability.getPayload()).setCapabilities(Map.of("sessionDelete", 2)); // a map value
        out.add(otherCapability);
        Event claim = Samples.all().get(0);
        Event scheduled = SERDE.decode(SERDE.encode(claim));
        ((dev.ensemble.sessions.events.RunClaimed) scheduled.getPayload()).setNextRunAt(Instant.parse("2026-11-03T09:00:00Z"));
        out.add(scheduled); // a nullable Instant, present
        Event scheduledCopy = SERDE.decode(SERDE.encode(scheduled));
        out.add(scheduledCopy);
        Event scheduledLater = SERDE.decode(SERDE.encode(scheduled));
        ((dev.ensemble.sessions.events.RunClaimed) scheduledLater.getPayload()).setNextRunAt(Instant.parse("2026-11-03T09:00:00.001Z"));
        out.add(scheduledLater);
        return out;
    }

    @Test
    void equalExactlyWhenTheEncodingsAreEqual() {
        List<Event> vs = values();
        int equalPairs = 0;
        for (Event a : vs) {
            for (Event b : vs) {
                boolean encoded = Arrays.equals(SERDE.encode(a), SERDE.encode(b));
                assertThat(AvroEquality.equalBut(a, b, null)).as("%s vs %s", a, b).isEqualTo(encoded);
                if (encoded && a != b) equalPairs++;
            }
        }
        assertThat(equalPairs).as("decoded copies compare equal").isGreaterThanOrEqualTo(Samples.all().size() * 2);
    }

    @Test
    void theIgnoredTopLevelFieldIsNotCompared() {
        Event a = Samples.all().get(0);
        Event b = SERDE.decode(SERDE.encode(a));
        b.setRecordedAt(Instant.parse("2030-01-01T00:00:00Z"));
        assertThat(AvroEquality.equalBut(a, b, null)).isFalse();
        assertThat(AvroEquality.equalBut(a, b, "recordedAt")).isTrue();
        assertThat(AvroEquality.equalBut(a, b, "occurredAt")).isFalse();
    }
}

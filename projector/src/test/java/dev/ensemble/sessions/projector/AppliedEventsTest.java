package dev.ensemble.sessions.projector;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A run's applied eventIds ({@link AppliedEvents.RunEventIds}): arrival order, no repeats, below and beyond its hash index. */
class AppliedEventsTest {
    @Test
    void idsKeepTheirArrivalOrderWithoutRepeatsAcrossTheIndexThreshold() {
        AppliedEvents.RunEventIds ids = new AppliedEvents.RunEventIds();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 3 * AppliedEvents.RunEventIds.INDEXED_FROM; i++) {
            String id = "e-" + i;
            assertThat(ids.add(id)).as("new id %s", id).isTrue();
            expected.add(id);
            for (int j = 0; j <= i; j += 7) {
                assertThat(ids.add("e-" + j)).as("repeat of e-%d after %d ids", j, i + 1).isFalse();
                assertThat(ids.contains("e-" + j)).isTrue();
            }
            assertThat(ids.contains("e-" + (i + 1))).isFalse();
        }
        assertThat(ids.ids()).containsExactlyElementsOf(expected);

        byte[] bytes = AppliedEvents.RunEventIds.SERDE.serializer().serialize("t", ids);
        AppliedEvents.RunEventIds back = AppliedEvents.RunEventIds.SERDE.deserializer().deserialize("t", bytes);
        assertThat(back.ids()).containsExactlyElementsOf(expected);
        assertThat(back.add("e-5")).isFalse();
        assertThat(back.add("e-new")).isTrue();
        assertThat(AppliedEvents.RunEventIds.SERDE.deserializer().deserialize("t", new byte[0]).ids()).isEmpty();
    }
}

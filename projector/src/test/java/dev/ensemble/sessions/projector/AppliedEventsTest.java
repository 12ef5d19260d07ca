package dev.ensemble.sessions.projector;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A run's applied eventIds ({@link AppliedEvents.RunEventIds}): arrival order, no repeats, for short and long runs. */
class AppliedEventsTest {
    @Test
    void idsKeepTheirArrivalOrderWithoutRepeats() {
        AppliedEvents.RunEventIds ids = new AppliedEvents.RunEventIds();
        List<String> expected = new ArrayList<>();
        java.util.Random rnd = new java.util.Random(7);
        for (int i = 0; i < 48; i++) { // beyond the first array of 16
            String id = id(i);
            assertThat(ids.add(id)).as("new id %s", id).isTrue();
            expected.add(id);
            for (int j = 0; j <= i; j += 1 + rnd.nextInt(7)) {
                assertThat(ids.add(id(j))).as("repeat of %s after %d ids", id(j), i + 1).isFalse();
                assertThat(ids.contains(id(j))).isTrue();
            }
            assertThat(ids.contains(id(i + 1))).isFalse();
            String upper = id(i).toUpperCase(java.util.Locale.ROOT);
            assertThat(ids.contains(upper)).as("%s: held only as itself, not as the same UUID", upper).isEqualTo(expected.contains(upper));
        }
        assertThat(ids.ids()).containsExactlyElementsOf(expected);

        byte[] bytes = AppliedEvents.RunEventIds.SERDE.serializer().serialize("t", ids);
        AppliedEvents.RunEventIds back = AppliedEvents.RunEventIds.SERDE.deserializer().deserialize("t", bytes);
        assertThat(back.ids()).containsExactlyElementsOf(expected);
        assertThat(back.add(id(5))).isFalse();
        assertThat(back.add("e-new")).isTrue();
        byte[] none = AppliedEvents.RunEventIds.SERDE.serializer().serialize("t", new AppliedEvents.RunEventIds());
        assertThat(none).hasSize(1);
        assertThat(AppliedEvents.RunEventIds.SERDE.deserializer().deserialize("t", none).ids()).isEmpty();
        assertThat(bytes.length).as("canonical UUIDs in 17 bytes each, not 37 characters").isLessThan(String.join("\n", expected).length());
    }

    /** Ids of every form: UUIDs as producers write them, their uppercase form, and any other string. */
    private static String id(int i) {
        String uuid = new java.util.UUID(0x0b4f3c1e2a514c3eL + i * 31L, 0x9d5f000000000000L | i).toString();
        return switch (i % 4) {
            case 0, 1 -> uuid;
            case 2 -> uuid.toUpperCase(java.util.Locale.ROOT);
            default -> "e-" + i;
        };
    }

    @Test
    void onlyTheCanonicalUuidFormIsHeldAsNumbers() {
        assertThat(AppliedEvents.RunEventIds.isUuid("0b4f3c1e-2a51-4c3e-9d5f-000000000001")).isTrue();
        assertThat(AppliedEvents.RunEventIds.isUuid("0B4F3C1E-2A51-4C3E-9D5F-000000000001")).isFalse();
        assertThat(AppliedEvents.RunEventIds.isUuid("0b4f3c1e2a514c3e9d5f000000000001")).isFalse();
        assertThat(AppliedEvents.RunEventIds.isUuid("0b4f3c1e-2a51-4c3e-9d5f-00000000000g")).isFalse();
        AppliedEvents.RunEventIds ids = new AppliedEvents.RunEventIds();
        ids.add("0b4f3c1e-2a51-4c3e-9d5f-000000000001");
        ids.add("0B4F3C1E-2A51-4C3E-9D5F-000000000001");
        assertThat(ids.ids()).containsExactly("0b4f3c1e-2a51-4c3e-9d5f-000000000001", "0B4F3C1E-2A51-4C3E-9D5F-000000000001");
    }
}

package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.TaskFacts;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Example;
import org.apache.kafka.common.errors.SerializationException;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A failed encoding never affects another record (issue 14, item 1): the serde reuses a thread's encoder and buffer,
 * and a write that fails half-way must leave nothing of itself in them.
 */
class AvroSerdeIsolationTest {
    /** One encoding: a valid event, or one whose writing fails part-way (after some of its bytes are written). */
    record Step(Event event, boolean fails) {
    }

    @Property(tries = 200)
    void anyInterleavingOfFailingAndValidEncodesGivesTheBytesOfAFreshSerde(@ForAll("steps") List<Step> steps) throws Exception {
        List<Event> valid = steps.stream().filter(s -> !s.fails()).map(Step::event).toList();
        List<byte[]> expected = onFreshThread(valid);
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        List<byte[]> actual = new ArrayList<>();
        for (Step s : steps) {
            if (s.fails()) {
                assertThatThrownBy(() -> serde.encode(s.event())).isInstanceOf(SerializationException.class);
            } else {
                actual.add(serde.encode(s.event()));
            }
        }
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < actual.size(); i++) {
            assertThat(actual.get(i)).as("valid event %d", i).isEqualTo(expected.get(i));
            assertThat(serde.decode(actual.get(i))).isEqualTo(valid.get(i));
            // and what Avro's own single-object encoder writes
            assertThat(actual.get(i)).isEqualTo(Event.getEncoder().encode(valid.get(i)).array());
        }
    }

    @Example
    void anEventAfterAnInstantOutOfRangeIsWrittenWhole() {
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        Event good = event("good", "Fix the flaky test", Instant.parse("2026-11-02T09:00:00Z"));
        byte[] before = serde.encode(good);
        Event bad = event("bad", "other account's secret", Instant.parse("+1000000000-01-01T00:00:00Z"));
        assertThatThrownBy(() -> serde.encode(bad)).isInstanceOf(SerializationException.class).hasMessageContaining("long overflow");
        assertThat(serde.encode(good)).isEqualTo(before);
    }

    @Example
    void anEventWhosePayloadCannotBeWrittenIsRefusedWithTheFieldNamed() {
        Event e = event("labels", "Fix the flaky test", Instant.parse("2026-11-02T09:00:00Z"));
        ((RunClaimed) e.getPayload()).getTask().setLabels(java.util.Arrays.asList("a", null)); // written by TaskFacts' own encoder
        assertThatThrownBy(() -> AvroSerde.of(Event.class).encode(e)).isInstanceOf(SerializationException.class)
                .hasMessageContaining("labels");
    }

    @Example
    void aViewWrittenByItsCustomEncoderFailsWithTheFieldNamedAndLeavesNothingBehind() {
        AvroSerde<dev.ensemble.sessions.views.DeletionState> serde = AvroSerde.of(dev.ensemble.sessions.views.DeletionState.class);
        dev.ensemble.sessions.views.DeletionState good = dev.ensemble.sessions.views.DeletionState.newBuilder().setSessionId("job-1")
                .setRequestIds(new ArrayList<>(List.of("r-1"))).setAcceptedAt(Instant.parse("2026-11-02T09:00:00Z")).build();
        byte[] before = serde.encode(good);
        dev.ensemble.sessions.views.DeletionState bad = dev.ensemble.sessions.views.DeletionState.newBuilder(good).build();
        bad.setRequestIds(new ArrayList<>(java.util.Arrays.asList("r-1", null))); // a required string left null, after other bytes
        assertThatThrownBy(() -> serde.encode(bad)).isInstanceOf(SerializationException.class).hasMessageContaining("requestIds");
        assertThat(serde.encode(good)).isEqualTo(before);
        assertThat(serde.decode(before)).isEqualTo(good);
    }

    /** Encodes the events with a new serde on a thread that has never encoded anything. */
    private static List<byte[]> onFreshThread(List<Event> events) throws Exception {
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            return one.submit(() -> {
                AvroSerde<Event> fresh = AvroSerde.of(Event.class);
                return events.stream().map(fresh::encode).toList();
            }).get();
        } finally {
            one.shutdownNow();
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<String> text = Arbitraries.strings().withCharRange(' ', '~').withChars("é€\n").ofMinLength(0).ofMaxLength(3000)
                .map(t -> t.replace("~", "😀")); // whole surrogate pairs: a lone one is not text (the intake refuses it)
        Arbitrary<Instant> okTime = Arbitraries.longs().between(946_684_800_000L, 4_102_444_800_000L).map(Instant::ofEpochMilli);
        Arbitrary<Step> valid = Combinators.combine(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(40), text, okTime)
                .as((id, title, at) -> new Step(event(id, title, at), false));
        Arbitrary<Step> badTime = Combinators.combine(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(40), text,
                        Arbitraries.of(Instant.MAX, Instant.MIN, Instant.parse("+1000000000-01-01T00:00:00Z")))
                .as((id, title, at) -> new Step(event(id, title, at), true));
        // the payload fails after the envelope and a title of any length are written: a required field left null
        Arbitrary<Step> nullInPayload = Combinators.combine(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(40), text)
                .as((id, title) -> {
                    Event e = event(id, title, Instant.parse("2026-11-02T09:00:00Z"));
                    ((RunClaimed) e.getPayload()).getTask().setLabels(java.util.Arrays.asList("a", null));
                    return new Step(e, true);
                });
        Arbitrary<Step> report = Combinators.combine(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(40), text,
                Arbitraries.longs().between(0, Long.MAX_VALUE)).as((id, summary, tokens) -> new Step(Event.newBuilder().setEventId(id)
                .setAccount("acct-b").setSpace("local:pc").setOccurredAt(Instant.parse("2026-11-02T09:00:00Z"))
                .setRecordedAt(Instant.parse("2026-11-02T09:00:01Z")).setSource("computer:pc")
                .setPayload(RunStatusChanged.newBuilder().setRunId("r-" + id).setStatus(RunStatus.DONE).setReportSummary(summary)
                        .setTokens(tokens).build()).build(), false));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, valid), net.jqwik.api.Tuple.of(2, report),
                net.jqwik.api.Tuple.of(2, badTime), net.jqwik.api.Tuple.of(2, nullInPayload)).list().ofMinSize(1).ofMaxSize(12);
    }

    static Event event(String id, String title, Instant occurredAt) {
        return Event.newBuilder().setEventId(id).setAccount("acct-a").setSpace("local:pc").setOccurredAt(occurredAt)
                .setRecordedAt(Instant.parse("2026-11-02T09:00:01Z")).setSource("computer:pc")
                .setPayload(RunClaimed.newBuilder().setRunId("run-" + id).setComputerId("pc").setAgent("codex")
                        .setTask(TaskFacts.newBuilder().setTitle(title).setLabels(new ArrayList<>(List.of("x"))).build()).build())
                .build();
    }
}
